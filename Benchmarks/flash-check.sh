#!/usr/bin/env bash
# What render's photosensitive-flash check costs: the same `render` with --flash-safety off and with
# --flash-safety check (the default), on a 10 s 1080p30 H.264 clip this script makes (testsrc2 with
# light noise, kept in Benchmarks/clips/, git-ignored). The two are run alternately, ROUNDS times each
# after one warm-up of each, so load changes hit both alike; prints each one's median wall time and the
# ratio check / off (the target: at most 1.10).
#
#   ./Benchmarks/flash-check.sh [--rounds N] [path/to/preview-loop]   (default: a release build in Benchmarks/.build)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROUNDS=7
if [ "${1:-}" = "--rounds" ]; then ROUNDS="$2"; shift 2; fi
. Benchmarks/common.sh
need ffmpeg awk
BIN="$(binary_argument "${1:-}")"
CLIPS=Benchmarks/clips
mkdir -p "$CLIPS"
CLIP="$CLIPS/flash-1080p30-10s.mp4"
if [ ! -s "$CLIP" ]; then
  log "making $CLIP (1920x1080, 30 fps, 10 s)"
  ffmpeg -v error -nostdin -y -f lavfi -i "testsrc2=size=1920x1080:rate=30:duration=10,noise=alls=6:allf=t" \
    -c:v libx264 -preset veryfast -crf 20 -pix_fmt yuv420p "$CLIP.part.mp4"
  mv "$CLIP.part.mp4" "$CLIP"
fi
WORK="$(mktemp -d "${TMPDIR:-/tmp}/previewloop-flash.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
seconds() {  # runs "$@" once, prints its wall time in seconds
  local start end
  start=$(date +%s.%N); "$@" >/dev/null 2>&1; end=$(date +%s.%N)
  echo "$start $end" | awk '{ printf "%.4f\n", $2 - $1 }'
}
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
row() {  # LABEL ARGS…  (render's arguments without --flash-safety)
  local label="$1"; shift
  local off=() check=()
  "$BIN" render "$@" --flash-safety off -o "$WORK/warm-off.${OUT##*.}" >/dev/null 2>&1
  "$BIN" render "$@" --flash-safety check -o "$WORK/warm-check.${OUT##*.}" >/dev/null 2>&1
  for _ in $(seq "$ROUNDS"); do
    off+=("$(seconds "$BIN" render "$@" --flash-safety off -o "$WORK/off.${OUT##*.}")")
    check+=("$(seconds "$BIN" render "$@" --flash-safety check -o "$WORK/check.${OUT##*.}")")
  done
  local m_off m_check
  m_off=$(printf '%s\n' "${off[@]}" | median)
  m_check=$(printf '%s\n' "${check[@]}" | median)
  awk -v l="$label" -v o="$m_off" -v c="$m_check" -v n="$ROUNDS" \
    'BEGIN { printf "| %s | %.3f s | %.3f s | %.3f× | %d |\n", l, o, c, c / o, n }'
}
echo "| render (10 s 1080p30 H.264 input) | --flash-safety off | check | ratio | rounds |"
echo "|---|---|---|---|---|"
OUT=mp4; row "8 s → 480x270 MP4 at 15 fps (the defaults)" "$CLIP" --length 8
OUT=webp; row "8 s → 640x360 WebP at 30 fps" "$CLIP" --length 8 -s 640x360 --fps 30
