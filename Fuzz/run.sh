#!/usr/bin/env bash
# Builds the libFuzzer target (Fuzz/FuzzEntry.swift compiled with the library's sources, with
# -sanitize=fuzzer,address), replays every saved reproducer in Fuzz/crashes/, then fuzzes for SECONDS
# from a seed corpus made at run time: the small fixtures plus tiny clips in other containers and
# codecs, made with the ffmpeg CLI (no media is committed for this).
#
# Usage: Fuzz/run.sh [SECONDS]          (any cwd; default 60; `make fuzz SECONDS=N`)
#        Fuzz/run.sh --replay-only       (build and replay Fuzz/crashes/ and the corpus; `make fuzz-ci`)
#
# Exits 1 when a reproducer still crashes or fuzzing finds a crash, a hang (one input running over
# 20 s) or memory over 2 GB; the input is saved in .build/fuzz/artifacts/. The growing corpus is kept
# in .build/fuzz/corpus between runs. Save a new finding (minimised with -minimize_crash=1) in
# Fuzz/crashes/ with a name saying what it is.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PATH="/opt/swift/usr/bin:$PATH"
# The Swift runtime's own crash backtracer reads memory in ways AddressSanitizer reports, hiding the
# real failure; libFuzzer prints the stack itself.
export SWIFT_BACKTRACE=enable=no

MODE="${1:-60}"
OUT=.build/fuzz
BINARY="$OUT/preview-loop-fuzz"
mkdir -p "$OUT/corpus" "$OUT/artifacts"

# --- Build (again only when a source changed) ---------------------------------------------------
SOURCES=(Fuzz/FuzzEntry.swift $(find Sources/PreviewLoop -name '*.swift' | sort))
if [ ! -x "$BINARY" ] || [ -n "$(find "${SOURCES[@]}" Sources/CFFmpeg Sources/CFreeType -newer "$BINARY" | head -1)" ]; then
  echo "fuzz: building $BINARY"
  swiftc -sanitize=fuzzer,address -parse-as-library -O -g -swift-version 6 -module-name PreviewLoop -package-name main \
      -I Sources/CFFmpeg $(pkg-config --cflags-only-I libavformat libavcodec libswscale libavutil) \
      -I Sources/CFreeType $(pkg-config --cflags-only-I freetype2) \
      "${SOURCES[@]}" -o "$BINARY"
fi

FLAGS=(-timeout=20 -rss_limit_mb=2048 -max_len=65536 -artifact_prefix="$OUT/artifacts/")

# --- Replay: every saved reproducer must now pass -----------------------------------------------
shopt -s nullglob
failed=0
for reproducer in Fuzz/crashes/*; do
  [ -f "$reproducer" ] || continue
  case "$reproducer" in *.md) continue ;; esac
  if "$BINARY" "${FLAGS[@]}" "$reproducer" > "$OUT/replay.log" 2>&1; then
    echo "fuzz: replay $reproducer: ok"
  else
    echo "fuzz: replay $reproducer: STILL FAILS"
    grep -E "Fatal error|ERROR|SUMMARY|^    #[0-9] " "$OUT/replay.log" | head -12
    failed=1
  fi
done

if [ "$MODE" = "--replay-only" ]; then
  if ls "$OUT"/corpus/* > /dev/null 2>&1; then
    "$BINARY" "${FLAGS[@]}" -runs=0 "$OUT/corpus" 2>&1 | grep -E "INITED|DONE|ERROR" || failed=1
  fi
  exit "$failed"
fi
[ "$failed" = 0 ] || { echo "fuzz: fix the reproducers above first" >&2; exit 1; }

# --- Seeds: small fixtures, and tiny clips in the containers and codecs previews come from ---------
SEEDS="$OUT/seeds"
rm -rf "$SEEDS" && mkdir -p "$SEEDS"
for fixture in Fixtures/*.mp4 Fixtures/*.webm Fixtures/*.ts Fixtures/*.m4a Fixtures/*.txt; do
  [ "$(stat -c %s "$fixture")" -le 45000 ] && cp "$fixture" "$SEEDS/"
done
FF=(ffmpeg -hide_banner -nostdin -loglevel error -y -f lavfi -i testsrc2=size=64x48:rate=10:duration=0.3)
"${FF[@]}" -c:v libx264 -preset ultrafast -g 2 "$SEEDS/tiny.mp4"
"${FF[@]}" -c:v libx264 -preset ultrafast -f mpegts "$SEEDS/tiny.ts"
"${FF[@]}" -c:v libx264 -preset ultrafast -f h264 "$SEEDS/tiny.h264"
"${FF[@]}" -c:v libx265 -x265-params log-level=error "$SEEDS/tiny-hevc.mp4"
"${FF[@]}" -c:v mpeg4 "$SEEDS/tiny.avi"
"${FF[@]}" -c:v flv1 "$SEEDS/tiny.flv"
"${FF[@]}" -c:v libvpx -b:v 50k "$SEEDS/tiny-vp8.webm"
"${FF[@]}" -c:v libvpx-vp9 "$SEEDS/tiny.ivf"
"${FF[@]}" -c:v mjpeg "$SEEDS/tiny-mjpeg.mkv"
"${FF[@]}" -c:v mpeg2video "$SEEDS/tiny.mpg"
"${FF[@]}" -c:v libtheora "$SEEDS/tiny.ogv"
"${FF[@]}" -c:v wmv2 "$SEEDS/tiny.asf"
"${FF[@]}" -c:v ffv1 "$SEEDS/tiny.nut"
"${FF[@]}" -pix_fmt yuv420p -f yuv4mpegpipe "$SEEDS/tiny.y4m"
"${FF[@]}" "$SEEDS/tiny.gif"
"${FF[@]}" -frames:v 1 "$SEEDS/tiny.png"
"${FF[@]}" -frames:v 1 "$SEEDS/tiny.jpg"
"${FF[@]}" -c:v png -pix_fmt rgba "$SEEDS/tiny-alpha.mov"

# --- Fuzz ------------------------------------------------------------------------------------------
echo "fuzz: $MODE s from $(ls "$SEEDS" | wc -l) seeds and $(ls "$OUT/corpus" | wc -l) corpus inputs"
status=0
"$BINARY" "${FLAGS[@]}" -max_total_time="$MODE" -print_final_stats=1 "$OUT/corpus" "$SEEDS" > "$OUT/fuzz.log" 2>&1 || status=$?
grep -E "^#[0-9]+.*(INITED|DONE)|stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb)" "$OUT/fuzz.log" || true
if [ "$status" != 0 ]; then
  echo "fuzz: FOUND A PROBLEM (libFuzzer exit $status):"
  grep -E "ERROR|Fatal error|SUMMARY|Test unit written|^    #[0-9]+ " "$OUT/fuzz.log" | head -30
  exit 1
fi
echo "fuzz: no crash, hang or leak in $MODE s"
