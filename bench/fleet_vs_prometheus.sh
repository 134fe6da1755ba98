#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Whole-process fleet benchmark, all on this machine in one run:
#  1. vigil-fleet ingest: fleet_loadgen simulates FLEET_HOSTS daemons x FLEET_GPUS GPUs
#     (SERIES_PER_GPU series each, HOST_SERIES per host, jobs coming and going) pushing
#     FLEET_REPORTS reports each over HTTP from FLEET_CONNECTIONS connections; prints samples/s, the service's CPU and RSS, and the
#     ledger's growth per GPU-day.
#  2. The same samples, remote-write encoded, into Debian's prometheus
#     (--web.enable-remote-write-receiver) and, when installed, victoria-metrics; the ratio of
#     vigil-fleet's samples/s to theirs.
#  3. The ledger filled with 30 days of history for those GPUs (bench/fleet_fill_ledger.py):
#     the 30-day attribution query over HTTP (curl), and the dashboard overview load time in
#     headless Chromium (bench/dashboard_load.mjs) when chromium and the dashboard's
#     playwright-core are there.
# A benchmark: it prints figures and fails only when something does not run.
# Targets (docs/deployment.md): ingest >= 200,000 samples/s, the 30-day query < 200 ms,
# the overview < 1 s. BUILD_DIR picks the build (default build).
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=${BUILD_DIR:-build}
bin_dir=${VIGIL_BIN_DIR:-$build_dir/bin}
hosts=${FLEET_HOSTS:-125}
gpus=${FLEET_GPUS:-8}
series=${SERIES_PER_GPU:-24}
host_series=${HOST_SERIES:-0}
reports=${FLEET_REPORTS:-30}
connections=${FLEET_CONNECTIONS:-16}
fleet_bin="$bin_dir/vigil-fleet"
loadgen="$bin_dir/fleet_loadgen"
node_modules=${VIGIL_WEB_NODE_MODULES:-$build_dir/src/fleet/web/app/node_modules}

for tool in curl python3; do
  command -v "$tool" >/dev/null || { echo "bench: $tool is required" >&2; exit 1; }
done
for b in "$fleet_bin" "$loadgen"; do
  [ -x "$b" ] || { echo "bench: $b is missing; build with -DVIGIL_BUILD_BENCH=ON" >&2; exit 1; }
done

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
tmp=$(mktemp -d /tmp/vigil-fleet-bench.XXXXXX)
root_flag=()  # vigil-fleet refuses root unless told; a benchmark run as root tells it.
[ "$(id -u)" -eq 0 ] && root_flag=(--allow-root)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

wait_ready() {  # url pid name
  local deadline=$((SECONDS + 60))
  until curl -fsS -o /dev/null "$1" 2>/dev/null; do
    kill -0 "$2" 2>/dev/null || { echo "bench: $3 exited" >&2; cat "$tmp/$3.log" >&2; exit 1; }
    [ $SECONDS -lt $deadline ] || { echo "bench: $3 not ready in 60 s" >&2; exit 1; }
    sleep 0.1
  done
}
stop() {  # pid: SIGTERM, wait, and forget it
  kill "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
  local left=()
  for p in "${pids[@]}"; do [ "$p" = "$1" ] || left+=("$p"); done
  pids=("${left[@]}")
}
rate_of() { grep -o 'samples_per_s=[0-9]*' "$1" | head -1 | cut -d= -f2; }

sim=(--hosts "$hosts" --gpus "$gpus" --series-per-gpu "$series" --host-series "$host_series"
     --ticks "$reports" --connections "$connections")
echo "simulated fleet: $hosts hosts x $gpus GPUs, $series series per GPU (+4 per job)," \
     "$host_series host series, $reports" \
     "reports of 10 s per daemon, $connections connections; $(nproc) cores"

# 1. vigil-fleet.
port=$(free_port)
"$fleet_bin" serve --listen "127.0.0.1:$port" --db "$tmp/fleet/fleet.db" --log-level warn "${root_flag[@]}" \
  >"$tmp/vigil-fleet.log" 2>&1 &
fleet_pid=$!
pids+=("$fleet_pid")
wait_ready "http://127.0.0.1:$port/healthz" "$fleet_pid" vigil-fleet
"$loadgen" --label vigil-fleet --fleet-url "http://127.0.0.1:$port" --pid "$fleet_pid" \
  --sqlite "$tmp/fleet/fleet.db" "${sim[@]}" | tee "$tmp/fleet.out"

# 2. Prometheus (and VictoriaMetrics) remote-write ingest of the same samples.
prom=${PROMETHEUS:-$(command -v prometheus || true)}
if [ -n "$prom" ]; then
  pport=$(free_port)
  printf 'global:\n  scrape_interval: 1h\n' >"$tmp/prometheus.yml"
  "$prom" --web.enable-remote-write-receiver --storage.tsdb.path="$tmp/prom" \
    --web.listen-address="127.0.0.1:$pport" --config.file="$tmp/prometheus.yml" \
    --log.level=warn >"$tmp/prometheus.log" 2>&1 &
  prom_pid=$!
  pids+=("$prom_pid")
  wait_ready "http://127.0.0.1:$pport/-/ready" "$prom_pid" prometheus
  "$loadgen" --label prometheus --remote-write-url "http://127.0.0.1:$pport/api/v1/write" \
    --pid "$prom_pid" --disk "$tmp/prom" "${sim[@]}" | tee "$tmp/prom.out"
  stop "$prom_pid"
  python3 -c "import sys; f,p=float(sys.argv[1]),float(sys.argv[2]); print(f'ratio vigil-fleet/prometheus samples/s: {f/p:.2f}')" \
    "$(rate_of "$tmp/fleet.out")" "$(rate_of "$tmp/prom.out")"
else
  echo "prometheus: not installed (Debian package prometheus); skipped"
fi
vm=${VICTORIA_METRICS:-$(command -v victoria-metrics || true)}
if [ -n "$vm" ]; then
  vport=$(free_port)
  "$vm" -storageDataPath="$tmp/vm" -httpListenAddr="127.0.0.1:$vport" -loggerLevel=WARN \
    >"$tmp/victoria-metrics.log" 2>&1 &
  vm_pid=$!
  pids+=("$vm_pid")
  wait_ready "http://127.0.0.1:$vport/health" "$vm_pid" victoria-metrics
  "$loadgen" --label victoria-metrics --remote-write-url "http://127.0.0.1:$vport/api/v1/write" \
    --pid "$vm_pid" --disk "$tmp/vm" "${sim[@]}" | tee "$tmp/vm.out"
  stop "$vm_pid"
  python3 -c "import sys; f,p=float(sys.argv[1]),float(sys.argv[2]); print(f'ratio vigil-fleet/victoria-metrics samples/s: {f/p:.2f}')" \
    "$(rate_of "$tmp/fleet.out")" "$(rate_of "$tmp/vm.out")"
fi

# 3. 30 days of history, then the attribution query and the dashboard overview.
stop "$fleet_pid"
python3 bench/fleet_fill_ledger.py "$tmp/fleet/fleet.db" 30
"$fleet_bin" serve --listen "127.0.0.1:$port" --db "$tmp/fleet/fleet.db" --log-level warn "${root_flag[@]}" \
  >>"$tmp/vigil-fleet.log" 2>&1 &
fleet_pid=$!
pids+=("$fleet_pid")
wait_ready "http://127.0.0.1:$port/healthz" "$fleet_pid" vigil-fleet
for by in team user host; do
  best=""
  for _ in 1 2 3 4 5; do
    t=$(curl -fsS -o /dev/null -w '%{time_total}' \
      "http://127.0.0.1:$port/api/v1/attribution?by=$by&since=30d&bucket=6h")
    best=$(python3 -c "import sys; a=[float(x) for x in sys.argv[1:] if x]; print(min(a))" $best "$t")
  done
  echo "attribution by=$by since=30d bucket=6h over HTTP: best of 5 $(python3 -c "print(round(float('$best')*1000,1))") ms"
done
if command -v node >/dev/null; then
  VIGIL_WEB_NODE_MODULES="$node_modules" node bench/dashboard_load.mjs "http://127.0.0.1:$port" 30d 5 ||
    [ $? -eq 77 ]
else
  echo "dashboard: node is not installed; skipped"
fi
