#!/usr/bin/env bash
# Rewrites the golden images (the card's from Fixtures/card.mp4, the sheet's from Fixtures/landscape.mp4) with the built CLI. Run after a deliberate
# change to how cards look, look at the four pictures, and commit them with the change.
#
# Usage: Fixtures/goldens/make-goldens.sh [path/to/preview-loop]   (default: .build/debug/preview-loop)
# CardTests compares PreviewCard's stills with these files by PSNR (≥ 38 dB over RGBA), not bytes.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
BIN="${1:-$ROOT/.build/debug/preview-loop}"
CLIP="$ROOT/Fixtures/card.mp4"
COMMON=(--size 192x108 --corner-radius 12)

"$BIN" card "$CLIP" -o "$HERE/card-poster.png" "${COMMON[@]}" --at 0
"$BIN" card "$CLIP" -o "$HERE/card-reveal.png" "${COMMON[@]}" --at 1.3
"$BIN" card "$CLIP" -o "$HERE/card-fade.png" "${COMMON[@]}" --at 1.3 --reveal fade
"$BIN" card "$CLIP" -o "$HERE/card-closing.png" "${COMMON[@]}" --at 4.775 --close

# The contact sheet's golden (SheetTests compares by PSNR, ≥ 38 dB over RGB).
"$BIN" sheet "$ROOT/Fixtures/landscape.mp4" -o "$HERE/sheet.png" --grid 3x2 --width 480
