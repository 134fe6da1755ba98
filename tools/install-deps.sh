#!/usr/bin/env bash
# Installs the Debian packages listed in tools/apt-packages.txt that are not installed yet.
# Idempotent: a machine that has everything does no apt work at all. Debian's service units
# (prometheus, node_exporter) are stopped and disabled again: tests start their own instances.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mapfile -t wanted < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' "$here/apt-packages.txt" | grep -v '^$')

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
  echo "vigil: run 'sudo tools/install-deps.sh' (or install them with apt-get) and try again." >&2
  exit 1
fi

echo "vigil: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# Keep package scripts from starting services (prometheus, node_exporter) during the install.
policy=/usr/sbin/policy-rc.d
created_policy=0
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && created_policy=1
fi
trap '[ $created_policy -eq 1 ] && rm -f "$policy"' EXIT
if ! apt-get install -y --no-install-recommends "${missing[@]}" >/tmp/vigil-apt.log 2>&1; then
  apt-get update >/dev/null 2>&1 || true
  apt-get install -y --no-install-recommends "${missing[@]}"
fi
for unit in prometheus prometheus-node-exporter; do
  if command -v systemctl >/dev/null 2>&1; then
    systemctl disable --now "$unit" >/dev/null 2>&1 || true
  fi
done
pkill -x prometheus 2>/dev/null || true
pkill -x prometheus-node-exporter 2>/dev/null || true
exit 0
