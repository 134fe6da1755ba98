#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# vigil analyze against Holistic Trace Analysis on the largest real traces in ../shared/traces:
# MB/s of uncompressed JSON (full analysis from .json.gz to the JSON report; the median of
# RUNS runs), peak RSS (/usr/bin/time -v, the largest of the runs) and the speed-up over HTA's
# recorded run time (hta_reference/*.hta.json "timing_s", measured on a 2-core machine like
# ours), with one thread (pinned to one core) and with all threads; and what the work model and
# % of roofline cost: the same run with --no-roofline, and the slow-down with them (budget 15 %).
# Usage: bench/analyze_vs_hta.sh [N largest traces; default: every trace of 50 MB or more]
# Env: VIGIL_BIN (default build/bin/vigil), VIGIL_SHARED_DIR (default ../shared next to the repo),
# RUNS (default 3).
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-0}"
RUNS="${RUNS:-3}"
VIGIL_BIN="${VIGIL_BIN:-build/bin/vigil}"
SHARED="${VIGIL_SHARED_DIR:-$(cd .. && pwd)/shared}"
TRACES="$SHARED/traces"
if [[ ! -x "$VIGIL_BIN" ]]; then
  echo "analyze_vs_hta: $VIGIL_BIN not built (make build)" >&2
  exit 1
fi
if [[ ! -f "$TRACES/manifest.tsv" ]]; then
  echo "analyze_vs_hta: skipped, no $TRACES/manifest.tsv (the shared trace set is absent)"
  exit 0
fi
if [[ ! -x /usr/bin/time ]]; then
  echo "analyze_vs_hta: /usr/bin/time is missing (apt-get install time)" >&2
  exit 1
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
nproc_all="$(nproc)"
printf '%-58s %9s %8s %9s %9s %9s %8s %8s %9s %9s\n' trace "MB(json)" threads "seconds" "MB/s" \
  "RSS(MB)" "RSS/MB" "vs HTA" "no-roof s" "roofline"
# Largest Kineto traces by uncompressed size (manifest columns: path gz unc ... kind).
limit="$N"
[[ "$N" -gt 0 ]] || limit=1000000
awk -F'\t' -v n="$N" 'NR > 1 && $5 == "kineto" && (n > 0 || $3 >= 50000000) { print $3 "\t" $1 }' \
  "$TRACES/manifest.tsv" | sort -rn | head -n "$limit" | while IFS=$'\t' read -r unc path; do
    ref="$TRACES/hta_reference/$path.hta.json"
    hta="-"
    if [[ -f "$ref" ]]; then
      hta="$(python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["timing_s"]; print(sum(v for v in t.values() if isinstance(v,(int,float))))' "$ref")"
    fi
    for threads in 1 "$nproc_all"; do
      pin=()  # one thread: pinned to one core, so the gzip inflater and analyses share it too
      if [[ "$threads" == 1 ]] && command -v taskset >/dev/null; then pin=(taskset -c 0); fi
      secs_all=() secs_off=() rss_kb=0 failed=0
      for ((run = 0; run < RUNS; run++)); do
        for variant in on off; do
          flags=()
          [[ "$variant" == off ]] && flags=(--no-roofline)
          /usr/bin/time -v -o "$tmp/time.txt" "${pin[@]}" "$VIGIL_BIN" analyze "$TRACES/$path" \
            --quiet --threads "$threads" "${flags[@]}" --json "$tmp/report.json" >/dev/null \
            2>"$tmp/err.txt" || {
            echo "analyze_vs_hta: failed on $path: $(cat "$tmp/err.txt")" >&2
            failed=1
            break 2
          }
          secs="$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, a, ":"); s = 0;
            for (i = 1; i <= n; i++) s = s * 60 + a[i]; print s }' "$tmp/time.txt")"
          if [[ "$variant" == off ]]; then
            secs_off+=("$secs")
            continue
          fi
          secs_all+=("$secs")
          run_kb="$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$tmp/time.txt")"
          ((run_kb > rss_kb)) && rss_kb="$run_kb"
        done
      done
      ((failed)) && continue
      median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
      secs="$(median "${secs_all[@]}")"
      off="$(median "${secs_off[@]}")"
      python3 - "$path" "$unc" "$threads" "$secs" "$rss_kb" "$hta" "$off" <<'PY'
import sys
path, unc, threads, secs, rss_kb, hta, off = sys.argv[1:]
mb = int(unc) / 1e6
secs = max(float(secs), 1e-3)
rss = int(rss_kb) / 1024
speed = f"{float(hta) / secs:.0f}x" if hta != "-" else "-"
name = path if len(path) <= 58 else "..." + path[-55:]
off = max(float(off), 1e-3)
cost = f"{100 * (secs - off) / off:+.1f}%"
print(f"{name:<58} {mb:9.1f} {threads:>8} {secs:9.2f} {mb / secs:9.0f} {rss:9.1f} {rss / mb:8.3f} {speed:>8} {off:9.2f} {cost:>9}")
PY
    done
  done
