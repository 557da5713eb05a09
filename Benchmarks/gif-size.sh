#!/usr/bin/env bash
# GIF size and quality: `preview-loop render … .gif` against ffmpeg's usual two-pass palette recipe
#   fps=F,scale=W:H,split[a][b];[a]palettegen=stats_mode=diff[p];[b][p]paletteuse=dither=floyd_steinberg:diff_mode=rectangle
# for the same clip, size and frame rate. Prints one table row per clip: bytes of each, the size ratio
# (engine ÷ ffmpeg; target <= 1.1) and the PSNR of each GIF's frames against the clip's own frames
# (target: the engine's at least ffmpeg's).
#
# PSNR is measured against two decodes of the clip to RGB: the accurate one (swscale bicubic with
# full_chroma_int+accurate_rnd: the reference /work/shared/DESIGN.md fixes, and exactly what the engine's
# scaler feeds its quantizer) and ffmpeg's default conversion (what the recipe's palettegen and
# paletteuse see). Each pipeline scores best against its own input; both columns are printed.
#
#   ./Benchmarks/gif-size.sh        # three 3 s clips at 480x270, 15 fps (about half a minute)
#
# The clips are made here with lavfi sources, already at 480x270 and 15 fps and coded as H.264 (CRF 20,
# so still areas carry a decoder's usual noise): the two pipelines then take the same frames with no
# scaling. PSNR is over RGB, all frames (ffmpeg's psnr filter on the raw frames, paired by index).
set -euo pipefail
script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$script_dir/.."
export PATH="/opt/swift/usr/bin:$PATH"
for tool in ffmpeg ffprobe; do command -v "$tool" >/dev/null 2>&1 || { echo "error: $tool is missing (make deps)" >&2; exit 1; }; done
SIZE=480x270 FPS=15 LENGTH=3
work="Benchmarks/results/gif-size.tmp"
rm -rf "$work" && mkdir -p "$work"
swift build -c release --product preview-loop >&2
bin=.build/release/preview-loop

FF=(ffmpeg -hide_banner -nostdin -loglevel error -y)
declare -A sources=(
  [testsrc2]="testsrc2=size=$SIZE:rate=$FPS"
  [mandelbrot]="mandelbrot=size=$SIZE:rate=$FPS"
  [bars-and-ball]="smptehdbars=size=$SIZE:rate=$FPS[b];color=c=white:size=40x40:rate=$FPS[d];[b][d]overlay=x='mod(t*160,440)':y='100+60*sin(t*3)'"
)
psnr() {  # psnr GIF REFERENCE.rgb → average PSNR over all frames
  "${FF[@]}" -i "$1" -fps_mode passthrough -pix_fmt rgb24 -f rawvideo "$1.rgb"
  ffmpeg -hide_banner -nostdin -f rawvideo -pix_fmt rgb24 -s "$SIZE" -r "$FPS" -i "$1.rgb" \
    -f rawvideo -pix_fmt rgb24 -s "$SIZE" -r "$FPS" -i "$2" -lavfi "[0:v][1:v]psnr" -f null - 2>&1 \
    | sed -n 's/.*average:\([0-9.inf]*\).*/\1/p' | tail -1
}
printf '| clip | engine bytes | ffmpeg bytes | size ratio (≤ 1.1) | PSNR vs accurate decode: engine / ffmpeg | PSNR vs default decode: engine / ffmpeg |\n'
printf '|---|---:|---:|---:|---:|---:|\n'
for name in testsrc2 mandelbrot bars-and-ball; do
  clip="$work/$name.mp4"
  "${FF[@]}" -f lavfi -i "${sources[$name]}" -t $LENGTH -c:v libx264 -preset medium -crf 20 -pix_fmt yuv420p "$clip"
  "${FF[@]}" -i "$clip" -pix_fmt rgb24 -f rawvideo "$work/$name.rgb"
  "${FF[@]}" -i "$clip" -vf "scale=${SIZE/x/:}:flags=bicubic+full_chroma_int+accurate_rnd" -pix_fmt rgb24 -f rawvideo "$work/$name-accurate.rgb"
  "$bin" render "$clip" -o "$work/$name-engine.gif" --length $LENGTH --size $SIZE --fps $FPS > /dev/null
  "${FF[@]}" -i "$clip" -t $LENGTH -vf "fps=$FPS,scale=${SIZE/x/:},split[a][b];[a]palettegen=stats_mode=diff[p];[b][p]paletteuse=dither=floyd_steinberg:diff_mode=rectangle" "$work/$name-ffmpeg.gif"
  engine=$(stat -c %s "$work/$name-engine.gif") ffmpeg=$(stat -c %s "$work/$name-ffmpeg.gif")
  ratio=$(awk -v a="$engine" -v b="$ffmpeg" 'BEGIN { printf "%.2f", a / b }')
  printf '| %s | %d | %d | %s | %s / %s | %s / %s |\n' "$name" "$engine" "$ffmpeg" "$ratio" \
    "$(psnr "$work/$name-engine.gif" "$work/$name-accurate.rgb")" "$(psnr "$work/$name-ffmpeg.gif" "$work/$name-accurate.rgb")" \
    "$(psnr "$work/$name-engine.gif" "$work/$name.rgb")" "$(psnr "$work/$name-ffmpeg.gif" "$work/$name.rgb")"
done
