#!/usr/bin/env bash
# The cost of `sheet --pick scenes`: against `sheet --pick even` on the same clip (target <= 1.5x) and
# against ffmpeg doing the same job with its scene filter, `select='gt(scene,0.3)'` then a 4x4 tile
# sheet (target <= 0.5x). Prints the medians and the ratios (engine ÷ peer; below 1 the engine is faster).
#
#   ./Benchmarks/scenes.sh                 # 3 timed runs per command after a warm-up
#   ./Benchmarks/scenes.sh --runs 5
#   ./Benchmarks/scenes.sh --bin PATH      # time this preview-loop binary instead of building one
#
# The clip (made once into Benchmarks/clips/scenes-1080p.mp4): 60 s of 1920x1080 at 25 fps, ten 6 s
# shots of different lavfi sources with light moving noise, H.264 (libx264 veryfast, CRF 23, x264's
# defaults: keyframes at most 250 frames apart and at scene cuts). Every command decodes with 2 threads.
# The release binary is built into Benchmarks/.build (shared with run.sh). Scratch: Benchmarks/results/scenes.tmp/.
set -euo pipefail
script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$script_dir/.."
ROOT="$PWD"
RUNS=3
BIN=""
while (($#)); do
  case "$1" in
    --runs) [[ $# -ge 2 && "$2" =~ ^[1-9][0-9]*$ ]] || { echo "error: --runs needs a positive number" >&2; exit 64; }
            RUNS="$2"; shift 2 ;;
    --bin) [[ $# -ge 2 && -x "$2" ]] || { echo "error: --bin needs an executable" >&2; exit 64; }
           BIN="$2"; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "error: unknown argument '$1' (try --help)" >&2; exit 64 ;;
  esac
done
. Benchmarks/common.sh
need ffmpeg python3

WORK="$ROOT/Benchmarks/results/scenes.tmp"
rm -rf "$WORK"; mkdir -p "$WORK" "$ROOT/Benchmarks/clips"
if [ -z "$BIN" ]; then
  log "swift build -c release --scratch-path Benchmarks/.build"
  BIN="$(release_binary "$WORK/build.log")"
fi

CLIP="$ROOT/Benchmarks/clips/scenes-1080p.mp4"
if [ ! -s "$CLIP" ]; then
  log "making $CLIP"
  ten_shots_clip 1920x1080 "$CLIP" -c:v libx264 -preset veryfast -crf 23
fi

# median seconds of RUNS runs (after one warm-up) of the command given
median() {
  "$@" >/dev/null 2>&1 || { "$@" >&2 || true; die "failed: $*"; }
  local times=()
  for ((run = 0; run < RUNS; run++)); do
    local start end
    start=$(date +%s.%N); "$@" >/dev/null 2>&1; end=$(date +%s.%N)
    times+=("$(python3 -c "print($end - $start)")")
  done
  python3 -c "import statistics,sys; print('%.3f' % statistics.median(map(float, sys.argv[1:])))" "${times[@]}"
}

log "timing ($RUNS runs each)"
even=$(median "$BIN" sheet "$CLIP" -o "$WORK/even.jpg" --grid 4x4)
scenes=$(median "$BIN" sheet "$CLIP" -o "$WORK/scenes.jpg" --grid 4x4 --pick scenes)
peer=$(median ffmpeg -v error -nostdin -y -threads 2 -i "$CLIP" -an \
  -vf "select='gt(scene,0.3)',scale=309:-2,tile=4x4" -frames:v 1 -fps_mode vfr "$WORK/ffmpeg.jpg")
"$BIN" sheet "$CLIP" -o "$WORK/scenes.jpg" --grid 4x4 --pick scenes --json >"$WORK/scenes.json"
cuts=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); s=d['outputs'][0]['plan']['scan']; k=sum(c['evidence'] == 'keyframe' for c in s['cuts']); print(len(s['cuts']), 'cuts (%d on early keyframes);' % k, s.get('packet_candidates'), 'packet candidates;', s['keyframes_decoded'], 'keyframes decoded,', s['groups_decoded'], 'of', s['groups'], 'groups and', s['frames_decoded'], 'frames decoded frame by frame')" "$WORK/scenes.json")
ffcuts=$(ffmpeg -v info -nostdin -threads 2 -i "$CLIP" -an -vf "select='gt(scene,0.3)',showinfo" -f null - 2>&1 | grep -c 'Parsed_showinfo.*pts_time' || true)
printf 'clip: %s (60 s, 1920x1080, 10 shots)\n' "$CLIP"
printf 'sheet --pick even           %8.3f s\n' "$even"
printf 'sheet --pick scenes         %8.3f s   (%s)\n' "$scenes" "$cuts"
printf "ffmpeg select scene>0.3+tile %7.3f s   (%s frames selected)\n" "$peer" "$ffcuts"
python3 -c "import sys; s,e,p=map(float,sys.argv[1:]); print('scenes / even   = %.2fx (target <= 1.5)' % (s/e)); print('scenes / ffmpeg = %.2fx (target <= 0.5)' % (s/p))" "$scenes" "$even" "$peer"
