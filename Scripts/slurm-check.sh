#!/usr/bin/env bash
# A real one-node Slurm cluster, started and stopped here, runs `preview-loop batch` as an array job
# over a manifest of fixtures with a corrupt and a missing clip; then GNU parallel runs the same
# shards. Checks (each prints "ok: …" or fails the script):
#   - every good clip is done exactly once across the shards; the bad ones are permanent failures
#     with their reason;
#   - Slurm itself reports the array tasks holding a bad clip FAILED with exit code 65 (scontrol and
#     the jobcomp/filetxt log; no slurmdbd needed), the others COMPLETED 0;
#   - a second submission does nothing (every record skipped, no output file touched);
#   - `batch report` counts right;
#   - GNU parallel (--joblog, shards as jobs) gives the same records, the same exit codes per shard
#     and byte-identical outputs.
# Installs slurm-wlm, munge and parallel with apt-get when missing. Daemons are started by pid in a
# temporary directory and stopped, and everything removed, on exit (also on failure or Ctrl-C).
#
# Usage: Scripts/slurm-check.sh   (PREVIEW_LOOP=path/to/preview-loop, default .build/release/preview-loop;
#                                  SHARDS=4; TIMEOUT=300 seconds for the array job)
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BIN="$(realpath "${PREVIEW_LOOP:-$ROOT/.build/release/preview-loop}")"
SHARDS="${SHARDS:-4}"
TIMEOUT="${TIMEOUT:-300}"
[[ -x "$BIN" ]] || { echo "slurm-check: $BIN is missing; run 'swift build -c release' first" >&2; exit 1; }

missing=()
command -v slurmctld >/dev/null || missing+=(slurm-wlm)
command -v munged >/dev/null || missing+=(munge)
command -v parallel >/dev/null || missing+=(parallel)
command -v python3 >/dev/null || missing+=(python3)
if ((${#missing[@]})); then
    SUDO=""; [[ $(id -u) -eq 0 ]] || SUDO=sudo
    echo "slurm-check: installing ${missing[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
[[ $(id -u) -eq 0 ]] || { echo "slurm-check: run as root (slurmd starts jobs as their user)" >&2; exit 1; }

STARTED=$(date +%s)
WORK="$(mktemp -d /tmp/slurm-check.XXXXXX)"
chmod 700 "$WORK"
PIDS=()
cleanup() {
    status=$?
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    if [[ $status -ne 0 ]]; then
        echo "slurm-check: FAILED (status $status); daemon logs:" >&2
        tail -n 20 "$WORK"/*.log "$WORK"/*.out 2>/dev/null >&2 || true
    fi
    rm -rf "$WORK"
    echo "slurm-check: daemons stopped, $WORK removed ($(( $(date +%s) - STARTED )) s in all)"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
fail() { echo "slurm-check: FAIL: $*" >&2; exit 1; }

# --- The manifest: good fixtures, a corrupt clip (media data zeroed) and a missing one ------------
mkdir -p "$WORK/clips"
python3 - "$ROOT/Fixtures/landscape.mp4" "$WORK/clips/corrupt.mp4" <<'PY'
import sys
data = bytearray(open(sys.argv[1], 'rb').read())
at = data.find(b'mdat')
data[at + 4:] = bytes(len(data) - at - 4)
open(sys.argv[2], 'wb').write(data)
PY
GOOD=(landscape rotated90 rotated180 rotated270 short vp9 offset card anamorphic fade-in dark slate)
{
    for name in "${GOOD[@]}"; do
        file=$(ls "$ROOT/Fixtures/$name".* | head -1)
        printf '{"id":"%s","input":"%s"}\n' "$name" "$file"
    done
    printf '{"id":"corrupt","input":"%s"}\n' "$WORK/clips/corrupt.mp4"
    printf '{"id":"missing","input":"%s"}\n' "$WORK/clips/missing.mp4"
} > "$WORK/clips.jsonl"
echo '{"poster":{},"sprites":{"every":1},"hover":{"length":2}}' > "$WORK/recipe.json"

# --- munge and a one-node Slurm ---------------------------------------------------------------------
dd if=/dev/urandom of="$WORK/munge.key" bs=1024 count=1 status=none
chmod 400 "$WORK/munge.key"
mkdir -p "$WORK/state" "$WORK/spool"
munged --foreground --force --key-file="$WORK/munge.key" --socket="$WORK/munge.socket" \
    --pid-file="$WORK/munged.pid" --log-file="$WORK/munged.log" --seed-file="$WORK/munge.seed" \
    >"$WORK/munged.out" 2>&1 &
PIDS+=($!)
for _ in $(seq 50); do [[ -S "$WORK/munge.socket" ]] && break; sleep 0.1; done
[[ -S "$WORK/munge.socket" ]] || fail "munged did not start"

read -r CTLD_PORT SLURMD_PORT < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
NODE=plcheck1
CPUS=$(nproc)
cat > "$WORK/slurm.conf" <<CONF
ClusterName=plcheck
SlurmctldHost=$(hostname -s)(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
AuthType=auth/munge
AuthInfo=socket=$WORK/munge.socket
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$WORK/state
SlurmdSpoolDir=$WORK/spool
SlurmctldPidFile=$WORK/slurmctld.pid
SlurmdPidFile=$WORK/slurmd.pid
SlurmctldLogFile=$WORK/slurmctld.log
SlurmdLogFile=$WORK/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/filetxt
JobCompLoc=$WORK/jobcomp.txt
MinJobAge=3600
NodeName=$NODE NodeAddr=127.0.0.1 NodeHostname=$(hostname -s) CPUs=$CPUS State=UNKNOWN
PartitionName=check Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$WORK/slurm.conf"
slurmctld -D -i -f "$SLURM_CONF" >"$WORK/slurmctld.out" 2>&1 &
PIDS+=($!)
slurmd -D -f "$SLURM_CONF" -N "$NODE" >"$WORK/slurmd.out" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do
    sinfo -h -N -o '%t' 2>/dev/null | grep -qE '^(idle|mix)' && break
    sleep 0.2
done
sinfo -h -N -o '%t' | grep -qE '^(idle|mix)' || fail "the node did not come up: $(sinfo -N 2>&1)"
echo "ok: one-node Slurm up ($(sinfo -h -o '%P %D node, %c CPUs, %t'); $(( $(date +%s) - STARTED )) s)"

submit() {   # → job id; the array job runs preview-loop batch, one shard per task, in $WORK
    sbatch --parsable --array=0-$((SHARDS - 1)) --chdir="$WORK" --output="$WORK/task-%A_%a.log" \
        --job-name=preview-batch --cpus-per-task=1 \
        --wrap "exec '$BIN' batch clips.jsonl --out OUT --recipe recipe.json --jobs 1"
}
wait_for() {  # job id: waits (bounded) until no task is pending or running
    local deadline=$(( $(date +%s) + TIMEOUT ))
    while squeue -h -j "$1" 2>/dev/null | grep -q .; do
        (( $(date +%s) < deadline )) || fail "job $1 still running after $TIMEOUT s"
        sleep 0.5
    done
}
task_states() {  # job id → "index state exitcode" per task, from slurmctld
    for i in $(seq 0 $((SHARDS - 1))); do
        scontrol -o show job "${1}_$i" | python3 -c '
import sys, re
line = sys.stdin.read()
state = re.search(r"JobState=(\S+)", line).group(1)
code = re.search(r" ExitCode=(\S+)", line).group(1)
print(sys.argv[1], state, code)' "$i"
    done
}

# --- First submission ---------------------------------------------------------------------------------
JOB=$(submit)
wait_for "$JOB"
task_states "$JOB" > "$WORK/states.txt"
echo "Slurm's view of array job $JOB (task, state, exit code:signal):"; sed 's/^/  /' "$WORK/states.txt"

python3 - "$WORK" "$SHARDS" "${GOOD[@]}" <<'PY'
import json, sys, glob, os
work, shards, good = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
records, expected_exit = {}, {}
for index in range(shards):
    path = f"{work}/OUT/results.shard-{index}-of-{shards}.jsonl"
    lines = [json.loads(l) for l in open(path)]
    assert lines[-1]["type"] == "summary", path
    clips = [l for l in lines if l["type"] == "clip"]
    expected_exit[index] = 65 if any(c.get("permanence") == "permanent" for c in clips) else 0
    for c in clips:
        records.setdefault(c["id"], []).append((index, c))
for name in good:
    done = [c for _, c in records.get(name, []) if c["status"] == "ok" and not c["skipped"]]
    assert len(records.get(name, [])) == 1 and len(done) == 1, f"{name}: {records.get(name)}"
    assert os.path.exists(f"{work}/OUT/{name}/.complete.json"), name
print(f"ok: all {len(good)} good clips done exactly once across {shards} shards")
for name, reason in [("corrupt", "corrupt_data"), ("missing", "input_not_found")]:
    [(index, c)] = records[name]
    assert c["status"] == "failed" and c["reason"] == reason and c["permanence"] == "permanent", c
    assert not os.path.exists(f"{work}/OUT/{name}"), name
    print(f"ok: {name} is a permanent failure ({reason}) in shard {index}")
states = {int(i): (s, code) for i, s, code in (l.split() for l in open(f"{work}/states.txt"))}
jobcomp = open(f"{work}/jobcomp.txt").read()
for index, code in expected_exit.items():
    state, exit_code = states[index]
    want = ("FAILED", "65:0") if code == 65 else ("COMPLETED", "0:0")
    assert (state, exit_code) == want, f"task {index}: Slurm says {state} {exit_code}, expected {want}"
assert 65 in expected_exit.values(), "no shard failed: the check would prove nothing"
failed_lines = [l for l in jobcomp.splitlines() if "JobState=FAILED" in l and "ExitCode=65:0" in l]
assert len(failed_lines) == list(expected_exit.values()).count(65), jobcomp
print(f"ok: Slurm reports the tasks with bad clips FAILED, exit 65 (scontrol; jobcomp/filetxt: {len(failed_lines)} line(s)), the others COMPLETED 0")
json.dump({str(k): v for k, v in expected_exit.items()}, open(f"{work}/expected-exit.json", "w"))
PY

# --- Second submission: nothing to do ----------------------------------------------------------------
snapshot() { (cd "$WORK/OUT" && find . -path './.*' -prune -o -path './results*' -prune -o -type f -printf '%p %s %T@\n' | sort); }
snapshot > "$WORK/before.txt"
JOB2=$(submit)
wait_for "$JOB2"
snapshot > "$WORK/after.txt"
cmp -s "$WORK/before.txt" "$WORK/after.txt" || fail "the second submission changed outputs"
python3 - "$WORK" "$SHARDS" <<'PY'
import json, sys
work, shards = sys.argv[1], int(sys.argv[2])
for index in range(shards):
    # A rerun appends after the first run's records and summary: its own are those after that summary.
    path = f"{work}/OUT/results.shard-{index}-of-{shards}.jsonl"
    lines = [json.loads(line) for line in open(path)]
    summaries = [number for number, record in enumerate(lines) if record["type"] == "summary"]
    assert len(summaries) == 2 and summaries[-1] == len(lines) - 1, f"{path}: two runs, each ending in its summary"
    for record in lines[summaries[0] + 1:]:
        assert record["type"] == "summary" or (record["skipped"] and record["attempts"] == 0), record
PY
echo "ok: a second submission (job $JOB2) skipped every clip and touched no output ($(wc -l < "$WORK/before.txt") files)"

"$BIN" batch report "$WORK/OUT" --json > "$WORK/report.json"
python3 - "$WORK/report.json" "${#GOOD[@]}" <<'PY'
import json, sys
report, good = json.load(open(sys.argv[1])), int(sys.argv[2])
assert (report["clips"], report["ok"], report["failed"], report["permanent"], report["transient"]) == (good + 2, good, 2, 2, 0), report
assert report["failures_by_reason"] == {"corrupt_data": ["corrupt"], "input_not_found": ["missing"]}, report
PY
"$BIN" batch report "$WORK/OUT" | sed 's/^/  /'
echo "ok: batch report counts $(( ${#GOOD[@]} + 2 )) clips, ${#GOOD[@]} ok, 2 permanent failures by reason"

# --- The same shards under GNU parallel ----------------------------------------------------------------
cd "$WORK"
set +e
seq 0 $((SHARDS - 1)) | parallel --joblog "$WORK/joblog" -j 2 \
    "'$BIN' batch clips.jsonl --out OUT2 --recipe recipe.json --jobs 1 --shard {}/$SHARDS > /dev/null"
PARALLEL_STATUS=$?
set -e
python3 - "$WORK" "$SHARDS" <<'PY'
import json, sys, os, filecmp
work, shards = sys.argv[1], int(sys.argv[2])
expected = {int(k): v for k, v in json.load(open(f"{work}/expected-exit.json")).items()}
rows = [l.rstrip("\n").split("\t") for l in open(f"{work}/joblog")][1:]
got = {}
for r in rows:
    command = r[-1]
    index = int(command.split("--shard ")[1].split("/")[0])
    got[index] = int(r[6])
assert got == expected, f"parallel exit values {got}, Slurm's {expected}"
def records(out):
    result = {}
    for index in range(shards):
        for line in open(f"{work}/{out}/results.shard-{index}-of-{shards}.jsonl"):
            r = json.loads(line)
            if r["type"] == "clip":
                result[r["id"]] = (r["status"], r.get("reason"), r.get("permanence"), sorted((o["path"], o["bytes"]) for o in r["outputs"]))
    return result
first = records("OUT")
assert records("OUT2") == first, "GNU parallel's records differ from Slurm's"
for clip, (status, *_ , outputs) in first.items():
    for path, _ in outputs:
        assert filecmp.cmp(f"{work}/OUT/{path}", f"{work}/OUT2/{path}", shallow=False), path
print(f"ok: GNU parallel (--joblog, {shards} shards as jobs) gave the same records, exit values {sorted(got.items())} and byte-identical outputs")
PY
echo "ok: parallel exited $PARALLEL_STATUS (the number of failed jobs)"
echo "slurm-check: all checks passed"
