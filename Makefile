# Reasonix build and test entry points. `make build` and `make test` are the
# two commands of the README's quick start.
GO       ?= go
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -s -w -X main.version=$(VERSION)
BIN      := bin/reasonix
PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64

.PHONY: build test bench cross fmt vet clean generate

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/reasonix

# test prints a line per package, every skipped test with its reason, and
# the whole output of whatever failed (internal/testreport reads go test's
# JSON); it fails when go test or the report does. It vets for Windows
# too, the platform that shares the least code with Linux: a Linux-only
# field or helper used from shared code or a test file fails here rather
# than at release (about a minute with a cold build cache).
test:
	$(GO) vet ./...
	GOOS=windows $(GO) vet ./...
	@mkdir -p bin && $(GO) build -o bin/testreport ./internal/testreport
	@{ $(GO) test -race -json ./...; echo $$? > bin/.test-status; } | bin/testreport; \
		report=$$?; status=$$(cat bin/.test-status); rm -f bin/.test-status; \
		[ "$$status" = 0 ] && [ "$$report" = 0 ]

# generate rewrites the tool argument schemas (schemas_gen.go) from the
# argument structs; `make test` fails when one is stale. `make build` uses
# the committed files and needs no generator.
SCHEMA_PKGS := ./tools/builtin ./tools/recall ./skills ./orchestrator
generate:
	$(GO) generate $(SCHEMA_PKGS)

# bench prints the figures the issues ask for (see docs/SPEC.md, "Figures").
bench: build
	@command -v rg >/dev/null 2>&1 || { echo "bench: installing ripgrep from Debian's packages for the grep comparison"; \
		SUDO=; [ "$$(id -u)" -ne 0 ] && SUDO=sudo; $$SUDO apt-get install -y -qq ripgrep >/dev/null 2>&1 || \
		echo "bench: could not install ripgrep; the grep comparison will be skipped"; }
	REASONIX_BENCH=1 REASONIX_BIN=$(CURDIR)/$(BIN) $(GO) test -p 1 -count=1 -run 'Bench|VsRipgrep|Efficiency' -v ./... 2>&1 | grep -E '^(bench|grep|gate|subagent|plan|version|startup|harness|first|tool|loop|prefix|memory|checkpoint|serve|tui|history|compaction|  )' || true
	$(GO) test -run '^$$' -bench . -benchmem ./agents ./internal/permission ./orchestrator ./providers/openai
	$(MAKE) --no-print-directory fuzz FUZZTIME=5s

# fuzz runs each fuzz target for FUZZTIME (a duration, or a count such as
# 5000x); go test -fuzz takes one target per run. A failing input is saved
# under the package's testdata/fuzz, where plain go test then replays it.
# Go 1.26 can end a duration-bounded run with a bare "context deadline
# exceeded" and no failing input (go.dev/issue/75804, fixed in Go 1.27);
# that is reported and not counted as a failure.
FUZZTIME ?= 10s
FUZZ_TARGETS := \
	internal/permission:FuzzShellAnalysis \
	internal/permission:FuzzShellOracle \
	internal/permission:FuzzParseRule \
	internal/permission:FuzzSuggestRoundTrip \
	tools/builtin:FuzzPatchAccess \
	tools/builtin:FuzzPatchRoundTrip \
	internal/repair:FuzzCloseJSON \
	internal/repair:FuzzScavenge \
	internal/flatten:FuzzNest
.PHONY: fuzz
fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg=./$${t%%:*}; name=$${t#*:}; \
		echo "$(GO) test -run '^$$' -fuzz '^$$name\$$' -fuzztime $(FUZZTIME) $$pkg"; \
		out=$$($(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) $$pkg 2>&1); rc=$$?; \
		echo "$$out" | grep -v '^fuzz: elapsed'; \
		if [ $$rc -ne 0 ]; then \
			if echo "$$out" | grep -q 'context deadline exceeded' && ! echo "$$out" | grep -q 'Failing input written'; then \
				echo "fuzz: $$name: spurious deadline failure (go.dev/issue/75804), ignored"; \
			else exit $$rc; fi; \
		fi; \
	done

cross:
	@for p in $(PLATFORMS); do \
		os=$${p%/*}; arch=$${p#*/}; ext=; [ $$os = windows ] && ext=.exe; \
		echo "building $$os/$$arch"; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags '$(LDFLAGS)' \
			-o dist/reasonix-$$os-$$arch$$ext ./cmd/reasonix || exit 1; \
	done

fmt:
	gofmt -w $$(git ls-files '*.go')

vet:
	$(GO) vet ./...

clean:
	rm -rf bin dist
