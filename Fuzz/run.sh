#!/usr/bin/env bash
# Builds the libFuzzer binary (Fuzz/FuzzEntry.swift compiled with the library's and the CLI's sources,
# over the FFmpeg layer built as its own module,
# with -sanitize=fuzzer,address), replays every saved reproducer in Fuzz/crashes/, then fuzzes three
# targets for SECONDS in all: `media` half of it (seeds: the small fixtures plus tiny clips in other
# containers and codecs), `timing` a quarter (seeds: the far/gap family of crafted timestamps) and `cli`
# a quarter (seeds: argument lists). Seeds are made at run time with the ffmpeg CLI (no media is
# committed for this). Reproducers named timing-* and cli-* replay through their own target.
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
mkdir -p "$OUT/corpus" "$OUT/corpus-timing" "$OUT/corpus-cli" "$OUT/artifacts"

# --- Build (again only when a source changed) ---------------------------------------------------
# Three steps, as SwiftPM builds the targets: the log trampoline (C), the FFmpeg layer as its own
# module (PreviewLoopFFmpeg, the only one that imports CFFmpeg), then the library, the jobs' and the
# CLI's sources without its main.swift (the `cli` target calls its pure parser) linked with both, as
# one module: an empty PreviewLoopJobs module answers the CLI's `import PreviewLoopJobs`.
LAYER_SOURCES=($(find Sources/PreviewLoopFFmpeg -name '*.swift' | sort))
# The remote layer (libcurl range reads, SigV4), its own module as in SwiftPM: the library imports it.
REMOTE_SOURCES=($(find Sources/PreviewLoopRemote -name '*.swift' | sort))
# The CLI's embedded resources (the feed page's Feed/*.css and *.js), as SwiftPM's `embedInCode`
# generates them: `PackageResources.<name_ext>` byte arrays.
mkdir -p "$OUT"
RESOURCES="$OUT/embedded_resources.swift"
python3 - "$RESOURCES" Sources/PreviewLoopJobs/Feed/* <<'PY'
import os, sys
lines = ["struct PackageResources {"]
for path in sorted(sys.argv[2:]):
    name = os.path.basename(path).replace(".", "_").replace("-", "_")
    data = open(path, "rb").read()
    lines.append("static let %s: [UInt8] = [%s]" % (name, ",".join(str(b) for b in data)))
lines.append("}")
text = "\n".join(lines) + "\n"
if not os.path.exists(sys.argv[1]) or open(sys.argv[1]).read() != text:
    open(sys.argv[1], "w").write(text)
PY
SOURCES=(Fuzz/FuzzEntry.swift $(find Sources/PreviewLoop -name '*.swift' | sort)
         $(find Sources/PreviewLoopJobs Sources/PreviewLoopCLI -name '*.swift' | sort) "$RESOURCES")
FFMPEG_INCLUDES=(-I Sources/CFFmpeg $(pkg-config --cflags-only-I libavformat libavcodec libswscale libavutil))
if [ ! -x "$BINARY" ] || [ -n "$(find "${SOURCES[@]}" "${LAYER_SOURCES[@]}" "${REMOTE_SOURCES[@]}" Sources/CFFmpeg Sources/CFFmpegLog Sources/CFreeType Sources/CCurl -newer "$BINARY" | head -1)" ]; then
  echo "fuzz: building $BINARY"
  mkdir -p "$OUT/modules"
  clang -fsanitize=fuzzer-no-link,address -O1 -g $(pkg-config --cflags-only-I libavutil) -I Sources/CFFmpegLog/include \
      -c Sources/CFFmpegLog/log.c -o "$OUT/cffmpeglog.o"
  swiftc -sanitize=fuzzer,address -parse-as-library -O -g -suppress-warnings -swift-version 6 -wmo -c \
      -module-name PreviewLoopFFmpeg -package-name main -emit-module -emit-module-path "$OUT/modules/PreviewLoopFFmpeg.swiftmodule" \
      "${FFMPEG_INCLUDES[@]}" -I Sources/CFFmpegLog/include "${LAYER_SOURCES[@]}" -o "$OUT/PreviewLoopFFmpeg.o"
  swiftc -sanitize=fuzzer,address -parse-as-library -O -g -suppress-warnings -swift-version 6 -wmo -c \
      -module-name PreviewLoopRemote -package-name main -emit-module -emit-module-path "$OUT/modules/PreviewLoopRemote.swiftmodule" \
      -I Sources/CCurl "${REMOTE_SOURCES[@]}" -o "$OUT/PreviewLoopRemote.o"
  : > "$OUT/empty-jobs.swift"
  swiftc -parse-as-library -swift-version 6 -module-name PreviewLoopJobs -package-name main -emit-module \
      -emit-module-path "$OUT/modules/PreviewLoopJobs.swiftmodule" "$OUT/empty-jobs.swift"
  swiftc -sanitize=fuzzer,address -parse-as-library -O -g -suppress-warnings -swift-version 6 -module-name PreviewLoop -package-name main \
      -I "$OUT/modules" "${FFMPEG_INCLUDES[@]}" -I Sources/CFFmpegLog/include \
      -I Sources/CFreeType $(pkg-config --cflags-only-I freetype2) -I Sources/CCurl \
      "${SOURCES[@]}" "$OUT/PreviewLoopFFmpeg.o" "$OUT/PreviewLoopRemote.o" "$OUT/cffmpeglog.o" -lcurl -o "$BINARY"
fi

FLAGS=(-timeout=20 -rss_limit_mb=2048 -max_len=65536 -artifact_prefix="$OUT/artifacts/")

# --- Replay: every saved reproducer must now pass -----------------------------------------------
shopt -s nullglob
failed=0
for reproducer in Fuzz/crashes/*; do
  [ -f "$reproducer" ] || continue
  case "$reproducer" in *.md) continue ;; esac
  case "$(basename "$reproducer")" in
    timing-*) target=timing ;;
    cli-*) target=cli ;;
    *) target=media ;;
  esac
  if PREVIEW_LOOP_FUZZ_TARGET=$target "$BINARY" "${FLAGS[@]}" "$reproducer" > "$OUT/replay.log" 2>&1; then
    echo "fuzz: replay $reproducer: ok"
  else
    echo "fuzz: replay $reproducer: STILL FAILS"
    grep -E "Fatal error|ERROR|SUMMARY|^    #[0-9] " "$OUT/replay.log" | head -12
    failed=1
  fi
done

if [ "$MODE" = "--replay-only" ]; then
  for target in media timing cli; do
    corpus="$OUT/corpus"; [ "$target" = media ] || corpus="$OUT/corpus-$target"
    if ls "$corpus"/* > /dev/null 2>&1; then
      PREVIEW_LOOP_FUZZ_TARGET=$target "$BINARY" "${FLAGS[@]}" -runs=0 "$corpus" 2>&1 | grep -E "INITED|DONE|ERROR" || failed=1
    fi
  done
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

# --- Seeds of the timing target: the far/gap family, tiny ------------------------------------------
TSEEDS="$OUT/seeds-timing"
rm -rf "$TSEEDS" && mkdir -p "$TSEEDS" "$OUT/corpus-timing" "$OUT/corpus-cli"
FT=(ffmpeg -hide_banner -nostdin -loglevel error -y)
"${FF[@]}" -c:v libx264 -preset ultrafast -g 2 "$TSEEDS/base.mkv"
"${FT[@]}" -i "$TSEEDS/base.mkv" -c copy -output_ts_offset 1000000000000 "$TSEEDS/far-1e12.mkv"
"${FT[@]}" -i "$TSEEDS/base.mkv" -c copy -frames:v 1 -output_ts_offset 1000000000 "$TSEEDS/one-at-1e9.mkv"
"${FT[@]}" -i "$TSEEDS/base.mkv" -c copy -frames:v 3 -output_ts_offset 1000 "$TSEEDS/three-at-1000.mkv"
"${FT[@]}" -f lavfi -i testsrc2=size=64x48:rate=1:duration=2 -vf 'setpts=PTS*1000000' -c:v libx264 -preset ultrafast "$TSEEDS/gap-1e6.mkv"
"${FT[@]}" -i "$TSEEDS/base.mkv" -c copy -output_ts_offset 1000 -f mpegts "$TSEEDS/late.ts"

# --- Seeds of the cli target: argument lists, NUL-separated -----------------------------------------
CSEEDS="$OUT/seeds-cli"
rm -rf "$CSEEDS" && mkdir -p "$CSEEDS"
seed() { local name="$1"; shift; printf '%s\0' "$@" | head -c -1 > "$CSEEDS/$name"; }
seed thumb thumb clip.mp4 -o a.png --size 16384x16384 --at 1.5 --corner-radius 3 --timeout 0x10
seed strip strip clip.mp4 -o s.jpg --count 1000 --columns 1 --size 2000x2000 --start 10% --length 00:01.5
seed render render clip.mp4 -o r.gif --length 1000000000 --fps 120 --max-memory 16 --quality 5
seed sprites sprites clip.mp4 -o sp --every 0.000000001 --grid 100x100 --size 16x9 --max-frames 7
seed card card clip.mp4 -o c.gif --aspect 0.0000000001 --play-length 1e9 --poster-hold 1:00 --fps 30
seed loop loop clip.mp4 --capture-at 1,2.5,00:10 --record 2-5 --capture-dir d --loops 0 --size 8x8

# --- Fuzz: media half the time, timing and cli a quarter each ---------------------------------------
fuzz_target() {
  local target="$1" seconds="$2" corpus="$3" seeds="$4" status=0
  echo "fuzz[$target]: $seconds s from $(ls "$seeds" | wc -l) seeds and $(ls "$corpus" | wc -l) corpus inputs"
  PREVIEW_LOOP_FUZZ_TARGET=$target "$BINARY" "${FLAGS[@]}" -max_total_time="$seconds" -print_final_stats=1 \
      "$corpus" "$seeds" > "$OUT/fuzz-$target.log" 2>&1 || status=$?
  grep -E "^#[0-9]+.*(INITED|DONE)|stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb)" \
      "$OUT/fuzz-$target.log" || true
  if [ "$status" != 0 ]; then
    echo "fuzz[$target]: FOUND A PROBLEM (libFuzzer exit $status):"
    grep -E "ERROR|Fatal error|SUMMARY|Test unit written|^    #[0-9]+ " "$OUT/fuzz-$target.log" | head -30
    return 1
  fi
}
QUARTER=$(( MODE / 4 > 0 ? MODE / 4 : 1 ))
failed=0
fuzz_target media $(( MODE - 2 * QUARTER > 0 ? MODE - 2 * QUARTER : 1 )) "$OUT/corpus" "$SEEDS" || failed=1
fuzz_target timing "$QUARTER" "$OUT/corpus-timing" "$TSEEDS" || failed=1
fuzz_target cli "$QUARTER" "$OUT/corpus-cli" "$CSEEDS" || failed=1
[ "$failed" = 0 ] || exit 1
echo "fuzz: no crash, hang or leak in $MODE s (media, timing, cli)"
