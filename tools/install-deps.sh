#!/usr/bin/env bash
# Installs the Debian packages Vigil needs that are not installed yet:
#   tools/install-deps.sh run    what building and running need (tools/apt-packages-run.txt)
#   tools/install-deps.sh test   that, plus what testing, benchmarks and fuzzing need
#                                (tools/apt-packages-test.txt: test servers, browser, gtest, ...)
# Idempotent: a machine that has everything does no apt work at all. It never stops, disables or
# kills anything it did not start: Debian's scripts may start the service of a package installed
# here for the first time (prometheus, node_exporter, VictoriaMetrics); exactly those units, if
# they were not running before and are now, are stopped again, and disabled again only if they
# were not enabled before. A service the machine already ran is never touched, and no
# policy-rc.d is written. Nothing is written to a fixed path: apt's log goes to a private
# temporary file, removed on exit.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
case "${1:-run}" in
  run) lists=("$here/apt-packages-run.txt") ;;
  test) lists=("$here/apt-packages-run.txt" "$here/apt-packages-test.txt") ;;
  *)
    echo "usage: $0 [run|test]" >&2
    exit 2
    ;;
esac
mapfile -t wanted < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' "${lists[@]}" | grep -v '^$')

missing=()
for pkg in "${wanted[@]}"; do
  # A node/npm already on PATH (e.g. from another repository) must not be replaced by Debian's.
  case "$pkg" in
    nodejs) command -v node >/dev/null 2>&1 && continue ;;
    npm) command -v npm >/dev/null 2>&1 && continue ;;
  esac
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$pkg")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "vigil: these Debian packages are missing: ${missing[*]}" >&2
  echo "vigil: run 'sudo tools/install-deps.sh ${1:-run}' (or install them with apt-get) and try again." >&2
  exit 1
fi

# The service units of the packages about to be installed, and their state before.
declare -A unit_of=([prometheus]=prometheus [prometheus-node-exporter]=prometheus-node-exporter
                    [victoria-metrics]=victoria-metrics)
have_systemd=0
[ -d "${VIGIL_SYSTEMD_RUN_DIR:-/run/systemd/system}" ] && command -v systemctl >/dev/null 2>&1 && have_systemd=1
declare -A was_active=() was_enabled=()
if [ $have_systemd -eq 1 ]; then
  for pkg in "${missing[@]}"; do
    unit="${unit_of[$pkg]:-}"
    [ -n "$unit" ] || continue
    was_active[$unit]=0
    was_enabled[$unit]=0
    systemctl is-active --quiet "$unit" 2>/dev/null && was_active[$unit]=1
    systemctl is-enabled --quiet "$unit" 2>/dev/null && was_enabled[$unit]=1
  done
fi

echo "vigil: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if ! apt-get install -y --no-install-recommends "${missing[@]}" >"$log" 2>&1; then
  apt-get update >/dev/null 2>&1 || true
  apt-get install -y --no-install-recommends "${missing[@]}"
fi

for unit in "${!was_active[@]}"; do
  if [ "${was_active[$unit]}" -eq 0 ] && systemctl is-active --quiet "$unit" 2>/dev/null; then
    echo "vigil: stopping $unit, which installing its package started (the tests run their own)"
    systemctl stop "$unit" >/dev/null 2>&1 || true
  fi
  if [ "${was_enabled[$unit]}" -eq 0 ] && systemctl is-enabled --quiet "$unit" 2>/dev/null; then
    systemctl disable "$unit" >/dev/null 2>&1 || true
  fi
done
exit 0
