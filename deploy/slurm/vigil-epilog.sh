#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# SLURM Epilog (slurm.conf: Epilog=/etc/slurm/vigil-epilog.sh). On each node of an ending job:
# stops the job's tracing policy if it has not fired yet (its whole process group: the wait and
# a vigil trace in flight), removes the job's mapping-file rule and has vigild re-read the file.
# Settings: vigil-slurm-common.sh. Always exits 0.
here=$(dirname "$(readlink -f "$0")")
. "$here/vigil-slurm-common.sh"

vigil_epilog() {
  local job=${SLURM_JOB_ID:-}
  vigil_job_id_ok "$job" || { vigil_log "no SLURM_JOB_ID"; return 0; }
  local jobs="$VIGIL_SLURM_RUN_DIR/jobs"
  if [ -f "$jobs/$job.trace.pid" ]; then
    local pid
    pid=$(cat "$jobs/$job.trace.pid")
    # setsid made it a process group leader: end the group, the sleep or vigil trace with it.
    if [[ "$pid" =~ ^[0-9]+$ ]] && kill -TERM -- "-$pid" 2>/dev/null; then
      vigil_log "tracing policy stopped (pid $pid)"
    fi
    rm -f "$jobs/$job.trace.pid" "$jobs/$job.trace.log"
  fi
  if [ -f "$jobs/$job.toml" ]; then
    rm -f "$jobs/$job.toml"
    vigil_rebuild_mapping || vigil_log "mapping file not rewritten"
  fi
}

vigil_epilog
exit 0
