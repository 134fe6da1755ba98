#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Whole-process comparison against Debian's prometheus-node-exporter (its default collectors),
# all scraped with curl once per second for the same BENCH_SECONDS (default 60), side by side:
#  - vigild with its default collectors (the headline: node_exporter's default families and
#    more), --interval 1s, no GPU backend;
#  - vigild with every host collector on (the opt-in ones too, as node_exporter's opt-ins are),
#    printed beside it;
#  - vigild with 8 simulated GPUs (--gpu-backend sim), default collectors, for its peak RSS.
# Prints CPU seconds, % of one core and peak RSS (VmHWM) of each, the ratio vigild/node_exporter,
# how many series each exported, how many of node_exporter's metric families have a Vigil
# equivalent (docs/node_exporter_mapping.tsv) and how many of those carry the same values in
# both final scrapes (after the mapping's unit conversion), beside the targets: at most 1/10 of
# node_exporter's CPU, peak RSS <= 12 MiB without GPUs and <= 16 MiB with 8 simulated GPUs.
# BENCH_VIGILD_ARGS adds flags to every vigild (e.g. --no-collector.cgroup to measure without it);
# BENCH_INTERVAL (default 1s) is vigild's collection interval (the targets are for 1s).
# Everything listens on free loopback ports; every process is stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/.."

bin_dir=${VIGIL_BIN_DIR:-build/bin}
seconds=${BENCH_SECONDS:-60}
interval=${BENCH_INTERVAL:-1s}
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
vigild_pids=""
node_pid=""
cleanup() {
  for pid in $vigild_pids $node_pid; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in $vigild_pids $node_pid; do
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$tmp"
}
trap cleanup EXIT

n_http=$(free_port)

# Every host collector on: the defaults plus any that are off by default (GPU ones excluded).
all_flags=()
while read -r name; do
  case "$name" in gpu*) continue ;; esac
  all_flags+=("--collector.$name")
done < <("$vigild" --help 2>/dev/null | grep -o -- '--collector\.[a-z0-9_]*' | sed 's/--collector\.//' | sort -u)

read -r -a extra_args <<<"${BENCH_VIGILD_ARGS:-}"
# name -> port, pid; started in this order.
kinds=(defaults all sim)
declare -A v_port v_pid
start_vigild() {  # kind args...
  local kind=$1
  shift
  v_port[$kind]=$(free_port)
  "$vigild" --interval "$interval" --http-listen "127.0.0.1:${v_port[$kind]}" \
    --rpc-listen "127.0.0.1:$(free_port)" --unix-socket "$tmp/vigild-$kind.sock" \
    --log-level warn "$@" "${extra_args[@]}" >"$tmp/vigild-$kind.log" 2>&1 &
  v_pid[$kind]=$!
  vigild_pids+=" $!"
}
vigild_pids=""
start_vigild defaults --gpu-backend none
start_vigild all --gpu-backend none "${all_flags[@]}"
start_vigild sim --gpu-backend sim
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
for kind in "${kinds[@]}"; do
  wait_ready "http://127.0.0.1:${v_port[$kind]}/healthz" "${v_pid[$kind]}" "vigild-$kind"
done
wait_ready "http://127.0.0.1:$n_http/metrics" "$node_pid" node_exporter

cpu_ticks() {  # utime + stime, fields 14 and 15 of /proc/<pid>/stat (after the comm field)
  sed 's/^.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'
}
hwm_kib() {
  awk '/^VmHWM:/ {print $2}' "/proc/$1/status"
}

declare -A v_start v_end v_hwm
for kind in "${kinds[@]}"; do v_start[$kind]=$(cpu_ticks "${v_pid[$kind]}"); done
n_start=$(cpu_ticks "$node_pid")
start_ns=$(date +%s%N)
for ((i = 0; i < seconds; i++)); do
  tick_start=$(date +%s%N)
  for kind in "${kinds[@]}"; do
    curl -fsS -o /dev/null "http://127.0.0.1:${v_port[$kind]}/metrics" ||
      echo "bench: vigild-$kind scrape failed" >&2
  done
  curl -fsS -o /dev/null "http://127.0.0.1:$n_http/metrics" || echo "bench: node_exporter scrape failed" >&2
  elapsed_ns=$(($(date +%s%N) - tick_start))
  if [ $elapsed_ns -lt 1000000000 ]; then
    sleep "$(printf '0.%09d' $((1000000000 - elapsed_ns)))"
  fi
done
wall_ns=$(($(date +%s%N) - start_ns))
for kind in "${kinds[@]}"; do
  v_end[$kind]=$(cpu_ticks "${v_pid[$kind]}")
  v_hwm[$kind]=$(hwm_kib "${v_pid[$kind]}")
  curl -fsS "http://127.0.0.1:${v_port[$kind]}/metrics" >"$tmp/vigild-$kind.metrics" || true
done
n_end=$(cpu_ticks "$node_pid")
n_hwm=$(hwm_kib "$node_pid")
curl -fsS "http://127.0.0.1:$n_http/metrics" >"$tmp/node_exporter.metrics" || true
series() { grep -vc '^#' "$1" || true; }
# "<mapped> <node_exporter families> <listed without equivalent> <not listed>"
read -r fam_mapped fam_total fam_none fam_unlisted < <(python3 tools/node_exporter_mapping.py \
  --count "$tmp/node_exporter.metrics")
# The same quantities from both, converted (docs/node_exporter_mapping.tsv): "<agree> <compared>".
read -r val_agree val_compared < <(python3 tools/node_exporter_mapping.py --compare \
  "$tmp/node_exporter.metrics" "$tmp/vigild-all.metrics" 2>"$tmp/compare.txt")
# Mapped families the default vigild did not export (a collector absent on this host, or off).
fam_silent=$(python3 - "$tmp/node_exporter.metrics" "$tmp/vigild-defaults.metrics" <<'PY'
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

rows=()
for kind in "${kinds[@]}"; do
  rows+=("$kind:${v_start[$kind]}:${v_end[$kind]}:${v_hwm[$kind]}:$(series "$tmp/vigild-$kind.metrics")")
done
python3 - "$hz" "$wall_ns" "$n_start" "$n_end" "$n_hwm" "$(series "$tmp/node_exporter.metrics")" \
  "$seconds" "$interval" "$fam_mapped" "$fam_total" "$fam_silent" "$val_agree" "$val_compared" \
  "${rows[@]}" <<'PY'
import sys
hz, wall_ns, ns, ne, nh, nser, secs, interval, fmap, ftot, fsil, vagr, vcmp = sys.argv[1:14]
hz = float(hz); wall = int(wall_ns) / 1e9
n_cpu = (float(ne) - float(ns)) / hz
v = {}
for row in sys.argv[14:]:
    kind, vs, ve, vh, vser = row.split(":")
    v[kind] = ((float(ve) - float(vs)) / hz, int(vh) / 1024, int(vser))
label = {"defaults": "vigild defaults", "all": "every collector", "sim": "8 sim GPUs"}
print(f"vigild vs prometheus-node-exporter (its defaults): {secs} s, vigild collecting every "
      f"{interval}, each scraped every 1 s")
print(f"(CPU from /proc/<pid>/stat at {hz:.0f} ticks/s: figures below 1/{hz:.0f} s are noise)")
print()
print(f"{'':24}" + "".join(f"{label[k]:>17}" for k in v) + f"{'node_exporter':>16}")
print(f"{'CPU seconds':24}" + "".join(f"{c:>17.2f}" for c, _, _ in v.values()) + f"{n_cpu:>16.2f}")
print(f"{'% of one core':24}" + "".join(f"{100 * c / wall:>16.3f}%" for c, _, _ in v.values()) +
      f"{100 * n_cpu / wall:>15.3f}%")
ratio = {k: (c / n_cpu if n_cpu > 0 else float("inf")) for k, (c, _, _) in v.items()}
print(f"{'CPU ratio v/n':24}" + "".join(f"{ratio[k]:>17.3f}" for k in v) + f"{'1':>16}")
print(f"{'peak RSS (MiB)':24}" + "".join(f"{r:>17.1f}" for _, r, _ in v.values()) +
      f"{int(nh) / 1024:>16.1f}")
print(f"{'series exported':24}" + "".join(f"{s:>17}" for _, _, s in v.values()) + f"{int(nser):>16}")
print(f"node_exporter families with a Vigil equivalent: {fmap} of {ftot} "
      f"({fsil} of those not exported by the default vigild: collector off or source absent)")
print(f"values agreeing with node_exporter's (within 10 % + 5): {vagr} of {vcmp} families")
print()
ok = lambda b: "met" if b else "NOT met"
print(f"targets (default collectors): CPU <= 1/10 of node_exporter: {ok(ratio['defaults'] <= 0.1)} "
      f"({ratio['defaults']:.3f}); peak RSS <= 12 MiB: {ok(v['defaults'][1] <= 12)}; "
      f"with 8 simulated GPUs <= 16 MiB: {ok(v['sim'][1] <= 16)}")
PY
if [ -s "$tmp/compare.txt" ]; then
  echo "families whose values disagree:"
  cat "$tmp/compare.txt"
fi
