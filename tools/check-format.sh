#!/usr/bin/env bash
# Fails when a C/C++ file under src/, tests/, bench/ or fuzz/ is not clang-formatted (--fix rewrites).
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files -co --exclude-standard -- 'src/*.cc' 'src/*.h' 'tests/*.cc' \
  'tests/*.h' 'tests/*.c' 'bench/*.cc' 'fuzz/*.cc' 'fuzz/*.h' | grep -v '\.bpf\.c$' | while read -r f; do [ -f "$f" ] && echo "$f"; done)
[ ${#files[@]} -eq 0 ] && exit 0
if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
if ! clang-format --dry-run -Werror "${files[@]}" 2>/tmp/vigil-format.log; then
  grep -E '^[^ ].*: (error|warning):' /tmp/vigil-format.log | sed 's/:[0-9]*:[0-9]*: .*//' | sort -u |
    sed 's/^/needs clang-format: /' >&2
  echo "run 'make format' to fix" >&2
  exit 1
fi
