#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What `make run` and `make demo` start: vigil-fleet (ledger under ./var/) in the background and
# vigild in the foreground pushing to it, after printing where to look. `--demo` adds the simulated
# GPU backend and fills the fleet service with a simulated fleet, all in its own state under
# build/demo/ (vigil-fleet's ledger and vigild's spool; VIGIL_DEMO_DIR overrides it), so a later
# `make run` never shows simulated hosts and the demo never writes the real state directory.
# Other arguments go to vigild.
# As non-root it still runs, with reduced features and the unix socket under $XDG_RUNTIME_DIR or
# /tmp/vigil-<uid>/ (vigild logs what is reduced).
set -euo pipefail
cd "$(dirname "$0")/.."

bin_dir=${VIGIL_BIN_DIR:-build/bin}
http=${VIGIL_HTTP_LISTEN:-127.0.0.1:9479}
rpc=${VIGIL_RPC_LISTEN:-127.0.0.1:1778}
fleet=${VIGIL_FLEET_LISTEN:-127.0.0.1:9480}
args=()
demo=0
for arg in "$@"; do
  case "$arg" in
    --demo) demo=1 ;;
    *) args+=("$arg") ;;
  esac
done

if [ ! -x "$bin_dir/vigild" ]; then
  echo "run.sh: $bin_dir/vigild is missing; run 'make build' first" >&2
  exit 1
fi

if [ "$(id -u)" -eq 0 ]; then
  socket=/run/vigil/vigild.sock
elif [ -n "${XDG_RUNTIME_DIR:-}" ] && [ -d "${XDG_RUNTIME_DIR}" ]; then
  socket="$XDG_RUNTIME_DIR/vigil/vigild.sock"
else
  socket="/tmp/vigil-$(id -u)/vigild.sock"
fi
# A socket given on the command line is the one vigild listens on.
prev=""
for arg in "${args[@]}"; do
  case "$arg" in
    --unix-socket=*) socket=${arg#--unix-socket=} ;;
    *) [ "$prev" = --unix-socket ] && socket=$arg ;;
  esac
  prev=$arg
done
# Where vigil-fleet keeps its ledger and log.
var=var
if [ "$demo" -eq 1 ]; then
  var=$(realpath -m "${VIGIL_DEMO_DIR:-build/demo}")
  # A fresh simulated fleet each time: its jobs are laid out relative to now.
  rm -f "$var"/fleet.db "$var"/fleet.db-*
  mkdir -p "$var/vigild"
  args=(--gpu-backend sim --state-dir "$var/vigild" "${args[@]}")
fi

# vigil-fleet needs no privilege and refuses root: as root, run it as the vigil system user
# (created here when missing, as deploy/systemd/vigil.sysusers does on a host), else nobody.
fleet_as=()
if [ "$(id -u)" -eq 0 ]; then
  fleet_user=vigil
  if ! id -u vigil >/dev/null 2>&1; then
    useradd --system --user-group --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin vigil >/dev/null 2>&1 || fleet_user=nobody
    [ "$fleet_user" = vigil ] && echo "run.sh: created the vigil system user for vigil-fleet"
  fi
  fleet_as=(setpriv --reuid="$fleet_user" --regid="$(id -g "$fleet_user")" --clear-groups
    --inh-caps=-all --bounding-set=-all --no-new-privs)
fi

fleet_pid=""
if [ -x "$bin_dir/vigil-fleet" ]; then
  mkdir -p "$var"
  fleet_root=()
  if [ "$(id -u)" -eq 0 ]; then
    chown "$fleet_user:" "$var" "$var"/fleet.db* 2>/dev/null || chown "$fleet_user:" "$var"
    # A checkout under a private directory (e.g. /root) is out of that user's reach: then run
    # it as root, which it allows only when told, and say so.
    if ! "${fleet_as[@]}" sh -c 'test -x "$1" && test -w "$2"' _ "$bin_dir/vigil-fleet" "$var"; then
      echo "run.sh: $fleet_user cannot reach $bin_dir or $var/ (a private parent directory);" \
        "running vigil-fleet as root with --allow-root"
      fleet_as=()
      fleet_user=""
      fleet_root=(--allow-root)
    fi
  fi
  "${fleet_as[@]}" "$bin_dir/vigil-fleet" serve "${fleet_root[@]}" --listen "$fleet" \
    --db "$var/fleet.db" >"$var/vigil-fleet.log" 2>&1 &
  fleet_pid=$!
  trap 'kill "$fleet_pid" 2>/dev/null || true' EXIT
  for _ in $(seq 1 100); do
    curl -fsS "http://$fleet/healthz" >/dev/null 2>&1 && break
    if ! kill -0 "$fleet_pid" 2>/dev/null; then
      echo "run.sh: vigil-fleet exited; see $var/vigil-fleet.log" >&2
      exit 1
    fi
    sleep 0.1
  done
  args=(--fleet-url "http://$fleet" "${args[@]}")
  if [ "$demo" -eq 1 ] && command -v node >/dev/null 2>&1; then
    node tools/demo-fleet.mjs "http://$fleet" || true
  fi
fi

cat <<MSG
vigild is starting in the foreground (Ctrl-C stops it).
  dashboard:    http://$fleet/   (vigil-fleet${fleet_user:+ as $fleet_user}, log in $var/vigil-fleet.log)
  metrics:      http://$http/metrics
  JSON API:     http://$http/api/v1/status
  control RPC:  $rpc and unix:$socket
  try:          $bin_dir/vigil status
                $bin_dir/vigil top
                $bin_dir/vigil analyze tests/data/traces/h100_bert_small.json.gz
                $bin_dir/vigil fleet report --by team --since 1h
MSG
if [ "$(id -u)" -ne 0 ]; then
  echo "  (not root: some collectors have reduced features; 'vigil status' lists them)"
fi
if [ "$demo" -eq 1 ]; then
  echo "  demo: simulated GPUs (--gpu-backend sim) and fleet; its state is in $var/ (rm -rf it to start over)"
fi
echo

"$bin_dir/vigild" --http-listen "$http" --rpc-listen "$rpc" "${args[@]}"
