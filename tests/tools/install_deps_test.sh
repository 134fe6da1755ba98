#!/usr/bin/env bash
# tools/install-deps.sh against fake dpkg-query, apt-get and systemctl on PATH: it installs only
# what is missing, stops (and disables) only a service its own install started, never touches a
# service that was running before, never writes policy-rc.d, never calls pkill, and exits 2 on a
# bad argument.
set -euo pipefail
script="$(cd "$(dirname "$0")/../.." && pwd)/tools/install-deps.sh"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

mkdir -p "$work/bin" "$work/state" "$work/systemd"
# dpkg-query: every package is installed except those listed in state/missing.
cat >"$work/bin/dpkg-query" <<'FAKE'
#!/usr/bin/env bash
pkg="${@: -1}"
grep -qx "$pkg" "$FAKE_STATE/missing" 2>/dev/null && exit 1
printf 'install ok installed'
FAKE
# apt-get: records what it installs; "installing" prometheus starts and enables its unit.
cat >"$work/bin/apt-get" <<'FAKE'
#!/usr/bin/env bash
[ "$1" = update ] && exit 0
shift
for a in "$@"; do
  case "$a" in -*) continue ;; esac
  echo "$a" >>"$FAKE_STATE/installed"
  if [ "$a" = prometheus ]; then touch "$FAKE_STATE/prometheus.active" "$FAKE_STATE/prometheus.enabled"; fi
done
FAKE
cat >"$work/bin/systemctl" <<'FAKE'
#!/usr/bin/env bash
echo "$*" >>"$FAKE_STATE/systemctl.log"
case "$1" in
  is-active) [ -e "$FAKE_STATE/${@: -1}.active" ] ;;
  is-enabled) [ -e "$FAKE_STATE/${@: -1}.enabled" ] ;;
  stop) rm -f "$FAKE_STATE/$2.active" ;;
  disable) rm -f "$FAKE_STATE/$2.enabled" ;;
  *) exit 1 ;;
esac
FAKE
printf '#!/bin/sh\necho "$*" >>"$FAKE_STATE/pkill.log"\n' >"$work/bin/pkill"
chmod +x "$work/bin/"*
export PATH="$work/bin:$PATH" FAKE_STATE="$work/state" VIGIL_SYSTEMD_RUN_DIR="$work/systemd"
policy_before="$(ls -l /usr/sbin/policy-rc.d 2>/dev/null || true)"

if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: install-deps.sh installs only as root (run as root to test it)"
  exit 0
fi

# 1. Nothing missing: no apt work at all.
: >"$work/state/missing"
"$script" test
[ ! -e "$work/state/installed" ] || fail "apt-get ran with nothing missing"

# 2. prometheus missing, its unit not running: the install starts it, the script stops it.
echo prometheus >"$work/state/missing"
"$script" test
grep -qx prometheus "$work/state/installed" || fail "prometheus was not installed"
[ ! -e "$work/state/prometheus.active" ] || fail "the service its own install started still runs"
[ ! -e "$work/state/prometheus.enabled" ] || fail "the service its own install enabled is still enabled"

# 3. The machine already runs (and enables) a prometheus unit of its own: left as it is.
rm -f "$work/state/installed"
touch "$work/state/prometheus.active" "$work/state/prometheus.enabled"
: >"$work/state/systemctl.log"
"$script" test
[ -e "$work/state/prometheus.active" ] || fail "stopped a service it did not start"
[ -e "$work/state/prometheus.enabled" ] || fail "disabled a service it did not enable"
! grep -qE '^(stop|disable)' "$work/state/systemctl.log" || fail "called systemctl stop/disable"

# 4. `run` installs no test server: prometheus is a test package.
rm -f "$work/state/installed" "$work/state/prometheus.active" "$work/state/prometheus.enabled"
"$script" run
[ ! -e "$work/state/installed" ] || fail "'run' installed a test package"

[ ! -e "$work/state/pkill.log" ] || fail "pkill was called: $(cat "$work/state/pkill.log")"
[ "$(ls -l /usr/sbin/policy-rc.d 2>/dev/null || true)" = "$policy_before" ] || fail "policy-rc.d changed"
set +e
"$script" bogus 2>/dev/null
[ $? -eq 2 ] || fail "a bad argument must exit 2"
echo "PASS"
