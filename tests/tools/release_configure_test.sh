#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# `make build` (and so `make run`) configures with -DVIGIL_BUILD_TESTS=OFF: every CMake file,
# tests/ included, must configure without the test targets. Configure only, in a temp dir.
set -euo pipefail
src="$(cd "$(dirname "$0")/../.." && pwd)"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
if ! cmake -S "$src" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DVIGIL_BUILD_TESTS=OFF \
    >"$dir/configure.log" 2>&1; then
  echo "configuring with -DVIGIL_BUILD_TESTS=OFF (what make build does) failed:" >&2
  grep -A3 "CMake Error" "$dir/configure.log" >&2 || cat "$dir/configure.log" >&2
  exit 1
fi
echo "ok: configures with -DVIGIL_BUILD_TESTS=OFF"
