#!/bin/bash
# GNU parallel over several hosts: each shard is one job, run on whichever host has a free slot.
# hosts.txt lists `2/user@host` lines (2 = jobs per host); the manifest, recipe and output directory
# must be at the same paths on every host (NFS or similar). The joblog records each shard's exit
# value (0, 65 permanent, 75 transient); --retries reruns a failed job, which only redoes what is
# missing, and --resume-failed on a later run retries the failed shards only.
set -u
SHARDS=32
seq 0 $((SHARDS - 1)) | parallel --sshloginfile hosts.txt --joblog previews.joblog --retries 2 \
    --halt never --tag \
    preview-loop batch /shared/library/clips.jsonl --out /shared/previews \
        --recipe /shared/library/recipe.json --jobs 1 --shard "{}/$SHARDS"
preview-loop batch report /shared/previews
