# s3native: one place that drives every build and test.
#   make test    start a local S3 server (moto + fault proxy), run every test suite, stop it
#   make build   release cdylib (target/release/libs3native.so)
#   make bench   the Rust benchmark against the local server (prints ratios)
SHELL := /bin/bash
.ONESHELL:
.SHELLFLAGS := -euo pipefail -c

CARGO ?= cargo

.PHONY: build test test-rust bench header-check server-install

build:
	$(CARGO) build --release

server-install:
	scripts/s3-server.sh install

# The generated C header must be committed up to date.
header-check:
	$(CARGO) build --quiet
	git diff --exit-code -- native/include/s3native.h || { echo "native/include/s3native.h is stale: commit the regenerated header"; exit 1; }

test: server-install header-check
	env=$$(scripts/s3-server.sh start) && eval "$$env"
	trap 'scripts/s3-server.sh stop' EXIT
	$(CARGO) test --no-fail-fast -- --test-threads=4

bench: server-install
	env=$$(scripts/s3-server.sh start) && eval "$$env"
	trap 'scripts/s3-server.sh stop' EXIT
	$(CARGO) bench --bench upload
