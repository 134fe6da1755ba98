#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The whole daemon's cost with 8 GPUs: vigild at --interval 1s with its default collectors and the
# NVML backend loaded from the fake libnvidia-ml.so.1 (8 H100s with GPM, scripted values; built
# under <build>/tests/fakes/nvml), then the same daemon with --gpu-backend none, each for
# BENCH_SECONDS (default 60). Prints CPU seconds, % of one core and peak RSS of both runs, and the
# difference the GPUs make. Target: the daemon with 8 GPUs under 0.3 % of one core.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=${BUILD_DIR:-build}
bin_dir=${VIGIL_BIN_DIR:-$build_dir/bin}
seconds=${BENCH_SECONDS:-60}
fake="$build_dir/tests/fakes/nvml/libnvidia-ml.so.1"
[ -x "$bin_dir/vigild" ] || { echo "bench: $bin_dir/vigild is missing; run 'make build'" >&2; exit 1; }
[ -f "$fake" ] || { echo "bench: $fake is missing; run 'make build'" >&2; exit 1; }

tmp=$(mktemp -d /tmp/vigil-gpu-bench.XXXXXX)
pid=""
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

{
  echo "gpus 8"
  echo "driver 550.54.15"
  for i in 0 1 2 3 4 5 6 7; do
    echo "gpu $i name NVIDIA H100 80GB HBM3"
    echo "gpu $i uuid GPU-0000000$i-1111-2222-3333-444444444444"
    echo "gpu $i util 95 90 97 60 99"
    echo "gpu $i mem_total 85899345920"
    echo "gpu $i mem_used 64424509440"
    echo "gpu $i power_mw 650000 600000 690000"
    echo "gpu $i energy_mj 1000000 1650000 2300000 2990000 3640000"
    echo "gpu $i sm_clock 1980 1755"
    echo "gpu $i nvlinks 18"
    echo "gpu $i gpm 1"
    echo "gpu $i gpm_sm_active 80 75 85"
    echo "gpu $i gpm_sm_occupancy 40"
    echo "gpu $i gpm_hmma 50 45 55"
    echo "gpu $i procs $((4000 + i)):60000000000"
  done
} >"$tmp/nvml.script"

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

run_one() {  # label, extra vigild args...
  local label=$1
  shift
  local http rpc start end ticks hz
  http=$(free_port)
  rpc=$(free_port)
  FAKE_NVML_SCRIPT="$tmp/nvml.script" "$bin_dir/vigild" --interval 1s \
    --http-listen "127.0.0.1:$http" --rpc-listen "127.0.0.1:$rpc" --unix-socket - \
    --ipc-name "vigil-bench-$http" --log-level warn "$@" >"$tmp/$label.log" 2>&1 &
  pid=$!
  local deadline=$((SECONDS + 30))
  until curl -fsS -o /dev/null "http://127.0.0.1:$http/healthz" 2>/dev/null; do
    kill -0 "$pid" 2>/dev/null || { cat "$tmp/$label.log" >&2; exit 1; }
    [ $SECONDS -lt $deadline ] || { echo "bench: vigild not ready" >&2; exit 1; }
    sleep 0.1
  done
  start=$(sed 's/^.*) //' "/proc/$pid/stat" | awk '{print $12 + $13}')
  sleep "$seconds"
  end=$(sed 's/^.*) //' "/proc/$pid/stat" | awk '{print $12 + $13}')
  local series
  series=$(curl -fsS "http://127.0.0.1:$http/metrics" | grep -vc '^#' || true)
  local hwm
  hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status")
  kill "$pid" && wait "$pid" 2>/dev/null || true
  pid=""
  hz=$(getconf CLK_TCK)
  awk -v l="$label" -v t=$((end - start)) -v hz="$hz" -v s="$seconds" -v k="$hwm" -v n="$series" \
    'BEGIN { printf "%-22s %10.2f %12.3f%% %12.1f %8d\n", l, t/hz, 100*t/hz/s, k/1024, n }'
}

printf "%-22s %10s %13s %12s %8s\n" "vigild (1 s interval)" "CPU s" "% of 1 core" "RSS MiB" "series"
run_one "8 GPUs (fake NVML)" --gpu-backend nvml --nvml-library "$fake"
run_one "no GPU backend" --gpu-backend none
echo "target: the daemon with 8 GPUs under 0.3 % of one core (${seconds} s per run)"
