#!/usr/bin/env bash
# Posters side by side with ffmpegthumbnailer (issue 13), on clips this script makes (kept in
# Benchmarks/clips/, git-ignored):
#   1. the default poster of a 10 s 4K HEVC clip: `preview-loop thumb clip -o x.jpg` (first good frame of
#      the first 15 s, 320x180) against `ffmpegthumbnailer -i clip -o x.jpg -s 320` (its default: 10 %);
#   2. `thumb --at best` on a 30-minute 1080p H.264 clip (a 60 s clip stream-copied 30 times) against a
#      single `ffmpegthumbnailer -t 10% -s 320` run, which looks at far less.
# Prints the median wall time of RUNS runs (after one warm-up), the peak RSS (GNU time, max over the
# runs) of each side, and the ratios preview-loop / ffmpegthumbnailer. Targets: (1) <= 1.0x time and
# <= 1.0x RSS; (2) <= 1.5x time.
#
#   ./Benchmarks/poster.sh [--runs N] [path/to/preview-loop]   (default: a release build in Benchmarks/.build)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
RUNS=5
if [ "${1:-}" = "--runs" ]; then RUNS="$2"; shift 2; fi
. Benchmarks/common.sh
BIN="$(binary_argument "${1:-}")"
need ffmpegthumbnailer
CLIPS=Benchmarks/clips
mkdir -p "$CLIPS"
if [ ! -s "$CLIPS/hevc-4k-10s.mp4" ]; then
  echo "making $CLIPS/hevc-4k-10s.mp4…" >&2
  ffmpeg -v error -nostdin -y -f lavfi -i "testsrc2=size=3840x2160:rate=25:duration=10" \
    -c:v libx265 -preset ultrafast -crf 26 -x265-params log-level=error:keyint=50 -pix_fmt yuv420p \
    "$CLIPS/hevc-4k-10s.mp4"
fi
if [ ! -s "$CLIPS/h264-1080p-30min.mp4" ]; then
  echo "making $CLIPS/h264-1080p-30min.mp4…" >&2
  ffmpeg -v error -nostdin -y -f lavfi -i "testsrc2=size=1920x1080:rate=25:duration=60" \
    -f lavfi -i "sine=frequency=440:duration=60" -c:v libx264 -preset ultrafast -crf 28 -g 250 \
    -pix_fmt yuv420p -c:a aac -shortest "$CLIPS/h264-1080p-60s.mp4"
  ffmpeg -v error -nostdin -y -stream_loop 29 -i "$CLIPS/h264-1080p-60s.mp4" -c copy "$CLIPS/h264-1080p-30min.mp4"
fi
WORK="$(mktemp -d "${TMPDIR:-/tmp}/previewloop-poster.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

# measure NAME command…: prints "median_seconds peak_kb"
measure() {
  "$@" >/dev/null 2>&1
  local peak=0
  for _ in $(seq "$RUNS"); do
    local start end kb
    start=$(date +%s.%N)
    /usr/bin/time -f %M -o "$WORK/rss" "$@" >/dev/null 2>&1
    end=$(date +%s.%N)
    kb=$(tail -1 "$WORK/rss"); [ "$kb" -gt "$peak" ] && peak=$kb
    echo "$start $end" | awk '{ printf "%.4f\n", $2 - $1 }' >> "$WORK/times"
  done
  local median
  median=$(sort -n "$WORK/times" | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
  rm -f "$WORK/times"
  echo "$median $peak"
}

row() {  # LABEL ours theirs
  awk -v label="$1" -v a="$2" -v ar="$3" -v b="$4" -v br="$5" 'BEGIN {
    printf "%-44s %7.3f s %7.1f MB | %7.3f s %7.1f MB | time %.2fx  RSS %.2fx\n", label, a, ar / 1024, b, br / 1024, a / b, ar / br }'
}

echo "runs: $RUNS (median time, max peak RSS); preview-loop: $BIN"
printf "%-44s %-21s | %-21s | ratios (preview-loop / ffmpegthumbnailer)\n" "job" "preview-loop" "ffmpegthumbnailer"
read -r t1 r1 < <(measure "$BIN" thumb "$CLIPS/hevc-4k-10s.mp4" -o "$WORK/a.jpg")
read -r t2 r2 < <(measure ffmpegthumbnailer -i "$CLIPS/hevc-4k-10s.mp4" -o "$WORK/b.jpg" -s 320)
row "4K HEVC 10 s: default poster" "$t1" "$r1" "$t2" "$r2"
read -r t3 r3 < <(measure "$BIN" thumb "$CLIPS/h264-1080p-30min.mp4" -o "$WORK/c.jpg" --at best)
read -r t4 r4 < <(measure ffmpegthumbnailer -i "$CLIPS/h264-1080p-30min.mp4" -o "$WORK/d.jpg" -s 320 -t 10%)
row "1080p 30 min: --at best vs -t 10%" "$t3" "$r3" "$t4" "$r4"
