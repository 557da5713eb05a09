#!/bin/bash
# Slurm job array: one shard of the manifest per array task. preview-loop reads its shard from
# SLURM_ARRAY_TASK_ID (minus SLURM_ARRAY_TASK_MIN) of SLURM_ARRAY_TASK_COUNT, so --array must be a
# contiguous range (no :step). Submit with:   sbatch Docs/batch/slurm-array.sh
# Exit 65 (some clips bad: permanent) shows the task FAILED with ExitCode 65:0 in sacct/scontrol and
# is not worth requeueing; exit 75 (transient: timeouts, network, disk full) is. Rerunning the same
# array is safe: finished clips are skipped, permanent failures are not retried (--retry-failed does).
#SBATCH --job-name=previews
#SBATCH --array=0-15
#SBATCH --cpus-per-task=2
#SBATCH --mem=2G
#SBATCH --time=04:00:00
#SBATCH --output=logs/previews-%A_%a.log

set -u
preview-loop batch /shared/library/clips.jsonl --out /shared/previews \
    --recipe /shared/library/recipe.json --jobs "${SLURM_CPUS_PER_TASK:-2}" --progress
status=$?
# Requeue this task once more on a transient failure (needs JobRequeue / --requeue allowed).
if [ "$status" -eq 75 ] && [ "${SLURM_RESTART_COUNT:-0}" -lt 2 ]; then
    scontrol requeue "${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}"
fi
exit "$status"
