#!/usr/bin/env bash
# PreviewLoop's performance benchmark: the engine (`preview-loop`) against peers doing the same work
# (the ffmpeg CLI and ffmpegthumbnailer), as ratios of medians, plus peak RSS. See Benchmarks/README.md.
#
#   ./Benchmarks/run.sh            # 5 timed runs + 1 warm-up per command: about 6 min on 2 cores,
#                                  # plus about 4 min the first time, to make the clips
#   ./Benchmarks/run.sh --quick    # 3 timed runs, for development
#   ./Benchmarks/run.sh --runs 10  # more runs on a noisy machine
#
# It rebuilds the release binary (in its own scratch directory, Benchmarks/.build/), makes its clips
# once into Benchmarks/clips/ (git-ignored), installs hyperfine, ffmpegthumbnailer and GNU time from
# Debian when missing, and writes the printed report to Benchmarks/results/latest.md. Scratch files (hyperfine JSON, outputs, logs) go to
# Benchmarks/results/run.tmp/ (git-ignored), kept after the run for inspection.
#
# Environment:
#   BENCH_CACHE_BUDGET_MB  the engine's frame-cache budget in MB (default 256, LoopPlayer.Configuration's
#                          frameCacheLimit); the multi-pass RSS check is engine <= peer + budget.
#   BENCH_FTN_FORMAT       rgb (default: raw RGB24, like the engine's PPM without its header) or png: the
#                          image format ffmpegthumbnailer writes (-c rgb / .png).
#   SWIFT                  the swift executable (default: swift, with /opt/swift/usr/bin added to PATH).
set -euo pipefail

script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$script_dir/.."
ROOT="$PWD"

RUNS=5
WARMUP=1
MODE="full"
usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
}
while (($#)); do
  case "$1" in
    --quick) RUNS=3; MODE="quick"; shift ;;
    --runs)
      [[ $# -ge 2 && "$2" =~ ^[1-9][0-9]*$ ]] || { echo "error: --runs needs a positive number" >&2; exit 64; }
      RUNS="$2"; MODE="runs=$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "error: unknown argument '$1' (try --help)" >&2; exit 64 ;;
  esac
done

START_SECONDS=$SECONDS
BENCH_DIR="$ROOT/Benchmarks"
CLIPS="$BENCH_DIR/clips"
RESULTS="$BENCH_DIR/results"
WORK="$RESULTS/run.tmp"
REPORT="$RESULTS/latest.md"

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }
# Quotes one word for the sh that hyperfine runs the commands in.
q() { printf '%q' "$1"; }

# --- Tools ----------------------------------------------------------------------------------------

APT_UPDATED=0
apt_install() {
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  if ((APT_UPDATED == 0)); then
    log "apt-get update"
    $sudo apt-get update -qq
    APT_UPDATED=1
  fi
  log "apt-get install $*"
  $sudo apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

if ! command -v ffmpeg >/dev/null 2>&1 || ! command -v ffprobe >/dev/null 2>&1 \
   || ! command -v python3 >/dev/null 2>&1 || ! pkg-config --exists libavformat 2>/dev/null; then
  log "installing the project's dependencies (Scripts/install-deps.sh)"
  "$ROOT/Scripts/install-deps.sh"
fi
missing=()
command -v hyperfine >/dev/null 2>&1 || missing+=(hyperfine)
command -v ffmpegthumbnailer >/dev/null 2>&1 || missing+=(ffmpegthumbnailer)
[ -x /usr/bin/time ] || missing+=(time)
command -v python3 >/dev/null 2>&1 || missing+=(python3)
((${#missing[@]} == 0)) || apt_install "${missing[@]}"
for tool in ffmpeg ffprobe hyperfine ffmpegthumbnailer python3; do
  command -v "$tool" >/dev/null 2>&1 || die "$tool is missing and could not be installed"
done
[ -x /usr/bin/time ] || die "/usr/bin/time (Debian package 'time') is missing"

SWIFT="${SWIFT:-swift}"
[ -d /opt/swift/usr/bin ] && export PATH="/opt/swift/usr/bin:$PATH"
command -v "$SWIFT" >/dev/null 2>&1 || die "swift not found (set SWIFT or add the toolchain to PATH)"

mkdir -p "$CLIPS" "$RESULTS"
rm -rf "$WORK"
mkdir -p "$WORK/out"

# --- Build ----------------------------------------------------------------------------------------

# The benchmark builds in its own scratch directory, Benchmarks/.build/ (git-ignored), so that it
# never waits for SwiftPM's lock on .build/ while a `swift build` or `swift test` runs there, and
# a build there cannot change the binary being measured. The first build there takes under a minute.
SCRATCH="$BENCH_DIR/.build"
log "swift build -c release --scratch-path ${SCRATCH#"$ROOT"/}"
# A source file saved while the compiler reads it fails the build ("was modified during the build"):
# that is retried, up to three times.
for attempt in 1 2 3; do
  "$SWIFT" build -c release --scratch-path "$SCRATCH" >"$WORK/build.log" 2>&1 &
  build_pid=$!
  trap 'kill "$build_pid" 2>/dev/null || true' EXIT
  for _ in 1 2 3 4 5 6; do kill -0 "$build_pid" 2>/dev/null && sleep 0.5; done
  if kill -0 "$build_pid" 2>/dev/null && grep -q "Another instance of SwiftPM" "$WORK/build.log"; then
    log "waiting for another SwiftPM process that uses ${SCRATCH#"$ROOT"/} (another benchmark run?)"
  fi
  build_rc=0
  wait "$build_pid" || build_rc=$?
  trap - EXIT
  ((build_rc != 0)) || break
  if ((attempt < 3)) && grep -q "was modified during the build" "$WORK/build.log"; then
    log "a source file changed during the build; building again"
    sleep 5
    continue
  fi
  tail -n 40 "$WORK/build.log" >&2
  die "the release build failed (full log: $WORK/build.log)"
done
BUILT="$("$SWIFT" build -c release --scratch-path "$SCRATCH" --show-bin-path)/preview-loop"
[ -x "$BUILT" ] || die "no release binary at $BUILT"
# Measure a copy, so that a rebuild during the run cannot swap the binary between runs.
BIN="$WORK/preview-loop"
cp "$BUILT" "$BIN"

# --- Clips ----------------------------------------------------------------------------------------

CLIP_1080="$CLIPS/h264-1080p30-60s-gop250.mp4"
CLIP_4K="$CLIPS/hevc-2160p30-10s-gop60.mp4"
CLIP_VP9="$CLIPS/vp9-1080p30-10s-gop60.webm"
CLIP_1080_SECONDS=60

# Prints "codec duration" of a clip's first video stream, or fails.
clip_probe() {
  ffprobe -v error -select_streams v:0 -show_entries stream=codec_name:format=duration \
    -of default=noprint_wrappers=1:nokey=1 "$1" 2>/dev/null | paste -sd' '
}

# Four moving lavfi sources in a 2x2 grid (test pattern with a clock, a zooming Mandelbrot set, the
# game of life, a scrolling cellular automaton) with temporal noise on top, so the encoder has
# real work and the decoder real bits. $1 = size of one quadrant (WxH), $2 = noise strength, $3 = seed.
grid_inputs() {
  local quad="$1" w="${1%x*}" h="${1#*x}"
  # The Mandelbrot set and the game of life are computed at 480x270 and scaled up (cheap to render).
  local small="480x270"
  printf '%s\n' \
    -f lavfi -i "testsrc2=size=${quad}:rate=30" \
    -f lavfi -i "mandelbrot=size=${small}:rate=30:start_scale=$((2 + $3)),scale=${w}:${h}" \
    -f lavfi -i "life=size=${small}:rate=30:mold=10:ratio=0.5:seed=$3:life_color=#f0c040,scale=${w}:${h}:flags=neighbor" \
    -f lavfi -i "cellauto=size=${quad}:rate=30:rule=110:scroll=1,format=yuv420p" \
    -f lavfi -i "sine=frequency=$((330 + 110 * $3)):sample_rate=48000" \
    -filter_complex "[0:v][1:v][2:v][3:v]xstack=inputs=4:layout=0_0|w0_0|0_h0|w0_h0,noise=alls=$2:allf=t,format=yuv420p[v]" \
    -map "[v]" -map 4:a
}

# make_clip PATH EXPECTED_CODEC SECONDS QUAD NOISE SEED ENCODER-ARGS...: reuses a valid clip, else
# encodes to a temporary file and renames it, so an interrupted run leaves no half clip behind.
make_clip() {
  local path="$1" codec="$2" seconds="$3" quad="$4" noise="$5" seed="$6"
  shift 6
  local probed
  if [ -f "$path" ] && probed="$(clip_probe "$path")" && [ "${probed%% *}" = "$codec" ]; then
    log "reusing $(basename "$path") ($probed s)"
    return
  fi
  local ext="${path##*.}" tmp="${path%.*}.partial.${path##*.}"
  log "making $(basename "$path") (${seconds} s; the first run takes a few minutes)"
  local started=$SECONDS
  local -a inputs
  mapfile -t inputs < <(grid_inputs "$quad" "$noise" "$seed")
  ffmpeg -hide_banner -nostdin -loglevel error -y "${inputs[@]}" -t "$seconds" "$@" "$tmp" \
    || { rm -f "$tmp"; die "could not make $path"; }
  mv -f "$tmp" "$path"
  log "made $(basename "$path") in $((SECONDS - started)) s ($(clip_probe "$path") s, ext $ext)"
}

make_clip "$CLIP_1080" h264 "$CLIP_1080_SECONDS" 960x540 8 0 \
  -c:v libx264 -preset veryfast -b:v 8M -maxrate 8M -bufsize 16M \
  -g 250 -keyint_min 250 -sc_threshold 0 -pix_fmt yuv420p \
  -c:a aac -b:a 128k -movflags +faststart
make_clip "$CLIP_4K" hevc 10 1920x1080 4 1 \
  -c:v libx265 -preset ultrafast -b:v 20M -tag:v hvc1 -pix_fmt yuv420p \
  -x265-params "keyint=60:min-keyint=60:scenecut=0:log-level=error" \
  -c:a aac -b:a 128k -movflags +faststart
make_clip "$CLIP_VP9" vp9 10 960x540 6 2 \
  -c:v libvpx-vp9 -deadline realtime -cpu-used 8 -row-mt 1 -b:v 6M -g 60 -keyint_min 60 -pix_fmt yuv420p \
  -c:a libopus -b:a 96k

# --- Machine --------------------------------------------------------------------------------------

CPU_MODEL="$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//' || true)"
[ -n "$CPU_MODEL" ] || CPU_MODEL="unknown CPU"
FFMPEG_VERSION="$(ffmpeg -hide_banner -version | head -n1 | awk '{print $3}')"
LIBAVCODEC="$(ffmpeg -hide_banner -version | awk '/^libavcodec/ {print $2 $3}' | tr -d ' ')"
HYPERFINE_VERSION="$(hyperfine --version | awk '{print $2}')"
FTN_VERSION="$(dpkg-query -W -f='${Version}' ffmpegthumbnailer 2>/dev/null || ffmpegthumbnailer -v 2>&1 | awk '{print $NF}')"
ENGINE_REV="$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [ -n "$(git -C "$ROOT" status --porcelain -- Sources Package.swift 2>/dev/null)" ]; then
  ENGINE_REV="$ENGINE_REV + uncommitted changes in Sources/"
fi
MACHINE="$(nproc) cores (nproc), ${CPU_MODEL}, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo) RAM; FFmpeg ${FFMPEG_VERSION} (${LIBAVCODEC}); hyperfine ${HYPERFINE_VERSION}; ffmpegthumbnailer ${FTN_VERSION}; engine ${ENGINE_REV}"

# "h264 1920x1080 30 fps, 60.0 s, 8.2 Mb/s": a clip's first video stream, for the report.
clip_line() {
  ffprobe -v error -select_streams v:0 \
    -show_entries stream=codec_name,width,height,avg_frame_rate:format=duration,bit_rate \
    -of default=noprint_wrappers=1 "$1" | python3 -c '
import sys
d = dict(line.strip().split("=", 1) for line in sys.stdin if "=" in line)
num, den = (d.get("avg_frame_rate", "0/1").split("/") + ["1"])[:2]
fps = float(num) / float(den) if float(den) else 0.0
codec, width, height = d.get("codec_name"), d.get("width"), d.get("height")
seconds, rate = float(d.get("duration", 0)), int(d.get("bit_rate", 0)) / 1e6
print("%s %sx%s %.0f fps, %.1f s, %.1f Mb/s" % (codec, width, height, fps, seconds, rate))'
}

# --- Measuring ------------------------------------------------------------------------------------

E="$(q "$BIN")"
O="$WORK/out"
C1="$(q "$CLIP_1080")"
C4="$(q "$CLIP_4K")"
C9="$(q "$CLIP_VP9")"
FF="ffmpeg -hide_banner -nostdin -loglevel error"
STATUS="$WORK/status.tsv"   # label, exit status of the RSS run, peak RSS in kB
: >"$STATUS"

# rss_run LABEL COMMAND: one run under GNU time (the peak RSS, and a check that the command works
# before hyperfine times it). For `sh -c 'a && b'` GNU time reports the largest single process.
rss_run() {
  local label="$1" command="$2" rc=0
  /usr/bin/time -v -o "$WORK/time-$label.txt" sh -c "$command" >"$WORK/stdout-$label.txt" 2>"$WORK/stderr-$label.txt" || rc=$?
  local kb
  kb="$(awk -F': ' '/Maximum resident set size/ {print $2}' "$WORK/time-$label.txt" 2>/dev/null || true)"
  printf '%s\t%s\t%s\n' "$label" "$rc" "${kb:-}" >>"$STATUS"
  if ((rc != 0)); then
    printf '    FAILED (exit %s): %s\n' "$rc" "$command" >&2
    sed 's/^/      /' "$WORK/stderr-$label.txt" | tail -n 5 >&2
  fi
  return "$rc"
}

# Prints one line per command of the hyperfine JSON files given: median, min … max of all their runs.
summarize() {
  python3 - "$@" <<'PY'
import json, statistics, sys
times = {}
for path in sys.argv[1:]:
    with open(path) as f:
        for result in json.load(f)["results"]:
            times.setdefault(result["command"], []).extend(result["times"])
for label, values in times.items():
    print(f"    {label:<26} median {statistics.median(values):8.3f} s   "
          f"min … max {min(values):.3f} … {max(values):.3f} s   {len(values)} runs")
PY
}

# bench GROUP LABEL COMMAND [LABEL COMMAND...]: checks and measures RSS for each command, then times
# the ones that work in RUNS alternating rounds: each round is one hyperfine call that runs every
# command once, the engine first and then its peers, in reverse order on even rounds. The first
# round adds the warm-up. So a burst of load from elsewhere hits the engine and its peers alike,
# where one `hyperfine --runs N` call would run all of one command's runs before the next one's.
# Exports JSON to run.tmp/GROUP-rK.json.
bench() {
  local group="$1"
  shift
  local -a args=() reversed=()
  log "$group: checking each command once under /usr/bin/time -v"
  while (($#)); do
    local label="$1" command="$2"
    shift 2
    printf '%s: %s\n' "$label" "$command" >>"$WORK/commands.txt"
    if rss_run "$label" "$command"; then
      args+=(--command-name "$label" "$command")
      reversed=(--command-name "$label" "$command" "${reversed[@]}")
    fi
  done
  if ((${#args[@]} == 0)); then
    log "$group: no command works, nothing to time"
    return
  fi
  log "$group: $RUNS alternating rounds of hyperfine --runs 1 over $((${#args[@]} / 3)) commands (warm-up $WARMUP in round 1)"
  local round
  local -a files=()
  for ((round = 1; round <= RUNS; round++)); do
    local -a order=("${args[@]}") warm=(--warmup 0)
    ((round % 2 == 0)) && order=("${reversed[@]}")
    ((round == 1)) && warm=(--warmup "$WARMUP")
    printf '    round %d/%d\n' "$round" "$RUNS" >&2
    if ! hyperfine --style basic "${warm[@]}" --runs 1 --export-json "$WORK/$group-r$round.json" \
        "${order[@]}" >>"$WORK/hyperfine.log" 2>&1; then
      log "$group: hyperfine failed in round $round (see $WORK/hyperfine.log); keeping the rounds before it"
      rm -f "$WORK/$group-r$round.json"
      break
    fi
    files+=("$WORK/$group-r$round.json")
  done
  ((${#files[@]} == 0)) || summarize "${files[@]}" >&2
}

# ffmpegthumbnailer's output: raw RGB24 (-c rgb, the PPM payload without its header) or PNG.
FTN_FORMAT="${BENCH_FTN_FORMAT:-rgb}"
case "$FTN_FORMAT" in
  rgb) FTN_EXT="rgb"; FTN_FLAGS="-c rgb" ;;
  png) FTN_EXT="png"; FTN_FLAGS="-c png" ;;
  *) die "BENCH_FTN_FORMAT must be rgb or png, not '$FTN_FORMAT'" ;;
esac
LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"

# Strip (cases 1-3): 10 tiles of 320x180 sampled at the middles of ten 6 s slices of the 60 s clip.
SLICE=$((CLIP_1080_SECONDS / 10))
STRIP_ARGS="--count 10 --columns 10 --size 320x180 --span all --threads 2"
FTN10="sh -c '"
for i in 0 1 2 3 4 5 6 7 8 9; do
  # ffmpegthumbnailer takes an integer percentage: (i + 0.5) * 10 = 5, 15, ... 95.
  FTN10+="ffmpegthumbnailer -i $C1 -o $(q "$O/ftn-strip-$i.$FTN_EXT") $FTN_FLAGS -s 320 -t $((i * 10 + 5))% && "
done
FTN10="${FTN10% && }'"
# fps with start_time=slice/2 and round=up keeps exactly the frames at 3, 9, ... 57 s, the engine's
# sample times (plain fps=10/60 keeps 10 frames too, one frame earlier each).
TILE_VF="fps=1/${SLICE}:start_time=$((SLICE / 2)):round=up,scale=320:180:force_original_aspect_ratio=increase,crop=320:180,tile=10x1"
FFTILE="$FF -threads 2 -i $C1 -an -vf $(q "$TILE_VF") -frames:v 1 -pix_fmt rgb24 -y $(q "$O/ffmpeg-strip.ppm")"
bench strip \
  engine-strip-keyframe "$E strip $C1 -o $(q "$O/strip-keyframe.ppm") $STRIP_ARGS --accuracy keyframe" \
  engine-strip-auto "$E strip $C1 -o $(q "$O/strip-auto.ppm") $STRIP_ARGS --accuracy auto" \
  ffmpegthumbnailer-x10 "$FTN10" \
  ffmpeg-strip "$FFTILE"

# Loop (cases 4, 5, 9): the first 15 s of the 1080p clip as 400x400 RGB frames, nothing written.
LOOP_VF="scale=400:400:force_original_aspect_ratio=increase,crop=400:400"
FFLOOP="$FF -threads 2 -i $C1 -t 15 -an -vf $LOOP_VF -pix_fmt rgb24 -f rawvideo -y /dev/null"
bench loop \
  engine-loop-1 "$E loop $C1 --length 15 --size 400x400 --loops 1 --threads 2" \
  engine-loop-3 "$E loop $C1 --length 15 --size 400x400 --loops 3 --threads 2" \
  ffmpeg-loop-1 "$FFLOOP" \
  ffmpeg-loop-x3 "sh -c '$FFLOOP && $FFLOOP && $FFLOOP'" \
  ffmpeg-decode-only "$FF -threads 2 -i $C1 -t 15 -an -f null -"

# 4K HEVC thumbnail (case 6) at 50% = 5 s (keyframes every 2 s).
bench thumb4k \
  engine-thumb4k-exact "$E thumb $C4 -o $(q "$O/thumb4k-exact.ppm") --at 50% --size 320x180 --accuracy exact --threads 2" \
  engine-thumb4k-keyframe "$E thumb $C4 -o $(q "$O/thumb4k-keyframe.ppm") --at 50% --size 320x180 --accuracy keyframe --threads 2" \
  ffmpegthumbnailer-4k "ffmpegthumbnailer -i $C4 -o $(q "$O/ftn-thumb4k.$FTN_EXT") $FTN_FLAGS -s 320 -t 50%"

# VP9 (case 7, informational): a thumbnail at 50% and a 5 s loop.
bench vp9 \
  engine-thumb-vp9 "$E thumb $C9 -o $(q "$O/thumb-vp9.ppm") --at 50% --size 320x180 --accuracy exact --threads 2" \
  ffmpegthumbnailer-vp9 "ffmpegthumbnailer -i $C9 -o $(q "$O/ftn-thumb-vp9.$FTN_EXT") $FTN_FLAGS -s 320 -t 50%" \
  engine-loop-vp9 "$E loop $C9 --length 5 --size 400x400 --loops 1 --threads 2" \
  ffmpeg-loop-vp9 "$FF -threads 2 -i $C9 -t 5 -an -vf $LOOP_VF -pix_fmt rgb24 -f rawvideo -y /dev/null"

LOAD_AFTER="$(cut -d' ' -f1-3 /proc/loadavg)"

# --- Report ---------------------------------------------------------------------------------------

# The rows: case | engine label | peer label | target ratio ("-" for informational) | RSS rule
# (single: engine <= peer; multi: engine <= peer + frame-cache budget; "-": not checked).
cat >"$WORK/rows.tsv" <<'ROWS'
1. strip 10 frames 1080p, keyframe vs 10x ffmpegthumbnailer	engine-strip-keyframe	ffmpegthumbnailer-x10	0.5	single
2. strip 10 frames 1080p, keyframe vs ffmpeg fps+tile	engine-strip-keyframe	ffmpeg-strip	0.1	single
3. strip 10 frames 1080p, auto vs ffmpeg fps+tile	engine-strip-auto	ffmpeg-strip	0.5	single
4. loop 15 s 1080p to 400x400, 1 pass vs ffmpeg	engine-loop-1	ffmpeg-loop-1	0.6	single
5. loop 15 s 1080p to 400x400, 3 passes vs 3x ffmpeg	engine-loop-3	ffmpeg-loop-x3	0.35	multi
6a. thumb 4K HEVC at 50%, exact (default) vs ffmpegthumbnailer	engine-thumb4k-exact	ffmpegthumbnailer-4k	1.0	single
6b. thumb 4K HEVC at 50%, keyframe vs ffmpegthumbnailer	engine-thumb4k-keyframe	ffmpegthumbnailer-4k	1.0	single
7a. VP9 1080p thumb at 50% (exact) vs ffmpegthumbnailer	engine-thumb-vp9	ffmpegthumbnailer-vp9	-	single
7b. VP9 1080p loop 5 s to 400x400 vs ffmpeg	engine-loop-vp9	ffmpeg-loop-vp9	-	single
9. decode ceiling: loop 1 pass vs ffmpeg decode only (-f null)	engine-loop-1	ffmpeg-decode-only	1.3	-
ROWS

# Output sizes, to show the peers made images of the same size.
SIZES="$WORK/sizes.txt"
python3 - "$O" >"$SIZES" <<'PY'
import os, struct, sys
out = sys.argv[1]
def size(path):
    with open(path, "rb") as f:
        head = f.read(64)
    if head[:8] == b"\x89PNG\r\n\x1a\n":
        w, h = struct.unpack(">II", head[16:24])
        return f"{w}x{h} PNG"
    if head[:2] == b"P6":
        fields, token = [], b""
        for byte in head[2:]:
            c = bytes([byte])
            if c.isspace():
                if token:
                    fields.append(token)
                    token = b""
                if len(fields) == 3:
                    break
            else:
                token += c
        return f"{int(fields[0])}x{int(fields[1])} PPM"
    if path.endswith(".rgb"):
        n = os.path.getsize(path)
        return f"{n} bytes raw RGB24" + (" (= 320x180)" if n == 320 * 180 * 3 else "")
    return "unknown format"
groups = {}
for name in sorted(os.listdir(out)):
    key = "ffmpegthumbnailer strip frames (ftn-strip-*)" if name.startswith("ftn-strip-") else name
    groups.setdefault(key, set()).add(size(os.path.join(out, name)))
for key, sizes in groups.items():
    print(f"{key}: {', '.join(sorted(sizes))}")
PY

export BENCH_LOAD_BEFORE="$LOAD_BEFORE" BENCH_LOAD_AFTER="$LOAD_AFTER"
export BENCH_LOAD="1/5/15-min load average before measuring $LOAD_BEFORE, after $LOAD_AFTER (about 0 when nothing else runs)"
export BENCH_FTN="ffmpegthumbnailer writes $FTN_FORMAT ($FTN_FLAGS)"
export BENCH_MODE="$MODE" BENCH_RUNS="$RUNS" BENCH_WARMUP="$WARMUP" BENCH_MACHINE="$MACHINE"
export BENCH_SECONDS=$((SECONDS - START_SECONDS))
BENCH_CLIPS="1080p \`$(basename "$CLIP_1080")\` ($(clip_line "$CLIP_1080")); 4K \`$(basename "$CLIP_4K")\` ($(clip_line "$CLIP_4K")); VP9 \`$(basename "$CLIP_VP9")\` ($(clip_line "$CLIP_VP9"))"
export BENCH_CLIPS
python3 - "$WORK" "$REPORT" <<'PY'
import datetime, glob, json, os, statistics, sys

work, report = sys.argv[1], sys.argv[2]
env = os.environ
budget = env.get("BENCH_CACHE_BUDGET_MB", "256").strip()
budget = float(budget) if budget else None

runs, cpu = {}, {}
for path in sorted(glob.glob(os.path.join(work, "*-r*.json"))):
    with open(path) as f:
        for result in json.load(f)["results"]:
            runs.setdefault(result["command"], []).extend(result["times"])
            # One run per call, so user and system are that run's CPU time.
            cpu.setdefault(result["command"], []).append(result["user"] + result["system"])
times = {label: {"median": statistics.median(v), "mean": statistics.fmean(v),
                 "stddev": statistics.stdev(v) if len(v) > 1 else 0.0, "min": min(v), "max": max(v),
                 "times": v} for label, v in runs.items()}
status = {}
with open(os.path.join(work, "status.tsv")) as f:
    for line in f:
        label, rc, kb = (line.rstrip("\n").split("\t") + ["", ""])[:3]
        status[label] = (int(rc), float(kb) / 1024 if kb else None)

def median(label):
    result = times.get(label)
    return result["median"] if result else None

def seconds_text(value):
    return f"{value:.3f} s" if value is not None else "error"

def rss_text(label):
    rc, mb = status.get(label, (None, None))
    if rc is None:
        return "-"
    if rc != 0:
        return f"error (exit {rc})"
    return f"{mb:.0f}" if mb is not None else "?"

def ratio_text(ratio):
    return f"{ratio:.2f}" if ratio >= 10 else f"{ratio:.3f}"

def table(header, body):
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in body])

rows, rss_rows, summary = [], [], []
passed = failed = rss_passed = rss_failed = 0
with open(os.path.join(work, "rows.tsv")) as f:
    specs = [line.rstrip("\n").split("\t") for line in f if line.strip()]
for name, engine, peer, target, rss_rule in specs:
    e, p = median(engine), median(peer)
    ratio = e / p if e is not None and p else None
    if target == "-":
        verdict, target_shown = "info", "-"
    else:
        target_shown = f"<= {target}"
        if ratio is not None and ratio <= float(target):
            verdict = "pass"
            passed += 1
        else:
            verdict = "FAIL" if ratio is not None else "FAIL (error)"
            failed += 1
    shown = ratio_text(ratio) if ratio is not None else "-"
    rows.append([name, seconds_text(e), seconds_text(p), shown, target_shown, verdict,
                 rss_text(engine), rss_text(peer)])
    summary.append(f"{name.split('.')[0]} {shown} ({verdict})")
    if rss_rule == "-":
        continue
    em, pm = status.get(engine, (1, None))[1], status.get(peer, (1, None))[1]
    if em is None or pm is None:
        rss_rows.append([name, rss_text(engine), rss_text(peer), "-", "-", "error"])
        continue
    if rss_rule == "single":
        rule, ok = "engine <= peer", em <= pm
    elif budget is not None:
        rule, ok = f"engine <= peer + {budget:g} MB", em <= pm + budget
    else:
        rule, ok = "engine <= peer + frame-cache budget", None
    if ok is None:
        verdict = "n/a (budget not set: BENCH_CACHE_BUDGET_MB)"
    elif target == "-":
        verdict = "info (" + ("within" if ok else "over") + ")"
    else:
        verdict = "pass" if ok else "FAIL"
        rss_passed += ok
        rss_failed += not ok
    rss_rows.append([name, f"{em:.0f}", f"{pm:.0f}", f"{em / pm:.2f}", rule, verdict])

per_command = []
for label in sorted(times):
    r = times[label]
    spread = (r["max"] - r["min"]) / r["median"] * 100 if r["median"] else 0.0
    per_command.append([label, f"{r['median']:.3f}", f"{r['mean']:.3f} ± {r['stddev'] or 0:.3f}",
                        f"{r['min']:.3f} … {r['max']:.3f}", f"{spread:.0f}%",
                        f"{statistics.median(cpu[label]):.3f}", str(len(r["times"]))])

# A noisy run: other processes were busy (load average above half the cores) or runs varied a lot.
load_before = float(env["BENCH_LOAD_BEFORE"].split()[0])
load_after = float(env["BENCH_LOAD_AFTER"].split()[0])
cores = os.cpu_count() or 1
worst = max(per_command, key=lambda row: float(row[4].rstrip("%")), default=None)
noisy = []
if max(load_before, load_after) > cores / 2:
    noisy.append(f"the 1-min load average reached {max(load_before, load_after):.2f} on {cores} cores")
if worst and float(worst[4].rstrip("%")) > 25:
    noisy.append(f"runs of {worst[0]} spread by {worst[4]}")
noise_note = ("**Noisy run**: " + " and ".join(noisy) + ". Other processes shared the CPU, so the "
              "ratios can be off by tens of percent; rerun on a quiet machine, or with --runs 10, "
              "before trusting a pass or fail near its target.") if noisy else \
             "Quiet run: load average and spreads were low."

with open(os.path.join(work, "sizes.txt")) as f:
    sizes = "; ".join(line.strip() for line in f if line.strip())
now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
main_table = table(["case", "engine median", "peer median", "ratio", "target", "pass/fail",
                    "engine RSS MB", "peer RSS MB"], rows)
rss_table = table(["case", "engine MB", "peer MB", "engine/peer", "rule", "pass/fail"], rss_rows)
command_table = table(["command", "median", "mean ± σ", "min … max", "spread", "CPU (user+sys) median",
                       "runs"], per_command)
text = f"""# PreviewLoop benchmark: latest run

{now}; mode {env['BENCH_MODE']}: {env['BENCH_RUNS']} timed runs + {env['BENCH_WARMUP']} warm-up per command in alternating rounds, medians; `Benchmarks/run.sh`.

Machine: {env['BENCH_MACHINE']}

Load: {env['BENCH_LOAD']}.

Clips: {env['BENCH_CLIPS']}.

Ratio = engine median ÷ peer median: below 1 the engine is faster. RSS = peak resident set size (MB) of one extra run of each command under `/usr/bin/time -v`.

{main_table}

{noise_note}

Time targets met: {passed} of {passed + failed}. Ratios (engine/peer): {"; ".join(summary)}.

Peak RSS (case 8; single-pass: engine <= peer; multi-pass: engine <= peer + the engine's frame-cache budget): {rss_passed} of {rss_passed + rss_failed} checked targets met.

{rss_table}

Per command, seconds (spread = (max - min) ÷ median, a noise gauge; CPU = user + system time, which
load from other processes disturbs less than wall time, but which does not show the gain of using
both cores):

{command_table}

Output sizes ({env['BENCH_FTN']}): {sizes}.

The exact commands are in `Benchmarks/results/run.tmp/commands.txt` after a run, the hyperfine JSON of each round in `run.tmp/GROUP-rK.json`. Build, clips and measuring took {env['BENCH_SECONDS']} s.
"""
with open(report + ".tmp", "w") as f:
    f.write(text)
os.replace(report + ".tmp", report)
print(text)
PY
log "report written to ${REPORT#"$ROOT"/} ($((SECONDS - START_SECONDS)) s in all)"
