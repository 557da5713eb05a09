#!/usr/bin/env bash
# What tone mapping costs: the same preview-loop command with --tonemap auto and --tonemap none on
# HDR10 HEVC clips this script makes (x265, PQ, HDR10 metadata; kept in Benchmarks/clips/, git-ignored):
#   - an exact 4K still: thumb --at 1.5 --accuracy exact, at 320x180 and at 3840x2160
#   - a 15 s 1080p loop to 400x400 (offline: decoded and converted as fast as possible)
# Prints the median of RUNS timed runs (after one warm-up) and the ratio auto / none.
#
#   ./Benchmarks/hdr-speed.sh [--runs N] [path/to/preview-loop]   (default: a release build in Benchmarks/.build)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
RUNS=5
if [ "${1:-}" = "--runs" ]; then RUNS="$2"; shift 2; fi
. Benchmarks/common.sh
BIN="$(binary_argument "${1:-}")"
CLIPS=Benchmarks/clips
mkdir -p "$CLIPS"
X265="log-level=error:repeat-headers=1:colorprim=bt2020:transfer=smpte2084:colormatrix=bt2020nc:hdr10=1"
X265+=":master-display=G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)L(10000000,1):max-cll=1000,400:keyint=50"
ZS="zscale=tin=bt709:min=bt709:pin=bt709:rin=tv:t=smpte2084:p=bt2020:m=bt2020nc:r=tv:npl=203,format=yuv420p10le"
make_clip() {  # NAME SIZE SECONDS
  [ -s "$CLIPS/$1" ] && return
  echo "making $CLIPS/$1 ($2, $3 s)…" >&2
  ffmpeg -v error -nostdin -y -f lavfi -i "testsrc2=size=$2:rate=25:duration=$3,format=yuv420p" -vf "$ZS" \
    -c:v libx265 -preset ultrafast -crf 22 -pix_fmt yuv420p10le -x265-params "$X265" "$CLIPS/$1"
}
make_clip hdr10-4k.mp4 3840x2160 2
make_clip hdr10-1080p-15s.mp4 1920x1080 15
WORK="$(mktemp -d "${TMPDIR:-/tmp}/previewloop-hdrs.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
median() {  # runs "$@" RUNS times after a warm-up; prints the median wall time in seconds
  "$@" >/dev/null 2>&1
  for _ in $(seq "$RUNS"); do
    local start end
    start=$(date +%s.%N); "$@" >/dev/null 2>&1; end=$(date +%s.%N)
    echo "$start $end" | awk '{ printf "%.4f\n", $2 - $1 }'
  done | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'
}
row() {  # LABEL ARGS…  (the command without --tonemap)
  local label="$1"; shift
  local auto none
  auto=$(median "$BIN" "$@" --tonemap auto)
  none=$(median "$BIN" "$@" --tonemap none)
  awk -v l="$label" -v a="$auto" -v n="$none" 'BEGIN { printf "| %s | %.3f s | %.3f s | %.3f× |\n", l, a, n, a / n }'
}
echo "| command | --tonemap auto | --tonemap none | ratio |"
echo "|---|---|---|---|"
row "4K HDR10 exact still → 320x180" thumb "$CLIPS/hdr10-4k.mp4" --at 1.5 --accuracy exact -s 320x180 -o "$WORK/a.ppm"
row "4K HDR10 exact still → 3840x2160" thumb "$CLIPS/hdr10-4k.mp4" --at 1.5 --accuracy exact -s 3840x2160 -o "$WORK/b.ppm"
row "15 s 1080p HDR10 loop → 400x400" loop "$CLIPS/hdr10-1080p-15s.mp4" --length 15 -s 400x400
