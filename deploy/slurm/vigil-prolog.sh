#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# SLURM Prolog (slurm.conf: Prolog=/etc/slurm/vigil-prolog.sh, or one line of a prolog.d). On
# each node of a starting job:
#  * Labels the job for vigild: a mapping-file rule for the job id (docs/attribution.md "Mapping
#    file") with its team (the job's Account, or team= in its comment), model= and framework=
#    from its comment, e.g. `sbatch --comment "model=llama-70b framework=pytorch" ...`; vigild
#    re-reads the file, so the job's GPU series carry team, model and framework.
#  * Starts the job's tracing policy when its comment asks: `vigil-trace=SECONDS` traces the
#    job's PyTorch processes once, that long after the start (vigil trace --slurm-job, from
#    the job's first node only, over all its nodes; the trace lands in vigild's trace root and,
#    with --fleet-url, in vigil-fleet). The epilog stops a policy that has not fired yet.
# Settings: vigil-slurm-common.sh. Always exits 0: a failing prolog would drain the node.
here=$(dirname "$(readlink -f "$0")")
. "$here/vigil-slurm-common.sh"

vigil_prolog() {
  local job=${SLURM_JOB_ID:-}
  vigil_job_id_ok "$job" || { vigil_log "no SLURM_JOB_ID"; return 0; }
  local info
  info=$(timeout 20 scontrol show job -o "$job" 2>/dev/null) || { vigil_log "scontrol show job failed"; info=""; }
  # Comment= runs to the next " Key=" (a comment may hold spaces).
  local comment
  comment=$(printf '%s\n' "$info" | sed -n 's/.* Comment=\(.*\)$/\1/p' | sed 's/ [A-Z][A-Za-z:]*=.*//')
  [ "$comment" = "(null)" ] && comment=""
  field() { printf '%s\n' "$info" | tr ' ' '\n' | sed -n "s/^$1=//p" | head -1; }
  opt() { printf '%s\n' "$comment" | tr ' ,;' '\n\n\n' | sed -n "s/^$1=//p" | head -1; }
  local team model framework trace
  team=$(vigil_clean "$(opt team)")
  [ -n "$team" ] || team=$(vigil_clean "$(field "$VIGIL_SLURM_TEAM_FROM")")
  [ "$team" = "null" ] && team=""
  model=$(vigil_clean "$(opt model)")
  framework=$(vigil_clean "$(opt framework)")
  trace=$(opt vigil-trace)

  mkdir -p "$VIGIL_SLURM_RUN_DIR/jobs"
  if [ -n "$team$model$framework" ]; then
    {
      echo "# SLURM job $job"
      echo "[[rule]]"
      echo "match_job_id = \"^$job\$\""
      [ -n "$team" ] && echo "team = \"$team\""
      [ -n "$model" ] && echo "model = \"$model\""
      [ -n "$framework" ] && echo "framework = \"$framework\""
    } >"$VIGIL_SLURM_RUN_DIR/jobs/$job.toml"
    vigil_rebuild_mapping || vigil_log "mapping file not rewritten"
  fi

  # The tracing policy runs on the job's first node only: vigil trace fans out to every node.
  if [[ "$trace" =~ ^[0-9]+$ ]]; then
    local first
    first=$(timeout 20 scontrol show hostnames "${SLURM_JOB_NODELIST:-}" 2>/dev/null | head -1)
    if [ -z "${SLURM_JOB_NODELIST:-}" ] || [ "$first" = "$(hostname -s)" ] || [ "$first" = "$(hostname)" ]; then
      local log="$VIGIL_SLURM_RUN_DIR/jobs/$job.trace.log"
      setsid bash -c 'sleep "$1" && exec "$2" trace --slurm-job "$3" --job-id "$3" --host "$4" \
          --reason "slurm prolog: vigil-trace=$1" --wait --wait-timeout 10m' \
        vigil-trace "$trace" "$VIGIL_BIN" "$job" "$VIGILD_RPC" </dev/null >"$log" 2>&1 &
      echo $! >"$VIGIL_SLURM_RUN_DIR/jobs/$job.trace.pid"
      vigil_log "tracing policy: one trace ${trace}s after the start (pid $!, log $log)"
    fi
  fi
}

vigil_prolog
exit 0
