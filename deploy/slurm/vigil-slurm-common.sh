# SPDX-License-Identifier: Apache-2.0
# Shared by vigil-prolog.sh and vigil-epilog.sh (sourced, not run). Settings, from the
# environment or /etc/default/vigil-slurm:
#   VIGIL_BIN             the vigil CLI (/usr/local/bin/vigil)
#   VIGILD_RPC            vigild's control RPC on this node (127.0.0.1:1778)
#   VIGIL_SLURM_MAPPING   the mapping file vigild reads (vigild --mapping-file), which these
#                         scripts write: /etc/vigil/mapping.toml
#   VIGIL_SLURM_SITE_DIR  the operator's own rules, *.toml, appended after the jobs' rules:
#                         /etc/vigil/mapping.d
#   VIGIL_SLURM_RUN_DIR   per-job state (rules, tracer pid), gone at reboot: /run/vigil-slurm
#   VIGIL_SLURM_RELOAD    how to make vigild re-read the mapping file: "auto" (systemctl reload
#                         vigild where that unit runs, else SIGHUP to the pid vigil status reports)
#                         or a command
#   VIGIL_SLURM_TEAM_FROM which job field names the team when the comment does not: Account
# Nothing here may fail the job: every error is logged and the scripts exit 0.
[ -r /etc/default/vigil-slurm ] && . /etc/default/vigil-slurm
VIGIL_BIN=${VIGIL_BIN:-/usr/local/bin/vigil}
VIGILD_RPC=${VIGILD_RPC:-127.0.0.1:1778}
VIGIL_SLURM_MAPPING=${VIGIL_SLURM_MAPPING:-/etc/vigil/mapping.toml}
VIGIL_SLURM_SITE_DIR=${VIGIL_SLURM_SITE_DIR:-/etc/vigil/mapping.d}
VIGIL_SLURM_RUN_DIR=${VIGIL_SLURM_RUN_DIR:-/run/vigil-slurm}
VIGIL_SLURM_RELOAD=${VIGIL_SLURM_RELOAD:-auto}
VIGIL_SLURM_TEAM_FROM=${VIGIL_SLURM_TEAM_FROM:-Account}

vigil_log() {
  echo "vigil-slurm: job ${SLURM_JOB_ID:-?}: $*" >&2
  command -v logger >/dev/null 2>&1 && logger -t vigil-slurm -- "job ${SLURM_JOB_ID:-?}: $*"
  return 0
}

# A job id as SLURM sets it (digits; an array task's own id is digits too).
vigil_job_id_ok() { [[ "$1" =~ ^[0-9]+$ ]]; }

# Only label-safe characters reach the TOML file (no quotes, backslashes or newlines).
vigil_clean() { printf '%s' "$1" | tr -cd 'A-Za-z0-9._:/@+-' | cut -c1-128; }

# Rebuilds the mapping file from the jobs' rules and the site's, atomically, under a lock
# (prologs and epilogs of different jobs run at once), then has vigild re-read it.
vigil_rebuild_mapping() {
  local dir tmp
  dir=$(dirname "$VIGIL_SLURM_MAPPING")
  mkdir -p "$dir" "$VIGIL_SLURM_RUN_DIR/jobs" || return 1
  (
    flock -w 30 9 || { vigil_log "lock $VIGIL_SLURM_RUN_DIR/lock: timed out"; exit 1; }
    tmp=$(mktemp "$dir/.mapping.XXXXXX") || exit 1
    {
      echo "# Written by vigil-prolog.sh / vigil-epilog.sh: the rules of the running SLURM jobs,"
      echo "# then $VIGIL_SLURM_SITE_DIR/*.toml. Edit those, not this file."
      for f in "$VIGIL_SLURM_RUN_DIR"/jobs/*.toml "$VIGIL_SLURM_SITE_DIR"/*.toml; do
        [ -f "$f" ] && { echo; cat "$f"; }
      done
    } >"$tmp" && chmod 0644 "$tmp" && mv -f "$tmp" "$VIGIL_SLURM_MAPPING" || { rm -f "$tmp"; exit 1; }
  ) 9>"$VIGIL_SLURM_RUN_DIR/lock" || return 1
  vigil_reload
}

vigil_reload() {
  if [ "$VIGIL_SLURM_RELOAD" != auto ]; then
    sh -c "$VIGIL_SLURM_RELOAD" || vigil_log "reload command failed: $VIGIL_SLURM_RELOAD"
    return 0
  fi
  if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet vigild 2>/dev/null; then
    systemctl reload vigild || vigil_log "systemctl reload vigild failed"
    return 0
  fi
  local pid
  pid=$(timeout 10 "$VIGIL_BIN" status --json --host "$VIGILD_RPC" 2>/dev/null |
    sed -n 's/^  "pid": \([0-9][0-9]*\),*$/\1/p' | head -1)
  if [ -n "$pid" ] && kill -HUP "$pid" 2>/dev/null; then
    return 0
  fi
  vigil_log "vigild at $VIGILD_RPC not reachable: the mapping file is read at its next start"
}
