#!/usr/bin/env bash
# The largest animations the encoders make: grey noise (every pixel new every frame, the worst picture
# for all three) rendered at serve's caps, 640x640 at 30 fps for 10 s, at each format's default quality.
# Prints each file's bytes and its bytes a pixel a frame: the figures behind
# OutputLimits.encodedAnimationBytes, which serve's memory estimate counts for an animation made in memory.
#
#   ./Benchmarks/animation-size.sh               # builds the release binary; about a minute
#   ./Benchmarks/animation-size.sh --bin PATH    # an already built preview-loop
set -euo pipefail
script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$script_dir/.."
export PATH="/opt/swift/usr/bin:$PATH"
command -v ffmpeg >/dev/null 2>&1 || { echo "error: ffmpeg is missing (make deps)" >&2; exit 1; }
bin=""
if [[ "${1:-}" == "--bin" && -n "${2:-}" ]]; then bin="$2"; else
  swift build -c release --product preview-loop >&2
  bin=.build/release/preview-loop
fi
work="Benchmarks/results/animation-size.tmp"
rm -rf "$work" && mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
# Lossless H.264, so the noise reaches the renderer as made.
ffmpeg -hide_banner -nostdin -loglevel error -y -f lavfi -i "nullsrc=s=1280x720:r=30,geq=lum='random(1)*255':cb=128:cr=128" \
  -t 11 -c:v libx264 -preset ultrafast -qp 0 -pix_fmt yuv420p "$work/noise.mp4"
frames=300 pixels=$((640 * 640))
printf '| format | bytes | bytes a pixel a frame |\n|---|---:|---:|\n'
for format in mp4 webp gif; do
  "$bin" render "$work/noise.mp4" --length 10 --size 640x640 --fps 30 -o "$work/noise.$format" >/dev/null
  bytes=$(stat -c %s "$work/noise.$format")
  printf '| %s | %d | %s |\n' "$format" "$bytes" "$(awk -v b="$bytes" -v n=$((frames * pixels)) 'BEGIN { printf "%.2f", b / n }')"
done
