#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# deploy/systemd's units through `systemd-analyze verify` (Debian's systemd): any warning fails,
# since systemd ignores an unknown key or a bad value with only a warning and the unit then runs
# without that hardening. ExecStart's /usr/local/bin/ is pointed at the built binaries
# (VIGIL_BIN_DIR) so that verify checks that the commands exist. Also checks what the daemon
# relies on: both units keep their state under StateDirectory= while ProtectSystem=strict, and
# `systemd-analyze security` scores their exposure no worse than now.
# Exit 77 (skipped) without systemd-analyze.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
units="$here/../../deploy/systemd"
bin_dir="${VIGIL_BIN_DIR:?VIGIL_BIN_DIR must name the built binaries}"
if ! command -v systemd-analyze >/dev/null 2>&1; then
  echo "SKIPPED: systemd-analyze is not installed (Debian package systemd)"
  exit 77
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failed=0
fail() {
  echo "FAIL: $*"
  failed=1
}

for unit in vigild.service vigil-fleet.service; do
  sed "s|/usr/local/bin/|$bin_dir/|g" "$units/$unit" >"$work/$unit"
  grep -q '^ProtectSystem=strict$' "$work/$unit" || fail "$unit: no ProtectSystem=strict"
  grep -q '^StateDirectory=' "$work/$unit" || fail "$unit: no StateDirectory= (its state would be read-only)"
done
# The paths the commands write must be the state directories systemd makes writable.
grep -q -- "--db /var/lib/vigil-fleet/" "$work/vigil-fleet.service" &&
  grep -q '^StateDirectory=vigil-fleet$' "$work/vigil-fleet.service" ||
  fail "vigil-fleet.service: --db is not under its StateDirectory"
grep -q '^StateDirectory=vigil$' "$work/vigild.service" ||
  fail "vigild.service: vigild's default state dir /var/lib/vigil is not its StateDirectory"

# verify exits 0 on ignored keys and values: its output is the verdict.
out="$(cd "$work" && SYSTEMD_LOG_LEVEL=warning systemd-analyze verify ./vigild.service ./vigil-fleet.service 2>&1)" ||
  fail "systemd-analyze verify exited non-zero"
if [ -n "$out" ]; then
  fail "systemd-analyze verify warned:"
  echo "$out"
fi

# The hardening must not erode: systemd's own exposure score (0 = fully locked down, 10 = none)
# stays at most what the units have now plus a little (vigild 3.8, vigil-fleet 1.5 with systemd
# 252). vigild needs capabilities and host access; vigil-fleet needs none.
if systemd-analyze security --help 2>&1 | grep -q -- --offline; then
  for pair in vigild.service:45 vigil-fleet.service:20; do
    unit=${pair%%:*}
    limit=${pair##*:}
    score="$(cd "$work" && systemd-analyze security --offline=yes "./$unit" 2>&1 | tail -1)"
    (cd "$work" && systemd-analyze security --offline=yes --threshold="$limit" "./$unit" >/dev/null 2>&1) ||
      fail "$unit: exposure above $((limit / 10)).$((limit % 10)): $score"
  done
else
  echo "note: this systemd-analyze has no security --offline; exposure not checked"
fi

# The check itself must catch a typo: a unit with an unknown key and a bad value is refused.
sed -e 's/^ProtectSystem=strict$/ProtectSystem=strct/' -e 's/^NoNewPrivileges=yes$/NoNewPrivilege=yes/' \
  "$work/vigild.service" >"$work/broken.service"
bad="$(cd "$work" && systemd-analyze verify ./broken.service 2>&1 || true)"
echo "$bad" | grep -q "NoNewPrivilege" || fail "verify did not report an unknown key: $bad"
echo "$bad" | grep -qi "protect system" || fail "verify did not report a bad value: $bad"

if [ $failed -eq 0 ]; then
  echo "1 passed, 0 failed"
else
  echo "0 passed, 1 failed"
fi
exit $failed
