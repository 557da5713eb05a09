#!/usr/bin/env bash
# HDR round trip: SDR BT.709 clips (testsrc2, SMPTE HD bars, gradients) converted by zimg (`zscale`) to
# 10-bit BT.2020 PQ (HDR10 metadata: 1000 cd/m² mastering display, MaxCLL 1000) and HLG with SDR white at
# HDR reference white (npl=203), encoded by x265, then read back by:
#   ceiling      the exact inverse: the same zscale chain backwards, no tone curve
#   auto / clip / none   preview-loop thumb --tonemap …
#   jellyfin     zscale=t=linear:npl=100,format=gbrpf32le,zscale=p=bt709,tonemap=hable:desat=0:peak=100,zscale=t=bt709:m=bt709:r=tv
#   mobius, reinhard   the same chain with tonemap=mobius / tonemap=reinhard
# and compared with the SDR original (frame 5, 320x180): PSNR (RGB, dB), mean HSV saturation relative to
# the original's, and the largest channel-mean difference (levels). Prints a Markdown table.
#
#   ./Benchmarks/hdr-quality.sh [path/to/preview-loop]     (default: .build/debug/preview-loop)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BIN="${1:-.build/debug/preview-loop}"
[ -x "$BIN" ] || { echo "error: no preview-loop binary at $BIN (swift build first)" >&2; exit 1; }
WORK="$(mktemp -d "${TMPDIR:-/tmp}/previewloop-hdrq.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
FF=(ffmpeg -v error -nostdin -y)
RGB="scale=in_color_matrix=bt709:in_range=tv:flags=bicubic+full_chroma_int+accurate_rnd,format=rgb24"
declare -A SOURCES=(
  [testsrc2]="testsrc2=size=320x180:rate=25"
  [smptehdbars]="smptehdbars=size=320x180:rate=25"
  [gradients]="gradients=size=320x180:rate=25:speed=0.05:c0=0x2060c0:c1=0xe0a020:c2=0x20c040:c3=0xc02040:nb_colors=4:seed=7"
)
SDR=",format=rgb24,scale=out_color_matrix=bt709:out_range=tv:flags=bicubic+accurate_rnd,format=yuv420p"
FRAME=5
peer() { echo "zscale=t=linear:npl=100,format=gbrpf32le,zscale=p=bt709,tonemap=tonemap=$1:peak=100,zscale=t=bt709:m=bt709:r=tv,format=yuv420p,$RGB"; }

echo "| clip | ceiling | auto | clip | none | jellyfin (hable) | mobius | reinhard |"
echo "|---|---|---|---|---|---|---|---|"
for content in testsrc2 smptehdbars gradients; do
  "${FF[@]}" -f lavfi -i "${SOURCES[$content]}$SDR" -vf "$RGB" -frames:v 10 -f rawvideo "$WORK/original.rgb"
  for transfer in smpte2084 arib-std-b67; do
    meta=""
    [ "$transfer" = smpte2084 ] && meta=":hdr10=1:master-display=G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)L(10000000,1):max-cll=1000,400"
    clip="$WORK/$content-$transfer.mp4"
    "${FF[@]}" -f lavfi -i "${SOURCES[$content]}$SDR" -frames:v 10 \
      -vf "zscale=tin=bt709:min=bt709:pin=bt709:rin=tv:t=$transfer:p=bt2020:m=bt2020nc:r=tv:npl=203,format=yuv420p10le" \
      -c:v libx265 -preset fast -crf 18 -pix_fmt yuv420p10le \
      -x265-params "log-level=error:pools=1:frame-threads=1:repeat-headers=1:colorprim=bt2020:transfer=$transfer:colormatrix=bt2020nc$meta" "$clip"
    "${FF[@]}" -i "$clip" -vf "zscale=tin=$transfer:pin=bt2020:min=bt2020nc:rin=tv:t=bt709:p=bt709:m=bt709:r=tv:npl=203,format=yuv420p,$RGB" -f rawvideo "$WORK/ceiling.rgb"
    for curve in auto clip none; do
      "$BIN" thumb "$clip" --at "$(awk "BEGIN{print ($FRAME + 0.5) / 25}")" -s 320x180 --tonemap "$curve" -o "$WORK/$curve.ppm" >/dev/null
      tail -c $((320 * 180 * 3)) "$WORK/$curve.ppm" > "$WORK/$curve.rgb"
    done
    for curve in hable mobius reinhard; do
      extra=""; [ "$curve" = hable ] && extra=":desat=0"
      "${FF[@]}" -i "$clip" -vf "$(peer "$curve$extra")" -f rawvideo "$WORK/$curve.rgb"
    done
    python3 - "$WORK" "$FRAME" "$content $( [ "$transfer" = smpte2084 ] && echo PQ || echo HLG)" <<'PY'
import math, sys
work, frame, label = sys.argv[1], int(sys.argv[2]), sys.argv[3]
size = 320 * 180 * 3
def load(name, index):
    data = open(f"{work}/{name}.rgb", "rb").read()
    return data[index * size:(index + 1) * size]
def stats(px):
    n = len(px) // 3
    means = [sum(px[c::3]) / n for c in range(3)]
    s, k = 0.0, 0
    for i in range(0, len(px), 3):
        hi, lo = max(px[i:i + 3]), min(px[i:i + 3])
        if hi > 8: s += (hi - lo) / hi; k += 1
    return means, s / max(k, 1)
def psnr(a, b):
    mse = sum((x - y) ** 2 for x, y in zip(a, b)) / len(a)
    return float("inf") if mse == 0 else 10 * math.log10(255 * 255 / mse)
original = load("original", frame)
om, osat = stats(original)
cells = []
for name, index in [("ceiling", frame), ("auto", 0), ("clip", 0), ("none", 0), ("hable", frame), ("mobius", frame), ("reinhard", frame)]:
    px = load(name, index)
    m, sat = stats(px)
    cells.append(f"{psnr(px, original):.1f} dB, sat {100 * sat / osat:.0f} %, Δmean {max(abs(a - b) for a, b in zip(m, om)):.1f}")
print(f"| {label} | " + " | ".join(cells) + " |")
PY
  done
done
