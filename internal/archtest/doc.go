// Package archtest holds the test that keeps docs/ARCHITECTURE.md's package table true: every
// package of the module has a row, and each row's "depends on" column names exactly the
// module packages that package imports; the tests that keep the store contract a boundary
// (store_test.go: only node, cmd/* and the test kit import replica; pipeline, search, sync,
// importer and the embedding worker link no SQLite); and the test that keeps the repository holding
// source (files_test.go: no tracked file over 1 MB but data that must be binary, no built
// executable, one copy of each fixture); and the test that keeps make test running every test
// at least once (racepkgs_test.go: a package of RACE_PKGS whose tests differ without the race
// detector is in PLAIN_TOO).
package archtest
