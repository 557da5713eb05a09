#!/usr/bin/env bash
# What deinterlacing costs, side by side with ffmpeg's own deinterlacers on the same 1080i clip (made
# here: testsrc2 at 50 fields/s woven top field first and coded as interlaced H.264 with
# -flags +ilme+ildct -top 1; kept in Benchmarks/clips/, git-ignored):
#   - ours: `preview-loop loop CLIP --length 4 -s 320x180` (offline: every frame decoded, deinterlaced at
#     1920x1080, scaled to 320x180 RGB as fast as possible) with --deinterlace on and off;
#   - ffmpeg: the same decode and 320x180 RGB scale to the null muxer, with `bwdif` / `yadif`
#     (mode=send_frame: one frame per frame, like ours) and without a deinterlacer.
# Prints the median of RUNS timed runs (after one warm-up), each one's deinterlacing cost per frame
# (its time minus the same pipeline's time without deinterlacing, over the frame count) and the ratios.
#
#   ./Benchmarks/deinterlace.sh [--runs N] [path/to/preview-loop]   (default: a release build in Benchmarks/.build)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
RUNS=5
if [ "${1:-}" = "--runs" ]; then RUNS="$2"; shift 2; fi
. Benchmarks/common.sh
BIN="$(binary_argument "${1:-}")"
CLIPS=Benchmarks/clips
CLIP="$CLIPS/interlaced-1080i-4s.mp4"
FRAMES=100
mkdir -p "$CLIPS"
if [ ! -s "$CLIP" ]; then
  echo "making $CLIP (1920x1080i, $FRAMES frames at 25 fps)…" >&2
  ffmpeg -v error -nostdin -y -f lavfi -i "testsrc2=size=1920x1080:rate=50,format=yuv420p,tinterlace=mode=interleave_top,setfield=tff" \
    -frames:v "$FRAMES" -c:v libx264 -preset veryfast -crf 20 -flags +ilme+ildct -top 1 -pix_fmt yuv420p "$CLIP"
fi
median() {  # runs "$@" RUNS times after a warm-up; prints the median wall time in seconds
  "$@" >/dev/null 2>&1
  for _ in $(seq "$RUNS"); do
    local start end
    start=$(date +%s.%N); "$@" >/dev/null 2>&1; end=$(date +%s.%N)
    echo "$start $end" | awk '{ printf "%.4f\n", $2 - $1 }'
  done | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'
}
ffmpeg_run() {  # FILTER (before the scale)
  ffmpeg -v error -nostdin -i "$CLIP" -an -vf "$1scale=320:180:flags=bicubic,format=rgb24" -f null -
}
ours_on=$(median "$BIN" loop "$CLIP" --length 4 -s 320x180 --deinterlace on)
ours_off=$(median "$BIN" loop "$CLIP" --length 4 -s 320x180 --deinterlace off)
ff_none=$(median ffmpeg_run "")
ff_bwdif=$(median ffmpeg_run "bwdif=mode=send_frame:parity=tff,")
ff_yadif=$(median ffmpeg_run "yadif=mode=send_frame:parity=tff,")
echo "$FRAMES frames of 1920x1080i H.264 → 320x180 RGB, median of $RUNS runs"
echo
echo "| pipeline | with deinterlacing | without | deinterlacing per frame | ratio with / without |"
echo "|---|---:|---:|---:|---:|"
row() {  # LABEL WITH WITHOUT
  awk -v l="$1" -v a="$2" -v b="$3" -v n="$FRAMES" \
    'BEGIN { printf "| %s | %.3f s | %.3f s | %.2f ms | %.2f× |\n", l, a, b, (a - b) * 1000 / n, a / b }'
}
row "preview-loop loop --deinterlace on / off (ours, motion-adaptive)" "$ours_on" "$ours_off"
row "ffmpeg -vf bwdif" "$ff_bwdif" "$ff_none"
row "ffmpeg -vf yadif" "$ff_yadif" "$ff_none"
echo
awk -v on="$ours_on" -v off="$ours_off" -v bw="$ff_bwdif" -v ya="$ff_yadif" -v none="$ff_none" 'BEGIN {
  printf "whole pipeline, ours with deinterlacing / ffmpeg with bwdif: %.2f×, / ffmpeg with yadif: %.2f×\n", on / bw, on / ya
  if (bw - none > 0.0005) printf "deinterlacing cost alone, ours / bwdif: %.2f×", (on - off) / (bw - none); else printf "bwdif cost below the timer"
  if (ya - none > 0.0005) printf ", ours / yadif: %.2f×\n", (on - off) / (ya - none); else printf "\n"
}'
