# memnode — see `make help`.
SHELL := bash
.SHELLFLAGS := -o pipefail -euc
.DEFAULT_GOAL := help

GO      ?= go
TAGS    := sqlite_fts5
BIN     := bin/memnode
HOOKBIN := bin/memnode-hook
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
# Packages whose code is concurrent: always tested under the race detector.
RACE_PKGS := ./replica/... ./node/... ./api/... ./hooks/... ./ai/... ./sync/... ./search/... ./embed/...

.PHONY: help build run test race bench lint tidy clean

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

race: ## only the race-detector run
	$(GO) test -tags $(TAGS) -race -count=1 -timeout 20m $(RACE_PKGS)

bench: build ## print the performance figures (go benchmarks + end-to-end measurements)
	$(GO) test -tags $(TAGS) -run '^$$' -bench . -benchmem -benchtime 1x -timeout 30m ./... | tee bench.out
	$(GO) run -tags $(TAGS) ./cmd/memnode-bench -bin $(BIN)

lint: ## gofmt and go vet
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null; git ls-files -o --exclude-standard '*.go' 2>/dev/null)); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet -tags $(TAGS) ./...

tidy: ## go mod tidy
	$(GO) mod tidy

clean: ## remove build output
	rm -rf bin bench.out
