#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# vigil analyze on a synthetic multi-GB Kineto trace written by bench/synth_kineto_trace.cc
# (training steps of CPU ops, launches, kernels, memcpy/memset, NCCL, flows, python stacks):
# end-to-end MB/s of uncompressed JSON (from the files to the JSON report) and peak RSS
# (/usr/bin/time -v) over the JSON size, for the .json and the .json.gz ranks, with one thread
# (pinned to one core with taskset) and with all threads. MB per CPU-second (user + system) is
# printed too: on a shared machine it is steadier than the wall clock.
# Usage: bench/analyze_synthetic.sh
# Env: BUILD_DIR (default build), SYNTH_MB (total MB of JSON, default 3072), SYNTH_RANKS
# (files, default 2), SYNTH_DIR (where to write them; default a temporary directory, removed).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${BUILD_DIR:-build}"
VIGIL_BIN="${VIGIL_BIN:-$BUILD_DIR/bin/vigil}"
SYNTH="$BUILD_DIR/bench/tools/synth_kineto_trace"
MB="${SYNTH_MB:-3072}"
RANKS="${SYNTH_RANKS:-2}"
for bin in "$VIGIL_BIN" "$SYNTH"; do
  if [[ ! -x "$bin" ]]; then
    echo "analyze_synthetic: $bin not built (make build)" >&2
    exit 1
  fi
done
if [[ ! -x /usr/bin/time ]]; then
  echo "analyze_synthetic: /usr/bin/time is missing (apt-get install time)" >&2
  exit 1
fi
if [[ -n "${SYNTH_DIR:-}" ]]; then
  dir="$SYNTH_DIR"
  mkdir -p "$dir"
else
  dir="$(mktemp -d)"
  trap 'rm -rf "$dir"' EXIT
fi
mkdir -p "$dir/json" "$dir/gz"
per_rank=$((MB / RANKS))
pids=()
for ((r = 0; r < RANKS; r++)); do
  if [[ ! -f "$dir/gz/rank-$r.json.gz" ]]; then
    "$SYNTH" --mb "$per_rank" --rank "$r" --world "$RANKS" --json "$dir/json/rank-$r.json" \
      --gz "$dir/gz/rank-$r.json.gz" >/dev/null &
    pids+=($!)
  fi
done
for p in "${pids[@]}"; do wait "$p"; done
json_bytes="$(cat "$dir"/json/*.json | wc -c)"
gz_bytes="$(cat "$dir"/gz/*.json.gz | wc -c)"
nproc_all="$(nproc)"
pin=()
if command -v taskset >/dev/null; then pin=(taskset -c 0); fi
echo "synthetic trace: $RANKS ranks, $((json_bytes / 1000000)) MB of JSON ($((gz_bytes / 1000000)) MB gzipped)"
printf '%-10s %9s %8s %9s %9s %9s %11s %9s %8s\n' input "MB(json)" threads seconds "MB/s" \
  "CPU s" "MB/CPU-s" "RSS(MB)" "RSS/MB"
for input in gz json; do
  for threads in 1 "$nproc_all"; do
    cmd=("$VIGIL_BIN" analyze "$dir/$input" --quiet --threads "$threads" --json "$dir/report.json")
    if [[ "$threads" == 1 ]]; then cmd=("${pin[@]}" "${cmd[@]}"); fi
    /usr/bin/time -v -o "$dir/time.txt" "${cmd[@]}" >/dev/null 2>"$dir/err.txt" || {
      echo "analyze_synthetic: vigil analyze failed: $(cat "$dir/err.txt")" >&2
      exit 1
    }
    secs="$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, a, ":"); s = 0;
      for (i = 1; i <= n; i++) s = s * 60 + a[i]; print s }' "$dir/time.txt")"
    rss_kb="$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$dir/time.txt")"
    cpu="$(awk -F': ' '/User time|System time/ { s += $2 } END { print s }' "$dir/time.txt")"
    awk -v inp="$input" -v b="$json_bytes" -v t="$threads" -v s="$secs" -v c="$cpu" \
      -v k="$rss_kb" 'BEGIN {
      mb = b / 1e6; if (s < 0.001) s = 0.001; if (c < 0.001) c = 0.001; rss = k / 1024;
      printf "%-10s %9.1f %8s %9.2f %9.0f %9.2f %11.0f %9.0f %8.3f\n", inp, mb, t, s, mb / s, c,
        mb / c, rss, rss / mb }'
  done
done
