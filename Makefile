# Reasonix build and test entry points. `make build` and `make test` are the
# two commands of the README's quick start.
GO       ?= go
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -s -w -X main.version=$(VERSION)
BIN      := bin/reasonix
PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64

.PHONY: build test bench cross fmt vet clean

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/reasonix

test:
	$(GO) vet ./...
	$(GO) test -race ./...

# bench prints the figures the issues ask for (see docs/SPEC.md, "Figures").
bench: build
	@command -v rg >/dev/null 2>&1 || { echo "bench: installing ripgrep from Debian's packages for the grep comparison"; \
		SUDO=; [ "$$(id -u)" -ne 0 ] && SUDO=sudo; $$SUDO apt-get install -y -qq ripgrep >/dev/null 2>&1 || \
		echo "bench: could not install ripgrep; the grep comparison will be skipped"; }
	REASONIX_BENCH=1 REASONIX_BIN=$(CURDIR)/$(BIN) $(GO) test -p 1 -count=1 -run 'Bench|VsRipgrep|Efficiency' -v ./... 2>&1 | grep -E '^(bench|grep|gate|subagent|version|startup|harness|first|tool|loop|prefix|memory|  )' || true
	$(GO) test -run '^$$' -bench . -benchmem ./agents ./internal/permission ./orchestrator ./providers/openai

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
