# SPDX-License-Identifier: Apache-2.0
# Entry points. Every target installs missing Debian packages first (tools/apt-packages.txt).
SHELL := /bin/bash
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
export CCACHE_DIR ?= $(HOME)/.cache/vigil-ccache
export CCACHE_MAXSIZE ?= 5G
# Share cached objects between checkouts in different directories (CI clones anew each time).
export CCACHE_BASEDIR ?= $(CURDIR)
export CCACHE_NOHASHDIR ?= 1

.PHONY: all deps build build-test test check-format check-deps run demo bench fuzz clean format

all: build

deps:
	@tools/install-deps.sh

build: deps
	@cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DVIGIL_BUILD_TESTS=OFF $(CMAKE_FLAGS) >/dev/null
	@cmake --build build -j $(JOBS)

build-test: deps
	@cmake -S . -B build-test -G Ninja -DCMAKE_BUILD_TYPE=Debug -DVIGIL_SANITIZE=ON \
	  -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DCMAKE_C_FLAGS_DEBUG=-g1 \
	  -DVIGIL_BUILD_BENCH=OFF $(CMAKE_FLAGS) >/dev/null
	@cmake --build build-test -j $(JOBS)

# Fast checks first, then every test under ASan+UBSan.
test: deps check-format check-deps build-test
	@cd build-test && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --output-on-failure -j $(JOBS) --timeout 600

check-format:
	@tools/check-format.sh

check-deps:
	@python3 tools/check_deps.py

format:
	@tools/check-format.sh --fix

run: build
	@tools/run.sh

demo: build
	@tools/run.sh --demo

bench: build
	@tools/bench.sh

fuzz: deps
	@echo "fuzz targets: see bench/README.md"

clean:
	rm -rf build build-test
