# memnode — see `make help`.
SHELL := bash
.SHELLFLAGS := -o pipefail -euc
.DEFAULT_GOAL := help

GO      ?= go
# nomsgpack drops gin's msgpack binding (ugorji/go, ~6 MB of binary we never use).
TAGS    := sqlite_fts5,nomsgpack
BIN     := bin/memnode
HOOKBIN := bin/memnode-hook
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
# The LoCoMo archive the retrieval benchmark reads (never copied into the repository).
MEMNODE_LOCOMO ?= $(abspath ../shared/data/locomo/locomo10.zip)
# Packages whose code is concurrent: always tested under the race detector.
RACE_PKGS := ./replica/... ./node/... ./pipeline/... ./feed/... ./api/... ./hooks/... ./ai/... ./sync/... ./team/... ./search/... ./embed/... ./viewer/... ./contextfile/... ./mcpserver/...

.PHONY: help build run test race bench bench-ab bench-anchor bench-viewer lint tidy clean rqlited

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-8s %s\n", $$1, $$2}'

build: ## build bin/memnode and the lean hook binary bin/memnode-hook
	$(GO) build -tags $(TAGS) -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/memnode
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(HOOKBIN) ./cmd/memnode-hook

run: build ## build and run the node in the foreground on its embedded defaults (~/.memnode)
	./$(BIN) run

test: lint ## vet, unit + integration + real-binary tests, then the race detector on concurrent packages
	$(GO) test -tags $(TAGS) -count=1 -timeout 20m ./...
	$(GO) test -tags $(TAGS) -race -count=1 -timeout 20m $(RACE_PKGS)

# rqlited for team memory (its own module in tools/rqlited, cgo, ~2–3 min cold): rebuilt only
# when missing or when the tools module changed. Team tests build it themselves when missing.
RQLITED := bin/rqlited
rqlited: $(RQLITED) ## build bin/rqlited (v8.43.4, from the Go module proxy) for team memory

$(RQLITED): tools/rqlited/go.mod tools/rqlited/go.sum
	cd tools/rqlited && $(GO) build -trimpath -o ../../$(RQLITED) github.com/rqlite/rqlite/v8/cmd/rqlited

race: ## only the race-detector run
	$(GO) test -tags $(TAGS) -race -count=1 -timeout 20m $(RACE_PKGS)

bench: build ## print the performance figures: package benchmarks, then the end-to-end harness (docs/BENCH.md)
	@echo "== hot paths (privacy, offline compressor, hook in-process, provider client)"
	$(GO) test -tags $(TAGS) -run '^$$' -bench . -benchmem -benchtime 1s ./privacy/ ./ai/ ./ai/llm/ ./hooks/
	@echo "== the node's side of context p50, search p50 and ingest to records, and a commit (CPU per op)"
	$(GO) test -tags $(TAGS) -run '^$$' -bench 'HTTP$$' -benchtime 2000x ./node/
	$(GO) test -tags $(TAGS) -run '^$$' -bench 'Context$$|Render$$' -benchmem -benchtime 2000x ./inject/
	$(GO) test -tags $(TAGS) -run '^$$' -bench 'ShortIDs|Commit$$' -benchtime 200x ./replica/
	@echo "== search latency at 10k / 100k observations, import speed"
	$(GO) test -tags $(TAGS) -run '^$$' -bench 'Search10k$$|Search100k$$' -benchtime 3000x -timeout 30m ./search/
	$(GO) test -tags $(TAGS) -run '^$$' -bench Import -benchtime 3x ./importer/
	$(GO) test -tags $(TAGS) -run '^$$' -bench 'HybridSearch|VectorModeSearch' -benchtime 300x -timeout 30m ./search/
	@echo "== retrieval quality: LoCoMo evidence retrieval and the coding-memory set, beside the plain baselines"
	@if [ -f "$(MEMNODE_LOCOMO)" ]; then \
	  MEMNODE_LOCOMO="$(MEMNODE_LOCOMO)" $(GO) test -tags $(TAGS) -run '^$$' -bench 'LoCoMo|CodingMemory' -benchtime 1x -timeout 30m ./search/recall/; \
	else echo "no LoCoMo archive at $(MEMNODE_LOCOMO) (set MEMNODE_LOCOMO): coding-memory set only"; \
	  $(GO) test -tags $(TAGS) -run '^$$' -bench 'CodingMemory' -benchtime 1x ./search/recall/; fi
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

bench-viewer: ## the viewer's figures in a real Chromium: first paint of the feed with 10,000 records, the feed under 50 records/s
	$(GO) test -tags $(TAGS) -count=1 -run 'TestViewerInBrowser/first_paint|TestViewerLiveBurst' -v ./cmd/memnode/ | grep -E 'first card|records in|per record|DOM holds|^(---|ok|FAIL)'

bench-ab: build ## A/B of the end-to-end figures against an older binary: make bench-ab BASE=path/to/old/memnode [ROUNDS=3]
	$(GO) run -tags $(TAGS) ./cmd/memnode-bench -base $(BASE) -bin $(BIN) -rounds $(or $(ROUNDS),3) -idle-long 0

bench-anchor: build ## the end-to-end harness side by side with the real claude-mem (installs it from npm)
	$(GO) run -tags $(TAGS) ./cmd/memnode-bench -bin $(BIN) -anchor ../shared/bench/claude-mem-anchor.sh

lint: ## gofmt and go vet
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null; git ls-files -o --exclude-standard '*.go' 2>/dev/null)); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet -tags $(TAGS) ./...

tidy: ## go mod tidy
	$(GO) mod tidy

clean: ## remove build output
	rm -rf bin bench.out
