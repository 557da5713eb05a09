#!/usr/bin/env bash
# Runs Benchmarks/run.sh at two commits, alternately (A, B, A, B), and prints each case's ratio
# (engine ÷ peer) per run, the run-to-run noise of each commit (|run 1 − run 2| ÷ the smaller) and
# B's mean ratio over A's. A change that only moves code should leave every B/A within the noise.
#
#   ./Benchmarks/compare-commits.sh A B          # e.g. 30450a9 HEAD; about 25 min on 2 cores
#   ./Benchmarks/compare-commits.sh --quick A B  # 3 timed runs per command instead of 5
#
# Each commit is checked out in its own scratch worktree (Benchmarks/.compare/<commit>/, git-ignored,
# removed at the end); the clips are made once and shared. The reports are kept in
# Benchmarks/.compare/reports/ (A-1.md, B-1.md, A-2.md, B-2.md), and the comparison is printed as a
# Markdown table.
set -euo pipefail

script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$script_dir/.."
ROOT="$PWD"

MODE=()
if [[ "${1:-}" == "--quick" ]]; then MODE=(--quick); shift; fi
if [[ $# -ne 2 || "$1" == -* ]]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
  exit 64
fi
commit_of() {
  git rev-parse --quiet --verify --short "$1^{commit}" 2>/dev/null \
    || { echo "error: '$1' is not a commit" >&2; exit 64; }
}
A="$(commit_of "$1")"
B="$(commit_of "$2")"

COMPARE="$ROOT/Benchmarks/.compare"
REPORTS="$COMPARE/reports"
mkdir -p "$REPORTS" "$ROOT/Benchmarks/clips"
made=()
cleanup() {
  for dir in "${made[@]}"; do git -C "$ROOT" worktree remove --force "$dir" 2>/dev/null || true; done
}
trap cleanup EXIT

for commit in "$A" "$B"; do
  dir="$COMPARE/$commit"
  if [[ ! -d "$dir" ]]; then
    git -C "$ROOT" worktree add --detach "$dir" "$commit" >/dev/null
    made+=("$dir")
    # One set of clips for both commits (run.sh makes them when missing).
    ln -s "$ROOT/Benchmarks/clips" "$dir/Benchmarks/clips"
  fi
done

for round in 1 2; do
  for side in A B; do
    commit="${!side}"
    echo "==> run $round of $side ($commit)" >&2
    (cd "$COMPARE/$commit" && ./Benchmarks/run.sh "${MODE[@]}") >"$REPORTS/$side-$round.log" 2>&1 \
      || { echo "error: Benchmarks/run.sh failed at $commit; see $REPORTS/$side-$round.log" >&2; exit 1; }
    cp "$COMPARE/$commit/Benchmarks/results/latest.md" "$REPORTS/$side-$round.md"
  done
done

python3 - "$REPORTS" "$A" "$B" <<'PY'
import re, sys
reports, a, b = sys.argv[1:]
row = re.compile(r"\| (\d+[a-z]?)\. ([^|]*) \| [\d.]+ s \| [\d.]+ s \| ([\d.]+) \|")
ratios, names = {}, {}
for run in ("A-1", "A-2", "B-1", "B-2"):
    for line in open(f"{reports}/{run}.md"):
        m = row.match(line)
        if m:
            names[m[1]] = m[2].strip()
            ratios.setdefault(m[1], {})[run] = float(m[3])
print(f"| case | A {a} run 1 | A run 2 | B {b} run 1 | B run 2 | A noise | B noise | B/A |")
print("|---|---|---|---|---|---|---|---|")
for case, r in ratios.items():
    if len(r) != 4:
        continue
    noise = lambda x, y: abs(x - y) / min(x, y)
    ba = (r["B-1"] + r["B-2"]) / (r["A-1"] + r["A-2"])
    print(f"| {case}. {names[case]} | {r['A-1']:.3f} | {r['A-2']:.3f} | {r['B-1']:.3f} | {r['B-2']:.3f} "
          f"| {noise(r['A-1'], r['A-2']):.1%} | {noise(r['B-1'], r['B-2']):.1%} | {ba:.3f} |")
PY
