#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Fails when a shared library defines for others any name outside its API.
# Usage: check_exports.sh LIBRARY REGEX (a grep pattern every exported name must match)
lib="$1"
pattern="$2"
# Absolute symbols (type A) are version nodes; "name@@VERSION" is the name.
syms=$(nm -D --defined-only "$lib" | awk '$2 != "A" { sub(/@.*/, "", $3); print $3 }')
if [ -z "$syms" ]; then
  echo "no exported symbols in $lib"
  exit 1
fi
bad=$(printf '%s\n' "$syms" | grep -v "$pattern")
if [ -n "$bad" ]; then
  echo "$lib exports names outside its API:"
  printf '%s\n' "$bad" | head -20
  exit 1
fi
echo "$lib: $(printf '%s\n' "$syms" | wc -l) exported names, all of the API"
