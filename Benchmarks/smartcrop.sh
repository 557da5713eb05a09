#!/usr/bin/env bash
# What --fit smartcrop costs over --fit fill (the same crop size, centred), on a 1080p clip made here
# with the ffmpeg CLI: 10 s of testsrc2 at 25 fps with light noise, H.264, keyint 50, a 480x480
# mandelbrot pasted in its right third (so the smart crop has somewhere to go); and a 1080p clip with
# a face: testsrc2 on the left 840 columns, Fixtures/astronaut.jpg scaled to 1080x1080 on the right;
# and 2 s of one skin tone (0xd09070) with strong noise, every frame a keyframe, where the face
# search cannot skip a window.
#
# For each command, in alternating order (odd rounds smartcrop first, even rounds fill first), after
# one untimed warm-up of each, RUNS timed runs:
#   thumb  --at 5 --size 320x320                  one still: one extra 256x144 analysis per frame
#   strip  --count 16 --size 160x160              sixteen stills, each its own analysis
#   render --length 3 --size 320x320 --fps 25     one analysis, on the first frame, for 75 frames
#   face: thumb --at 1 --size 180x320             one still of the face clip: a face found, the window on it
#   skin: thumb --at 1 --size 180x320             the worst case: a noisy skin-toned frame, every window searched
# Prints the median wall time of each and the ratio smartcrop ÷ fill. Target: every ratio <= 1.10.
#
#   Benchmarks/smartcrop.sh [--runs N] [path/to/preview-loop]
#
# The binary: the path given, else $PREVIEW_LOOP_BIN, else a release build in Benchmarks/.build.
# On the shared machine run it alone: `flock /tmp/previewloop-build.lock Benchmarks/smartcrop.sh`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
RUNS=7
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) RUNS="$2"; shift 2 ;;
    -*) echo "unknown option $1" >&2; exit 64 ;;
    *) break ;;
  esac
done
. Benchmarks/common.sh
need ffmpeg python3
BIN="$(binary_argument "${1:-${PREVIEW_LOOP_BIN:-}}")"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
CLIP="$WORK/wide.mp4"
log "making the 1080p clip"
ffmpeg -v error -nostdin -y -f lavfi -i "testsrc2=size=1920x1080:rate=25:duration=10,noise=alls=6:allf=t" \
  -f lavfi -i "mandelbrot=size=480x480:rate=25" \
  -filter_complex "[0][1]overlay=1380:300:shortest=1,format=yuv420p" -c:v libx264 -g 50 -preset veryfast "$CLIP"
FACE="$WORK/face.mp4"
log "making the 1080p face clip"
ffmpeg -v error -nostdin -y -f lavfi -i "testsrc2=size=840x1080:rate=25:duration=2" \
  -loop 1 -framerate 25 -t 2 -i Fixtures/astronaut.jpg \
  -filter_complex "[1]scale=1080:1080:flags=bicubic[face];[0][face]hstack,format=yuv420p" -c:v libx264 -g 50 -preset veryfast "$FACE"
SKIN="$WORK/skin.mp4"
log "making the 1080p skin-toned clip"
ffmpeg -v error -nostdin -y -f lavfi -i "color=c=0xd09070:size=1920x1080:rate=25:duration=2,noise=alls=40:allf=t,format=yuv420p" \
  -c:v libx264 -g 1 -preset veryfast "$SKIN"

# seconds MODE COMMAND...: one run's wall time.
seconds() {
  local mode="$1"; shift
  local start end
  start=$(date +%s.%N)
  "$BIN" "$@" --fit "$mode" --quiet >/dev/null 2>&1 || die "$BIN $* --fit $mode failed"
  end=$(date +%s.%N)
  python3 -c "print($end - $start)"
}
median() { python3 -c "import statistics, sys; print('%.3f' % statistics.median(float(x) for x in sys.argv[1:]))" "$@"; }

measure() {
  local name="$1"; shift
  local smart=() fill=() round
  seconds smartcrop "$@" >/dev/null; seconds fill "$@" >/dev/null
  for round in $(seq 1 "$RUNS"); do
    if [ $((round % 2)) -eq 1 ]; then
      smart+=("$(seconds smartcrop "$@")"); fill+=("$(seconds fill "$@")")
    else
      fill+=("$(seconds fill "$@")"); smart+=("$(seconds smartcrop "$@")")
    fi
  done
  local s f
  s=$(median "${smart[@]}"); f=$(median "${fill[@]}")
  printf '%-8s smartcrop %6.3f s   fill %6.3f s   ratio %.3f\n' "$name" "$s" "$f" "$(python3 -c "print($s / $f)")"
}

log "$RUNS runs each, medians"
measure thumb thumb "$CLIP" -o "$WORK/t.jpg" --at 5 --size 320x320
measure strip strip "$CLIP" -o "$WORK/s.jpg" --count 16 --size 160x160
measure render render "$CLIP" -o "$WORK/r.mp4" --length 3 --size 320x320 --fps 25
measure face thumb "$FACE" -o "$WORK/f.jpg" --at 1 --size 180x320
measure skin thumb "$SKIN" -o "$WORK/k.jpg" --at 1 --size 180x320
