#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The bpf_cuda collector's own cost inside vigild while a process makes 200,000 CUDA launches per
# second (the fake runtime of the tests, paced on the clock) for BENCH_SECONDS (default 30):
# vigild runs with --collector.bpf_cuda at a 1 s interval, and the script reads the collector's
# CPU counter (vigil_collector_cpu_seconds_total{collector="bpf_cuda"}) and the whole daemon's
# CPU (/proc/PID/stat) over the run, and prints them as % of one core beside the target
# (collector < 0.5 %), and the launches the collector counted against those made. The probes'
# in-kernel work is charged to the traced process, not to vigild; bench/snoop_overhead measures
# that. Needs root and a build with tests (BUILD, default build-test: vigild, the workload, the
# fake libcudart).
set -euo pipefail
cd "$(dirname "$0")/.."

build=${BUILD:-build-test}
seconds=${BENCH_SECONDS:-30}
rate=${LAUNCH_RATE:-200000}
vigild="$build/bin/vigild"
workload="$build/tests/snoop_workload"
fakes="$build/tests/fakes/cuda"
[ "$(id -u)" -eq 0 ] || { echo "bench: needs root (eBPF)" >&2; exit 1; }
for f in "$vigild" "$workload" "$fakes/libcudart.so.12"; do
  [ -e "$f" ] || { echo "bench: $f is missing; build with tests (make build-test)" >&2; exit 1; }
done

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
tmp=$(mktemp -d /tmp/vigil-bench.XXXXXX)
vigild_pid=""
work_pid=""
cleanup() {
  for pid in $work_pid $vigild_pid; do kill "$pid" 2>/dev/null || true; done
  for pid in $work_pid $vigild_pid; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

http=$(free_port)
rpc=$(free_port)
mkfifo "$tmp/in"
# The workload first, so the collector finds it mapped when it starts.
LD_LIBRARY_PATH="$fakes" "$workload" <"$tmp/in" >"$tmp/work.out" 2>&1 &
work_pid=$!
exec 3>"$tmp/in"
"$vigild" --interval 1s --http-listen "127.0.0.1:$http" --rpc-listen "127.0.0.1:$rpc" \
  --unix-socket "$tmp/vigild.sock" --gpu-backend none --log-level warn --collector.bpf_cuda \
  --state-dir "$tmp/state" --trace-root "$tmp/traces" >"$tmp/vigild.log" 2>&1 &
vigild_pid=$!

metric() {  # the sum of the series of $1 whose labels contain $2
  local text
  text=$(curl -fsS "http://127.0.0.1:$http/metrics") || return 1
  awk -v m="$1" -v l="$2" 'index($0, m) == 1 && substr($0, length(m) + 1, 1) ~ /[{ ]/ &&
    index($0, l) > 0 {s += $NF; n++} END {if (n) print s}' <<<"$text"
}
deadline=$((SECONDS + 60))
until [ -n "$(metric vigil_process_cuda_launches_total "" 2>/dev/null || true)" ]; do
  kill -0 "$vigild_pid" 2>/dev/null || { echo "bench: vigild exited:" >&2; cat "$tmp/vigild.log" >&2; exit 1; }
  [ $SECONDS -lt $deadline ] || { echo "bench: the collector never attached:" >&2; cat "$tmp/vigild.log" >&2; exit 1; }
  echo "loop 1" >&3
  sleep 0.5
done
cpu_ticks() { sed 's/^.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'; }
hz=$(getconf CLK_TCK)
c0=$(metric vigil_collector_cpu_seconds_total 'collector="bpf_cuda"')
t0=$(cpu_ticks "$vigild_pid")
l0=$(metric vigil_process_cuda_launches_total "")
start=$(date +%s.%N)
echo "pace $rate $seconds" >&3
until grep -q '^launches ' "$tmp/work.out"; do sleep 0.2; done
sleep 2  # two collector ticks, so the last launches are counted
end=$(date +%s.%N)
c1=$(metric vigil_collector_cpu_seconds_total 'collector="bpf_cuda"')
t1=$(cpu_ticks "$vigild_pid")
l1=$(metric vigil_process_cuda_launches_total "")
made=$(awk '/^launches / {print $2}' "$tmp/work.out")
python3 - "$c0" "$c1" "$t0" "$t1" "$hz" "$start" "$end" "$l0" "$l1" "$made" "$rate" <<'PY'
import sys
c0, c1, t0, t1, hz, start, end, l0, l1, made, rate = map(float, sys.argv[1:])
wall = end - start
collector = 100 * (c1 - c0) / wall
daemon = 100 * (t1 - t0) / hz / wall
print(f"workload: {made:.0f} launches at {rate:.0f}/s target ({made / (wall - 2):.0f}/s achieved)")
print(f"collector counted {l1 - l0:.0f} of them")
print(f"bpf_cuda collector CPU: {collector:.3f} % of one core (target < 0.5 %)")
print(f"whole vigild CPU:       {daemon:.3f} % of one core over {wall:.1f} s")
PY
