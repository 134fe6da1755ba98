#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What `make bench` runs: every Google Benchmark binary in build/bench/ (if any), then the
# whole-process benchmarks: vigild against Debian's prometheus-node-exporter, vigild with 8 (fake)
# GPUs, and vigil analyze against Holistic Trace Analysis' recorded timings.
# BUILD_DIR (default build) picks the build; BENCH_SECONDS shortens the comparison.
set -uo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
status=0

if [ -d "$build_dir/bench" ]; then
  for binary in "$build_dir"/bench/*; do
    [ -f "$binary" ] && [ -x "$binary" ] || continue
    echo "== $binary"
    "$binary" --benchmark_min_time=0.2 || status=1
    echo
  done
fi

echo "== vigild vs node_exporter"
VIGIL_BIN_DIR="$build_dir/bin" bench/daemon_vs_node_exporter.sh || status=1
echo
echo "== vigild with 8 GPUs"
BUILD_DIR="$build_dir" bench/daemon_gpu_cost.sh || status=1
echo
echo "== vigil analyze vs HTA"
VIGIL_BIN="$build_dir/bin/vigil" bench/analyze_vs_hta.sh || status=1
echo; echo "== vigil analyze on a synthetic multi-GB trace"; BUILD_DIR="$build_dir" bench/analyze_synthetic.sh || status=1
echo; echo "== vigil-fleet ingest, 30-day query and dashboard vs prometheus"; BUILD_DIR="$build_dir" bench/fleet_vs_prometheus.sh || status=1
exit $status
