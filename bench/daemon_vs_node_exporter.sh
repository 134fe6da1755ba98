#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Whole-process comparison: vigild (every host collector on, 1 s interval) against Debian's
# prometheus-node-exporter, both scraped with curl once per second for the same BENCH_SECONDS
# (default 60). Prints CPU seconds, % of one core and peak RSS (VmHWM) of each, the ratio
# vigild/node_exporter, how many series each exported, how many of node_exporter's metric
# families have a Vigil equivalent (docs/node_exporter_mapping.tsv) and how many of those carry
# the same values in both final scrapes (after the mapping's unit conversion), beside the targets:
# vigild < 0.2 % of one core, peak RSS <= 12 MiB, <= 1/10 of node_exporter's CPU.
# BENCH_VIGILD_ARGS adds vigild flags (e.g. --no-collector.bpf_cuda to measure without it).
# Everything listens on free loopback ports; both processes are stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/.."

bin_dir=${VIGIL_BIN_DIR:-build/bin}
seconds=${BENCH_SECONDS:-60}
node_exporter=${NODE_EXPORTER:-/usr/bin/prometheus-node-exporter}
vigild="$bin_dir/vigild"

for tool in curl python3; do
  command -v "$tool" >/dev/null || { echo "bench: $tool is required" >&2; exit 1; }
done
[ -x "$vigild" ] || { echo "bench: $vigild is missing; run 'make build'" >&2; exit 1; }
[ -x "$node_exporter" ] || { echo "bench: $node_exporter is missing (apt-get install prometheus-node-exporter)" >&2; exit 1; }

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
tmp=$(mktemp -d /tmp/vigil-bench.XXXXXX)
vigild_pid=""
node_pid=""
cleanup() {
  for pid in $vigild_pid $node_pid; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in $vigild_pid $node_pid; do
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$tmp"
}
trap cleanup EXIT

v_http=$(free_port)
v_rpc=$(free_port)
n_http=$(free_port)

# Every host collector on: the defaults plus any that are off by default (GPU ones excluded).
collector_flags=()
while read -r name; do
  case "$name" in gpu*) continue ;; esac
  collector_flags+=("--collector.$name")
done < <("$vigild" --help 2>/dev/null | grep -o -- '--collector\.[a-z0-9_]*' | sed 's/--collector\.//' | sort -u)

read -r -a extra_args <<<"${BENCH_VIGILD_ARGS:-}"
"$vigild" --interval 1s --http-listen "127.0.0.1:$v_http" --rpc-listen "127.0.0.1:$v_rpc" \
  --unix-socket "$tmp/vigild.sock" --gpu-backend none --log-level warn "${collector_flags[@]}" \
  "${extra_args[@]}" \
  >"$tmp/vigild.log" 2>&1 &
vigild_pid=$!
"$node_exporter" --web.listen-address="127.0.0.1:$n_http" >"$tmp/node_exporter.log" 2>&1 &
node_pid=$!

wait_ready() {  # url pid name
  local deadline=$((SECONDS + 30))
  until curl -fsS -o /dev/null "$1" 2>/dev/null; do
    if ! kill -0 "$2" 2>/dev/null; then
      echo "bench: $3 exited; its log:" >&2
      cat "$tmp/$3.log" >&2
      exit 1
    fi
    if [ $SECONDS -ge $deadline ]; then
      echo "bench: $3 not ready after 30 s" >&2
      exit 1
    fi
    sleep 0.1
  done
}
wait_ready "http://127.0.0.1:$v_http/healthz" "$vigild_pid" vigild
wait_ready "http://127.0.0.1:$n_http/metrics" "$node_pid" node_exporter

cpu_ticks() {  # utime + stime, fields 14 and 15 of /proc/<pid>/stat (after the comm field)
  sed 's/^.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'
}
hwm_kib() {
  awk '/^VmHWM:/ {print $2}' "/proc/$1/status"
}

v_start=$(cpu_ticks "$vigild_pid")
n_start=$(cpu_ticks "$node_pid")
start_ns=$(date +%s%N)
for ((i = 0; i < seconds; i++)); do
  tick_start=$(date +%s%N)
  curl -fsS -o /dev/null "http://127.0.0.1:$v_http/metrics" || echo "bench: vigild scrape failed" >&2
  curl -fsS -o /dev/null "http://127.0.0.1:$n_http/metrics" || echo "bench: node_exporter scrape failed" >&2
  elapsed_ns=$(($(date +%s%N) - tick_start))
  if [ $elapsed_ns -lt 1000000000 ]; then
    sleep "$(printf '0.%09d' $((1000000000 - elapsed_ns)))"
  fi
done
wall_ns=$(($(date +%s%N) - start_ns))
v_end=$(cpu_ticks "$vigild_pid")
n_end=$(cpu_ticks "$node_pid")
v_hwm=$(hwm_kib "$vigild_pid")
n_hwm=$(hwm_kib "$node_pid")
curl -fsS "http://127.0.0.1:$v_http/metrics" >"$tmp/vigild.metrics" || true
curl -fsS "http://127.0.0.1:$n_http/metrics" >"$tmp/node_exporter.metrics" || true
v_series=$(grep -vc '^#' "$tmp/vigild.metrics" || true)
n_series=$(grep -vc '^#' "$tmp/node_exporter.metrics" || true)
# "<mapped> <node_exporter families> <listed without equivalent> <not listed>"
read -r fam_mapped fam_total fam_none fam_unlisted < <(python3 tools/node_exporter_mapping.py \
  --count "$tmp/node_exporter.metrics")
# Mapped families this vigild did not export (a collector absent on this host, or off).
# The same quantities from both, converted (docs/node_exporter_mapping.tsv): "<agree> <compared>".
read -r val_agree val_compared < <(python3 tools/node_exporter_mapping.py --compare \
  "$tmp/node_exporter.metrics" "$tmp/vigild.metrics" 2>"$tmp/compare.txt")
fam_silent=$(python3 - "$tmp/node_exporter.metrics" "$tmp/vigild.metrics" <<'PY'
import sys
sys.path.insert(0, "tools")
import node_exporter_mapping as m
ne = m.scrape_families(open(sys.argv[1]).read())
vg = m.scrape_families(open(sys.argv[2]).read())
rows = [r for r in m.load() if r[1] in ne and r[2] != "-"]
print(sum(1 for r in rows if r[2].split("{")[0] not in vg))
PY
)
hz=$(getconf CLK_TCK)

python3 - "$hz" "$wall_ns" "$v_start" "$v_end" "$n_start" "$n_end" "$v_hwm" "$n_hwm" \
  "$v_series" "$n_series" "$seconds" "$fam_mapped" "$fam_total" "$fam_silent" "$val_agree" \
  "$val_compared" <<'PY'
import sys
hz, wall_ns, vs, ve, ns, ne, vh, nh, vser, nser, secs, fmap, ftot, fsil, vagr, vcmp = sys.argv[1:]
hz = float(hz); wall = int(wall_ns) / 1e9
v_cpu = (float(ve) - float(vs)) / hz
n_cpu = (float(ne) - float(ns)) / hz
v_pct = 100 * v_cpu / wall
n_pct = 100 * n_cpu / wall
v_rss = int(vh) / 1024
n_rss = int(nh) / 1024
ratio = v_cpu / n_cpu if n_cpu > 0 else float("inf")
print(f"vigild vs prometheus-node-exporter: {secs} s, collection every 1 s, both scraped every 1 s")
print(f"(CPU from /proc/<pid>/stat at {hz:.0f} ticks/s: figures below 1/{hz:.0f} s are noise)")
print()
print(f"{'':24}{'vigild':>12}{'node_exporter':>16}{'ratio v/n':>12}   target (vigild)")
print(f"{'CPU seconds':24}{v_cpu:>12.2f}{n_cpu:>16.2f}{ratio:>12.3f}   <= 0.1 x node_exporter")
print(f"{'% of one core':24}{v_pct:>11.3f}%{n_pct:>15.3f}%{'':>12}   < 0.2 %")
rss_ratio = v_rss / n_rss if n_rss else float("inf")
print(f"{'peak RSS (MiB)':24}{v_rss:>12.1f}{n_rss:>16.1f}{rss_ratio:>12.3f}   <= 12 MiB")
print(f"{'series exported':24}{int(vser):>12}{int(nser):>16}")
print(f"node_exporter families with a Vigil equivalent: {fmap} of {ftot} "
      f"({fsil} of those not exported by this vigild: collector off or source absent)")
print(f"values agreeing with node_exporter's (within 10 % + 5): {vagr} of {vcmp} families")
print()
ok = lambda b: "met" if b else "NOT met"
print(f"targets: CPU < 0.2 % of a core: {ok(v_pct < 0.2)}; RSS <= 12 MiB: {ok(v_rss <= 12)}; "
      f"CPU <= 1/10 of node_exporter: {ok(ratio <= 0.1)}")
PY
if [ -s "$tmp/compare.txt" ]; then
  echo "families whose values disagree:"
  cat "$tmp/compare.txt"
fi
