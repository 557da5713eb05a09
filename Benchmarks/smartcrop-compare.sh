#!/usr/bin/env bash
# Where --fit smartcrop puts its window on real photographs, next to smartcrop.py (PyPI "smartcrop",
# Pillow-based, a port of smartcrop.js), at the same target aspect ratios. A comparison, not a
# target: SmartCrop is not tuned to raise the overlap.
#
# The pictures are public-domain and CC0 photographs from the scikit-image wheel's skimage/data/
# (licences in the docstrings of skimage/data/_fetchers.py), fetched at run time into the temp dir
# with `pip download scikit-image==0.26.0 --no-deps` (about 14 MB); nothing is added to Fixtures/:
#   astronaut.png  512x512  NASA portrait of Eileen Collins, public domain
#   camera.png     512x512  a cameraman, greyscale, CC0 (Lav Varshney)
#   chelsea.png    451x300  a cat, CC0 (Stefan van der Walt)
#   coffee.png     600x400  a cup of coffee, CC0 (Rachel Michetti)
#   rocket.jpg     640x427  Falcon 9 launch, public domain (SpaceX)
#   hubble_deep_field.jpg 1000x872  Hubble eXtreme Deep Field, public domain (NASA)
# Landscape pictures are cut to 1:1 and 9:16, square ones to 9:16 and 16:9.
#
# Each window is the largest one of its shape (the full height or width of the picture), as
# --fit smartcrop always cuts. Ours: `preview-loop thumb PICTURE --at 0 --fit smartcrop --size WxH`
# with WxH that window's size, so the output is the window's pixels unscaled; its place is found by
# sliding the output along the picture's free axis (the smallest mean absolute difference; the
# script prints that difference, a few levels from the two decoders, and stops when it is above 4).
# smartcrop.py: `SmartCrop().crop(picture, W, H)["top_crop"]` with its defaults; asked for the
# largest window, it raises its min_scale to 1 (it never picks a window it would have to enlarge), so
# its window has the same size as ours and only the places differ. Prints per picture and aspect both
# windows (x,y,WxH), the match's difference and their intersection over union (IoU), and for scale
# the IoU of the centred window (--fit fill's) with smartcrop.py's; then the means.
#
#   Benchmarks/smartcrop-compare.sh [path/to/preview-loop]
#
# The binary: the path given, else $PREVIEW_LOOP_BIN, else a release build in Benchmarks/.build.
# smartcrop.py 0.5.0 is installed once into a venv in Benchmarks/.build/smartcrop-venv (git-ignored).
# On the shared machine run it alone: `flock /tmp/previewloop-build.lock Benchmarks/smartcrop-compare.sh`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
case "${1:-}" in -*) echo "unknown option $1" >&2; exit 64 ;; esac
. Benchmarks/common.sh
need python3
BIN="$(binary_argument "${1:-${PREVIEW_LOOP_BIN:-}}")"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

VENV="$PWD/Benchmarks/.build/smartcrop-venv"
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import smartcrop' 2>/dev/null; then
  log "installing smartcrop.py 0.5.0 into $VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q smartcrop==0.5.0
fi
log "fetching the scikit-image 0.26.0 wheel's pictures"
"$VENV/bin/pip" download -q --no-deps --only-binary :all: -d "$WORK/wheel" scikit-image==0.26.0
PICTURES="$WORK/pictures"
"$VENV/bin/python" - "$WORK"/wheel/scikit_image-*.whl "$PICTURES" <<'EOF'
import os, sys, zipfile
wheel, out = sys.argv[1], sys.argv[2]
os.makedirs(out)
names = ["astronaut.png", "camera.png", "chelsea.png", "coffee.png", "rocket.jpg", "hubble_deep_field.jpg"]
with zipfile.ZipFile(wheel) as z:
    for name in names:
        with open(os.path.join(out, name), "wb") as f:
            f.write(z.read("skimage/data/" + name))
EOF

"$VENV/bin/python" - "$BIN" "$PICTURES" "$WORK" <<'EOF'
import os, subprocess, sys
import numpy as np
from PIL import Image
import smartcrop

binary, pictures, work = sys.argv[1:4]
cases = [("astronaut.png", ["9:16", "16:9"]), ("camera.png", ["9:16", "16:9"]),
         ("chelsea.png", ["1:1", "9:16"]), ("coffee.png", ["1:1", "9:16"]),
         ("rocket.jpg", ["1:1", "9:16"]), ("hubble_deep_field.jpg", ["1:1", "9:16"])]

def window_size(width, height, aspect):
    a, b = (int(v) for v in aspect.split(":"))
    if width * b > height * a:
        return round(height * a / b), height
    return width, round(width * b / a)

def ours(path, picture, w, h):
    out = os.path.join(work, "ours.png")
    subprocess.run([binary, "thumb", path, "-o", out, "--at", "0", "--fit", "smartcrop",
                    "--size", f"{w}x{h}", "--quiet"], check=True)
    crop = np.asarray(Image.open(out).convert("RGB"), dtype=np.int32)
    source = np.asarray(picture, dtype=np.int32)
    best = None
    for x in range(picture.width - w + 1):
        for y in range(picture.height - h + 1):
            difference = np.abs(source[y:y + h, x:x + w] - crop).mean()
            if best is None or difference < best[0]:
                best = (difference, x, y)
    if best[0] > 4:
        sys.exit(f"error: {os.path.basename(path)}: our output does not match the picture anywhere "
                 f"(mean difference {best[0]:.1f})")
    return (best[1], best[2], w, h), best[0]

def theirs(picture, w, h):
    c = smartcrop.SmartCrop().crop(picture, w, h)["top_crop"]
    return (c["x"], c["y"], c["width"], c["height"])

def iou(a, b):
    ix = max(0, min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0]))
    iy = max(0, min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1]))
    inter = ix * iy
    return inter / (a[2] * a[3] + b[2] * b[3] - inter)

def show(box):
    return "%d,%d,%dx%d" % box

print("%-22s %-6s %-16s %-5s %-16s %-5s %s" % (
    "picture", "aspect", "preview-loop", "diff", "smartcrop.py", "IoU", "centred IoU"))
ious, centred_ious = [], []
for name, aspects in cases:
    path = os.path.join(pictures, name)
    picture = Image.open(path).convert("RGB")
    for aspect in aspects:
        w, h = window_size(picture.width, picture.height, aspect)
        mine, difference = ours(path, picture, w, h)
        other = theirs(picture, w, h)
        centred = ((picture.width - w) // 2, (picture.height - h) // 2, w, h)
        ious.append(iou(mine, other)); centred_ious.append(iou(centred, other))
        print("%-22s %-6s %-16s %-5.1f %-16s %-5.2f %.2f" % (
            name, aspect, show(mine), difference, show(other), ious[-1], centred_ious[-1]))
print("mean IoU over %d windows: %.2f (centred: %.2f)" % (
    len(ious), sum(ious) / len(ious), sum(centred_ious) / len(centred_ious)))
EOF
