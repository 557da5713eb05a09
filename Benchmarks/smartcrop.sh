#!/usr/bin/env bash
# What --fit smartcrop costs over --fit fill (the same crop size, centred), on a 1080p clip made here
# with the ffmpeg CLI: 10 s of testsrc2 at 25 fps with light noise, H.264, keyint 50, a 480x480
# mandelbrot pasted in its right third (so the smart crop has somewhere to go).
#
# For each command, in alternating order (odd rounds smartcrop first, even rounds fill first), after
# one untimed warm-up of each, RUNS timed runs:
#   thumb  --at 5 --size 320x320                  one still: one extra 256x144 analysis per frame
#   strip  --count 16 --size 160x160              sixteen stills, each its own analysis
#   render --length 3 --size 320x320 --fps 25     one analysis, on the first frame, for 75 frames
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
