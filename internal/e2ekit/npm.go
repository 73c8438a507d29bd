package e2ekit

// NpmDir holds the tarballs `make npm` (a step of `make test`) builds from dist/.
const NpmDir = "../../dist/npm"
