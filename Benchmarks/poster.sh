#!/usr/bin/env bash
# Posters side by side with ffmpegthumbnailer, on clips this script makes (kept in Benchmarks/clips/,
# git-ignored):
#   1. the default poster (`preview-loop thumb clip -o x.jpg`: the first good frame of the first 15 s,
#      320 wide) against `ffmpegthumbnailer -i clip -o x.jpg -s 320` (its default: one frame at 10 %), on
#      each of these clips:
#        4K HEVC 8 s whose only keyframe is its first frame (no keyframe 1-5 s in: frame-by-frame search)
#        4K HEVC 10 s, keyint 50 (a keyframe 2 s in confirms the first frame)
#        1080p H.264 20 s, keyint 250, B-frames (no keyframe 1-5 s in)
#        1080p H.264 20 s, keyint 25, no B-frames
#        1080x1920 portrait H.264 10 s, keyint 60, B-frames, rotation tag 90 degrees (a phone clip)
#        1080p VP9 10 s, keyint 60
#   2. `thumb --at best` on a 30-minute 1080p H.264 clip (a 60 s clip stream-copied 30 times) against a
#      single `ffmpegthumbnailer -t 10% -s 320` run, which looks at far less.
# Prints the median wall time of RUNS runs (after one warm-up), the peak RSS (GNU time, max over the
# runs) of each side, and the ratios preview-loop / ffmpegthumbnailer. Targets: (1) <= 1.0x time and
# <= 1.0x RSS on each clip; (2) <= 1.5x time. `--only-default` skips (2) (making its clip takes a minute).
#
#   ./Benchmarks/poster.sh [--runs N] [--only-default] [path/to/preview-loop]
#   (default binary: a release build in Benchmarks/.build)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
RUNS=5
ONLY_DEFAULT=0
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) RUNS="$2"; shift 2 ;;
    --only-default) ONLY_DEFAULT=1; shift ;;
    *) break ;;
  esac
done
. Benchmarks/common.sh
BIN="$(binary_argument "${1:-}")"
need ffmpegthumbnailer
CLIPS=Benchmarks/clips
mkdir -p "$CLIPS"
# clip NAME ffmpeg-arguments…: makes $CLIPS/NAME unless it is there (written whole or not at all)
clip() {
  local name="$1"; shift
  [ -s "$CLIPS/$name" ] && return
  echo "making $CLIPS/$name…" >&2
  local part="$CLIPS/part.${name}"
  ffmpeg -v error -nostdin -y "$@" "$part"
  mv "$part" "$CLIPS/$name"
}
x265() { echo "log-level=error:$1"; }
clip hevc-4k-8s-key0.mp4 -f lavfi -i "testsrc2=size=3840x2160:rate=25:duration=8" \
  -c:v libx265 -preset ultrafast -crf 26 -x265-params "$(x265 keyint=-1:scenecut=0:open-gop=0)" -pix_fmt yuv420p -f mp4
clip hevc-4k-10s.mp4 -f lavfi -i "testsrc2=size=3840x2160:rate=25:duration=10" \
  -c:v libx265 -preset ultrafast -crf 26 -x265-params "$(x265 keyint=50)" -pix_fmt yuv420p -f mp4
clip h264-1080p-20s-gop250-bf.mp4 -f lavfi -i "testsrc2=size=1920x1080:rate=25:duration=20" \
  -c:v libx264 -preset ultrafast -crf 26 -g 250 -bf 3 -pix_fmt yuv420p -f mp4
clip h264-1080p-20s-gop25.mp4 -f lavfi -i "testsrc2=size=1920x1080:rate=25:duration=20" \
  -c:v libx264 -preset ultrafast -crf 26 -g 25 -bf 0 -pix_fmt yuv420p -f mp4
clip h264-portrait-10s-rot.mp4 -f lavfi -i "testsrc2=size=1920x1080:rate=30:duration=10" \
  -c:v libx264 -preset ultrafast -crf 26 -g 60 -bf 2 -pix_fmt yuv420p -metadata:s:v:0 rotate=90 -f mp4
clip vp9-1080p-10s.webm -f lavfi -i "testsrc2=size=1920x1080:rate=25:duration=10" \
  -c:v libvpx-vp9 -deadline realtime -cpu-used 8 -row-mt 1 -b:v 4M -g 60 -pix_fmt yuv420p -f webm
if [ "$ONLY_DEFAULT" = 0 ] && [ ! -s "$CLIPS/h264-1080p-30min.mp4" ]; then
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
    printf "%-40s %7.3f s %7.1f MB | %7.3f s %7.1f MB | time %.2fx  RSS %.2fx\n", label, a, ar / 1024, b, br / 1024, a / b, ar / br }'
}

echo "runs: $RUNS (median time, max peak RSS); preview-loop: $BIN"
printf "%-40s %-21s | %-21s | ratios (preview-loop / ffmpegthumbnailer)\n" "job" "preview-loop" "ffmpegthumbnailer"
default_row() {  # LABEL CLIP
  local t1 r1 t2 r2
  read -r t1 r1 < <(measure "$BIN" thumb "$CLIPS/$2" -o "$WORK/a.jpg")
  read -r t2 r2 < <(measure ffmpegthumbnailer -i "$CLIPS/$2" -o "$WORK/b.jpg" -s 320)
  row "$1" "$t1" "$r1" "$t2" "$r2"
}
default_row "4K HEVC 8 s, one keyframe: default" hevc-4k-8s-key0.mp4
default_row "4K HEVC 10 s, keyint 50: default" hevc-4k-10s.mp4
default_row "1080p H.264 keyint 250, B: default" h264-1080p-20s-gop250-bf.mp4
default_row "1080p H.264 keyint 25, no B: default" h264-1080p-20s-gop25.mp4
default_row "1080x1920 H.264 rotated, B: default" h264-portrait-10s-rot.mp4
default_row "1080p VP9 keyint 60: default" vp9-1080p-10s.webm
[ "$ONLY_DEFAULT" = 1 ] && exit 0
read -r t3 r3 < <(measure "$BIN" thumb "$CLIPS/h264-1080p-30min.mp4" -o "$WORK/c.jpg" --at best)
read -r t4 r4 < <(measure ffmpegthumbnailer -i "$CLIPS/h264-1080p-30min.mp4" -o "$WORK/d.jpg" -s 320 -t 10%)
row "1080p 30 min: --at best vs -t 10%" "$t3" "$r3" "$t4" "$r4"
