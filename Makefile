# SPDX-License-Identifier: Apache-2.0
# Entry points. Every target installs missing Debian packages first: building and running those of
# tools/apt-packages-run.txt, testing, benchmarks and fuzzing also tools/apt-packages-test.txt.
SHELL := /bin/bash
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
export CCACHE_DIR ?= $(HOME)/.cache/vigil-ccache
export CCACHE_MAXSIZE ?= 5G
# Share cached objects between checkouts in different directories (CI clones anew each time).
export CCACHE_BASEDIR ?= $(CURDIR)
export CCACHE_NOHASHDIR ?= 1

.PHONY: all deps deps-test build build-test test check-format check-deps run demo bench fuzz clean format

all: build

deps:
	@tools/install-deps.sh run

deps-test:
	@tools/install-deps.sh test

build: deps
	@cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DVIGIL_BUILD_TESTS=OFF $(CMAKE_FLAGS) >/dev/null
	@cmake --build build -j $(JOBS)

build-test: deps-test
	@cmake -S . -B build-test -G Ninja -DCMAKE_BUILD_TYPE=Debug -DVIGIL_SANITIZE=ON \
	  -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DCMAKE_C_FLAGS_DEBUG=-g1 \
	  -DVIGIL_BUILD_BENCH=OFF $(CMAKE_FLAGS) >/dev/null
	@cmake --build build-test -j $(JOBS)

# Fast checks first, then every test under ASan+UBSan.
test: deps-test check-format check-deps build-test
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

bench: deps-test build
	@tools/bench.sh

# libFuzzer targets (fuzz/README.md): a clang build in build-fuzz/, then each target for
# FUZZ_SECONDS on its checked-in corpus. `make test` runs the same harnesses briefly without clang.
FUZZ_SECONDS ?= 60
open_paren := (
FUZZ_TARGETS ?= $(shell sed -n 's/^vigil_fuzzer$(open_paren)\([a-z_]*\) .*/\1/p' fuzz/CMakeLists.txt)
fuzz: deps-test
	@cmake -S . -B build-fuzz -G Ninja -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
	  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" -DVIGIL_SANITIZE=ON \
	  -DVIGIL_BUILD_FUZZ=ON -DVIGIL_BUILD_TESTS=OFF -DVIGIL_BUILD_BENCH=OFF $(CMAKE_FLAGS) >/dev/null
	@cmake --build build-fuzz -j $(JOBS) --target $(addsuffix _fuzzer,$(FUZZ_TARGETS))
	@fuzz/run.sh build-fuzz $(FUZZ_SECONDS) $(FUZZ_TARGETS)

clean:
	rm -rf build build-test build-fuzz
