# memnode — see `make help`.
SHELL := bash
.SHELLFLAGS := -o pipefail -euc
.DEFAULT_GOAL := help

GO      ?= go
# nomsgpack drops gin's msgpack binding (ugorji/go, ~6 MB of binary we never use).
TAGS    := sqlite_fts5,nomsgpack
# bin/memnode is the lean client users and agents run (-tags memnode_lean, no cgo: no SQLite,
# libp2p, gin or spago: a `memnode search` skips their package inits); bin/memnoded, the same
# package built without that tag, runs the node and the commands that need those (memnode
# execs it for them); bin/memnode-hook is the lean hook binary.
BIN       := bin/memnode
DAEMONBIN := $(dir $(BIN))memnoded
HOOKBIN   := bin/memnode-hook
LEANTAGS  := memnode_lean,nomsgpack
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
# The commit's time, not the clock's: the same commit builds the same binaries.
DATE    ?= $(shell TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ 2>/dev/null || echo unknown)
LDFLAGS  = -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT) -X main.date=$(DATE)
# The LoCoMo archive the retrieval benchmark reads (never copied into the repository).
MEMNODE_LOCOMO ?= $(abspath ../shared/data/locomo/locomo10.zip)
# The coding history (caddy and hono commits as memnode records) the coding benchmark imports.
MEMNODE_CODING_HISTORY ?= $(abspath ../shared/data/coding-history/corpus.jsonl.gz)
# The release workflow's linter (make lint).
ACTIONLINT := v1.7.12
# staticcheck (make lint): 0.8.2 = 2026.2.2, the release that knows go1.26. Installed once from
# the module proxy into a cache dir of its own (kept between runs, like the Go build cache).
STATICCHECK     := v0.8.2
TOOLS_CACHE     ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/memnode-tools
STATICCHECK_BIN := $(TOOLS_CACHE)/staticcheck-$(STATICCHECK)/staticcheck
# Packages whose code is concurrent: always tested under the race detector.
RACE_PKGS := ./replica/... ./node/... ./pipeline/... ./feed/... ./api/... ./hooks/... ./ai/... ./sync/... ./team/... ./search/... ./embed/... ./viewer/... ./contextfile/... ./mcpserver/...
# make test runs a package of RACE_PKGS only under the race detector — the same tests with the
# same assertions, so a plain run of them again tested nothing new (team's was 42 CPU-s, node's
# 30 s of wall time) — unless its tests differ without the detector: those are PLAIN_TOO and run
# both ways. replica's properties try rapid's 100 cases plainly, 20 under -race; sync's 20,000-op
# catch-up (TestDeadPathMidCatchUpFallsBackToAnotherPeer) runs plainly only and its compaction
# test at full size. internal/archtest fails when a package of RACE_PKGS has a `//go:build !race`
# test file (the way a test tells the runs apart) and is not in PLAIN_TOO.
PLAIN_TOO := ./replica/... ./sync/...
# What make test runs without the race detector: every package but those of RACE_PKGS, and PLAIN_TOO.
PLAIN_PKGS = $$({ $(GO) list -tags $(TAGS) ./... | grep -vxF -f <($(GO) list -tags $(TAGS) $(RACE_PKGS)); $(GO) list -tags $(TAGS) $(PLAIN_TOO); } | sort -u)

.PHONY: help build run test test-short race bench bench-scale bench-ab bench-anchor bench-viewer lint tidy clean rqlited dist dist-platform arm64 npm release-builds

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-8s %s\n", $$1, $$2}'

build: ## build bin/memnode (the lean client), bin/memnoded (the daemon) and the lean hook binary bin/memnode-hook
	@if [ ! -x $(BIN) ] && [ -z "$$(ls -A "$$($(GO) env GOCACHE)" 2>/dev/null | head -1)" ]; then \
	  echo "== first build of memnode: Go downloads the modules, then compiles cgo SQLite, libp2p and cybertron."; \
	  echo "== This takes 3-6 minutes once (about 1 minute on a fast 8-core machine); later builds take seconds."; \
	  echo "== (No toolchain wanted? A release archive: README, Install.)"; \
	elif [ ! -x $(DAEMONBIN) ]; then echo "== building bin/memnoded (a minute or two when the build cache is cold; seconds when warm)"; fi
	@# -v lists each package as it compiles: progress instead of minutes of silence.
	$(GO) build -v -tags $(TAGS) -trimpath -ldflags '$(LDFLAGS)' -o $(DAEMONBIN) ./cmd/memnode
	CGO_ENABLED=0 $(GO) build -tags $(LEANTAGS) -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/memnode
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(HOOKBIN) ./cmd/memnode-hook

run: build ## build and run the node in the foreground on its embedded defaults (~/.memnode)
	./$(BIN) run

test: lint release-builds ## vet, unit + integration + real-binary tests, then the race detector on concurrent packages (each test at least once)
	$(GO) test -tags $(TAGS) -count=1 -timeout 20m $(PLAIN_PKGS)
	$(GO) test -tags $(TAGS) -race -count=1 -timeout 20m $(RACE_PKGS)

# rqlited for team memory (its own module in tools/rqlited, cgo, ~2–3 min cold): rebuilt only
# when missing or when the tools module changed. Team tests build it themselves when missing.
RQLITED := bin/rqlited
rqlited: $(RQLITED) ## build bin/rqlited (v8.43.4, from the Go module proxy) for team memory

$(RQLITED): tools/rqlited/go.mod tools/rqlited/go.sum
	cd tools/rqlited && $(GO) build -trimpath -o ../../$(RQLITED) github.com/rqlite/rqlite/v8/cmd/rqlited

# Release archives (docs: README "Install"): memnode_<version>_<os>_<arch>.tar.gz with memnode,
# memnoded, memnode-hook, LICENSE and a short README, and SHA256SUMS over every archive in dist/. Linux here
# (arm64 cgo cross-compiled with Debian's gcc-aarch64-linux-gnu); darwin on macOS runners
# (.github/workflows/release.yml runs `make dist-platform` there). The version is semver without
# the "v" (a commit without a tag: 0.0.0-dev.g<sha>). Go's build cache (GOCACHE) makes a rebuild
# of an unchanged tree a link check: cache it in CI.
DIST_VERSION := $(shell echo '$(VERSION)' | sed -E 's/^v//; /^[0-9]+\.[0-9]+\.[0-9]+/!s/^/0.0.0-dev.g/')
DIST_LDFLAGS  = -s -w -X main.version=$(DIST_VERSION) -X main.commit=$(COMMIT) -X main.date=$(DATE)
DIST_LINUX   := linux_amd64 linux_arm64
# The newest glibc symbol version a Linux memnoded may need (memnode and memnode-hook are static); make dist
# fails when a build needs a newer one. 2.34 = Debian 12, Ubuntu 22.04, RHEL 9.
GLIBC_MAX    := 2.34
CC_linux_amd64  ?= gcc
CC_linux_arm64  ?= aarch64-linux-gnu-gcc
CC_darwin_arm64 ?= cc
CC_darwin_amd64 ?= cc
OBJDUMP_linux_amd64 ?= objdump
OBJDUMP_linux_arm64 ?= aarch64-linux-gnu-objdump

# bin/<os>_<arch>/: the binaries of one platform. `go build` relinks only when a source changed.
bin/%/memnode: FORCE
	@p=$*; echo "== memnode for $${p%_*}/$${p#*_} (a cold cross build takes minutes: cgo SQLite, libp2p, cybertron)"
	GOOS=$(word 1,$(subst _, ,$*)) GOARCH=$(word 2,$(subst _, ,$*)) CGO_ENABLED=1 CC=$(CC_$*) \
	  $(GO) build -tags $(TAGS) -trimpath -ldflags '$(DIST_LDFLAGS)' -o $(@D)/memnoded ./cmd/memnode
	GOOS=$(word 1,$(subst _, ,$*)) GOARCH=$(word 2,$(subst _, ,$*)) CGO_ENABLED=0 \
	  $(GO) build -tags $(LEANTAGS) -trimpath -ldflags '$(DIST_LDFLAGS)' -o $@ ./cmd/memnode
	GOOS=$(word 1,$(subst _, ,$*)) GOARCH=$(word 2,$(subst _, ,$*)) CGO_ENABLED=0 \
	  $(GO) build -trimpath -ldflags '$(DIST_LDFLAGS)' -o $(@D)/memnode-hook ./cmd/memnode-hook
FORCE:

# make test's release builds: the arm64 binaries (TestArm64BinariesUnderQemu) and the npm
# tarballs (TestNpmInstallWithoutToolchain). Without the cross compiler only linux/amd64 is
# built and the arm64 test skips, saying why (with MEMNODE_CI=1 it is an error).
release-builds:
	@if command -v $(CC_linux_arm64) >/dev/null; then $(MAKE) --no-print-directory arm64 npm; \
	elif [ "$${MEMNODE_CI:-}" = 1 ]; then echo "no $(CC_linux_arm64): apt-get install gcc-aarch64-linux-gnu (MEMNODE_CI=1)"; exit 1; \
	else echo "== no $(CC_linux_arm64) (apt-get install gcc-aarch64-linux-gnu): no arm64 build, TestArm64BinariesUnderQemu will skip"; \
	  $(MAKE) --no-print-directory dist npm DIST_LINUX=linux_amd64; fi

arm64: bin/linux_arm64/memnode ## cross-build bin/linux_arm64/ (make test runs these under qemu-aarch64-static)

dist-platform: bin/$(PLATFORM)/memnode ## one archive: make dist-platform PLATFORM=darwin_arm64 (on that OS for darwin)
	@[ -n "$(PLATFORM)" ] || { echo "usage: make dist-platform PLATFORM=<os>_<arch>"; exit 2; }
	@if [ "$(PLATFORM)" != "$${PLATFORM#linux_}" ]; then \
	  need=$$($(OBJDUMP_$(PLATFORM)) -T bin/$(PLATFORM)/memnoded | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -Vu | tail -1); \
	  echo "== bin/$(PLATFORM)/memnoded needs glibc >= $$need (allowed: $(GLIBC_MAX))"; \
	  [ "$$(printf '%s\n' "$$need" "$(GLIBC_MAX)" | sort -V | tail -1)" = "$(GLIBC_MAX)" ] || { echo "glibc $$need is newer than $(GLIBC_MAX)"; exit 1; }; \
	  for b in memnode memnode-hook; do if $(OBJDUMP_$(PLATFORM)) -p bin/$(PLATFORM)/$$b | grep -q NEEDED; then echo "$$b is not static"; exit 1; fi; done; \
	fi
	@name=memnode_$(DIST_VERSION)_$(PLATFORM); stage=dist/.stage/$$name; rm -rf $$stage; mkdir -p $$stage; \
	  cp bin/$(PLATFORM)/memnode bin/$(PLATFORM)/memnoded bin/$(PLATFORM)/memnode-hook $$stage/; \
	  cp packaging/archive/README.md $$stage/README.md; \
	  cp LICENSE $$stage/; \
	  if tar --version 2>/dev/null | grep -q GNU; then tf="--sort=name --mtime=$(DATE) --owner=0 --group=0 --numeric-owner"; \
	  else tf="--uid 0 --gid 0"; fi; \
	  tar $$tf -C $$stage -cf - memnode memnoded memnode-hook README.md LICENSE | gzip -n9 > dist/$$name.tar.gz; \
	  rm -rf $$stage; echo "== dist/$$name.tar.gz"

dist: ## release archives for linux/amd64 and linux/arm64 in dist/, and SHA256SUMS (darwin ones too when present)
	@start=$$(date +%s); for p in $(DIST_LINUX); do $(MAKE) --no-print-directory dist-platform PLATFORM=$$p; done; \
	  rm -f dist/SHA256SUMS; (cd dist && sha256sum memnode_$(DIST_VERSION)_*.tar.gz > SHA256SUMS && sha256sum -c --quiet SHA256SUMS); \
	  echo "== dist/SHA256SUMS ($$(wc -l < dist/SHA256SUMS) archives, verified) in $$(( $$(date +%s) - start )) s"; cat dist/SHA256SUMS

npm: ## npm package tarballs in dist/npm/ from the archives in dist/ (memnode + @memnode/<os>-<cpu>; darwin ones when their archives are there)
	@ls dist/memnode_$(DIST_VERSION)_*.tar.gz >/dev/null 2>&1 || $(MAKE) --no-print-directory dist
	node packaging/npm/build.js $(DIST_VERSION) dist

# What -short leaves out: every real-process test (e2e/..., not even linked here; the tests
# of other packages that start memnode or rqlited skip), and the few CPU-heavy unit tests that
# say so when they skip (scrypt key derivation, 5 MB payload sweeps, generated scale datasets,
# a body over the limit to every route, the sampled Mann-Whitney p), and replica's rapid
# properties try 10 cases each instead of 100 (replica/main_test.go). make test runs them all.
test-short: ## the inner loop (under 2 min warm): go test -short without e2e/: no real memnode or rqlited processes
	$(GO) test -tags $(TAGS) -short -count=1 -timeout 10m $$($(GO) list -tags $(TAGS) ./... | grep -v '/e2e/')

race: ## only the race-detector run
	$(GO) test -tags $(TAGS) -race -count=1 -timeout 20m $(RACE_PKGS)

bench: build ## print the performance figures: package benchmarks, then the end-to-end harness (docs/BENCH.md)
	@echo "== hot paths (privacy: RedactPerKiB is µs per KiB of tool output, budget 3.2-4.1 clean; offline compressor, hook in-process, provider client)"
	$(GO) test -tags $(TAGS) -run '^$$' -bench . -benchmem -benchtime 1s ./privacy/ ./ai/ ./ai/llm/ ./hooks/
	@echo "== the node's side of context p50, search p50 and ingest to records, and a commit (CPU per op)"
	$(GO) test -tags $(TAGS) -run '^$$' -bench 'HTTP$$' -benchtime 2000x ./node/
	$(GO) test -tags $(TAGS) -run '^$$' -bench 'Context$$|Render$$' -benchmem -benchtime 2000x ./inject/
	$(GO) test -tags $(TAGS) -run '^$$' -bench 'ShortIDs|Commit$$' -benchtime 200x ./replica/
	@echo "== search latency at 10k / 100k observations, import speed"
	$(GO) test -tags $(TAGS) -run '^$$' -bench 'Search10k$$|Search100k$$' -benchtime 3000x -timeout 30m ./search/
	$(GO) test -tags $(TAGS) -run '^$$' -bench Import -benchtime 3x ./importer/
	$(GO) test -tags $(TAGS) -run '^$$' -bench 'HybridSearch|VectorModeSearch' -benchtime 300x -timeout 30m ./search/
	@echo "== retrieval quality: LoCoMo evidence retrieval, the coding history and the coding-memory set, beside the plain baselines"
	@[ -f "$(MEMNODE_LOCOMO)" ] || echo "no LoCoMo archive at $(MEMNODE_LOCOMO) (set MEMNODE_LOCOMO): its table is skipped"
	@[ -f "$(MEMNODE_CODING_HISTORY)" ] || echo "no coding history at $(MEMNODE_CODING_HISTORY) (set MEMNODE_CODING_HISTORY): its table is skipped"
	MEMNODE_LOCOMO="$(MEMNODE_LOCOMO)" MEMNODE_CODING_HISTORY="$(MEMNODE_CODING_HISTORY)" \
	  $(GO) test -tags $(TAGS) -run '^$$' -bench 'LoCoMo|CodingHistory|CodingMemory' -benchtime 1x -timeout 30m ./search/recall/
	@echo "== device sync: 10k ops A→B, 5-node heal, op-log write overhead, a new device's catch-up from the op-log, from the compacted op-log and from a snapshot"
	$(GO) test -tags $(TAGS) -run '^$$' -bench 'Replicate10k|Heal5|OpLogOverhead' -benchtime 3x -timeout 30m ./sync/
	$(GO) test -tags $(TAGS) -run '^$$' -bench 'CatchUp' -benchtime 1x -timeout 30m ./sync/
	@echo "== embeddings: encode speed, vector and hybrid search"
	$(GO) test -tags $(TAGS) -run '^$$' -bench 'Embed(Tiny|MiniLMSized|QueryMiniLMSized)$$|Vector|Hybrid|Cosine' -benchtime 20x -cpu 1,2 -timeout 30m ./embed/
	$(GO) test -tags $(TAGS) -run '^$$' -bench 'Encode1000MiniLMSized$$' -benchtime 1x -cpu 2 -timeout 30m ./embed/
	$(GO) test -tags $(TAGS) -run '^$$' -bench 'EmbedMiniLMSizedSpago$$' -benchtime 5x -cpu 2 -timeout 30m ./embed/
	@echo "== team memory on a real 3-node rqlite cluster: push, A→B latency, late-member catch-up (serial vs pipelined), search --team at 100k"
	$(MAKE) rqlited
	$(GO) test -tags $(TAGS) -run '^$$' -bench BenchmarkTeam -benchtime 1x -timeout 20m ./team/
	@echo "== end to end against the real binary (hooks, ingest, context, memory)"
	$(GO) run -tags $(TAGS) ./cmd/memnode-bench -bin $(BIN)

# The scale benchmark's sizes (make bench-scale SIZES=10k,100k for a quick run) and where its
# datasets are cached (generated and imported once per generator version).
SIZES ?= 10k,100k,1m
bench-scale: build ## issue 29's figures at 10k/100k/1M observations with the growth between sizes: make bench-scale [SIZES=10k,100k] [REIMPORT=1] [JOIN=none|100k] (docs/BENCH.md "Scale")
	$(GO) run -tags $(TAGS) ./cmd/memnode-bench -bin $(BIN) -scale $(SIZES) $(if $(REIMPORT),-reimport) $(if $(JOIN),-scale-join $(JOIN)) $(if $(SCALE_CACHE),-scale-cache $(SCALE_CACHE))

bench-viewer: ## the viewer's figures in a real Chromium: first paint of the feed with 10,000 records, the feed under 50 records/s
	$(GO) test -tags $(TAGS) -count=1 -run 'TestViewerInBrowser/first_paint|TestViewerLiveBurst' -v ./e2e/viewer/ | grep -E 'first card|records in|per record|DOM holds|^(---|ok|FAIL)'

bench-ab: build ## A/B of the end-to-end figures against an older binary: make bench-ab BASE=path/to/old/memnode [ROUNDS=3]
	$(GO) run -tags $(TAGS) ./cmd/memnode-bench -base $(BASE) -bin $(BIN) -rounds $(or $(ROUNDS),3) -idle-long 0

bench-anchor: build ## the end-to-end harness side by side with the real claude-mem (installs it from npm)
	$(GO) run -tags $(TAGS) ./cmd/memnode-bench -bin $(BIN) -anchor ../shared/bench/claude-mem-anchor.sh

$(STATICCHECK_BIN):
	mkdir -p $(@D)
	GOBIN=$(@D) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK)

lint: $(STATICCHECK_BIN) ## gofmt, go vet, staticcheck, a darwin compile check of every package, the release workflow's actionlint
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null; git ls-files -o --exclude-standard '*.go' 2>/dev/null)); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet -tags $(TAGS) ./...
	$(STATICCHECK_BIN) -tags $(TAGS) ./...
	@# The lean memnode is the same package with other files (cmd/memnode/daemon_exec.go).
	CGO_ENABLED=0 $(GO) vet -tags $(LEANTAGS) ./cmd/memnode
	CGO_ENABLED=0 $(STATICCHECK_BIN) -tags $(LEANTAGS) ./cmd/memnode
	@# macOS: no darwin C toolchain here, so cgo is off (go-sqlite3's stub; replica/sqliteerr_nocgo.go);
	@# the darwin-only files (keys' Keychain, localnet's LOCAL_PEERCRED) are type-checked and vetted.
	GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 $(GO) vet -tags $(TAGS) ./...
	GOOS=darwin GOARCH=amd64 CGO_ENABLED=0 $(GO) build -tags $(TAGS) ./...
	$(GO) run github.com/rhysd/actionlint/cmd/actionlint@$(ACTIONLINT) .github/workflows/*.yml

tidy: ## go mod tidy
	$(GO) mod tidy

clean: ## remove build output
	rm -rf bin bench.out dist
