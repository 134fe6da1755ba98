#!/usr/bin/env bash
# Runs libFuzzer targets built in BUILD_DIR (make fuzz): each for SECONDS on a working copy of its
# corpus (new inputs go to BUILD_DIR/fuzz-corpus/<target>, never into the checked-in corpus),
# with the regression inputs replayed first. Crashes, leaks and timeouts are saved under
# BUILD_DIR/fuzz-artifacts/<target>/; the exit status is 1 when any target found one.
#   fuzz/run.sh BUILD_DIR SECONDS TARGET...
set -uo pipefail
cd "$(dirname "$0")/.."
build="$1"
seconds="$2"
shift 2
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
failed=()
for target in "$@"; do
  bin="$build/fuzz/${target}_fuzzer"
  work="$build/fuzz-corpus/$target"
  artifacts="$build/fuzz-artifacts/$target"
  mkdir -p "$work" "$artifacts"
  inputs=("$work" "fuzz/corpus/$target")
  [ -d "fuzz/regressions/$target" ] && inputs+=("fuzz/regressions/$target")
  echo "fuzz: $target for ${seconds}s"
  if ! "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
      -print_final_stats=1 -artifact_prefix="$artifacts/" "${inputs[@]}" \
      >"$build/fuzz-$target.log" 2>&1; then
    failed+=("$target")
    echo "fuzz: $target FAILED; see $build/fuzz-$target.log and $artifacts/" >&2
    grep -E '^(==[0-9]+==ERROR|SUMMARY|fuzz invariant)' "$build/fuzz-$target.log" | head -5 >&2
  else
    grep -E '^stat::(number_of_executed_units|peak_rss_mb)' "$build/fuzz-$target.log" |
      tr '\n' ' ' | sed "s/^/fuzz: $target ok: /; s/\$/\\n/"
  fi
done
if [ ${#failed[@]} -ne 0 ]; then
  echo "fuzz: failures in ${failed[*]}" >&2
  exit 1
fi
