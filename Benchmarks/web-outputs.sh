#!/usr/bin/env bash
# PreviewLoop's web-output benchmark: `preview-loop sprites` and `preview-loop render` against the
# ffmpeg CLI doing the same job, as ratios of medians (engine ÷ ffmpeg; below 1 the engine is faster).
#
#   ./Benchmarks/web-outputs.sh            # 5 timed runs + 1 warm-up per command (about 1 min)
#   ./Benchmarks/web-outputs.sh --runs 10  # more runs on a noisy machine
#
# Cases (the 60 s 1080p H.264 clip of Benchmarks/run.sh, keyframes every 8.33 s):
#   1. sprites: one 160x90 tile per 10 s on a 10x10 sheet, plus the WebVTT (engine, default accuracy
#      auto) vs ffmpeg -skip_frame nokey … fps=1/10,scale,crop,tile=10x10 → one JPEG. Target <= 1.0.
#   2. render: 3 s from 20 s, 480x270, 15 fps, H.264 veryfast CRF 23, +faststart, no audio (engine)
#      vs ffmpeg -ss 20 -t 3 … fps=15,scale,crop -an -c:v libx264 -preset veryfast -crf 23. Target <= 1.0.
#   3, 4. render as animated WebP and GIF vs ffmpeg's libwebp_anim and palettegen/paletteuse: for
#      information, no target.
# Every peer decodes with 2 threads (-threads 2 before -i), as the engine does by default.
#
# It builds the release binary in Benchmarks/.build (shared with run.sh), makes the clip with run.sh's
# recipe when Benchmarks/clips/ lacks it, and writes the report to Benchmarks/results/web-outputs.md.
# Scratch files go to Benchmarks/results/web-outputs.tmp/ (git-ignored).
set -euo pipefail

script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$script_dir/.."
ROOT="$PWD"
RUNS=5
while (($#)); do
  case "$1" in
    --runs)
      [[ $# -ge 2 && "$2" =~ ^[1-9][0-9]*$ ]] || { echo "error: --runs needs a positive number" >&2; exit 64; }
      RUNS="$2"; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "error: unknown argument '$1' (try --help)" >&2; exit 64 ;;
  esac
done

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }
q() { printf '%q' "$1"; }

for tool in ffmpeg ffprobe python3; do command -v "$tool" >/dev/null 2>&1 || die "$tool is missing (make deps)"; done
if ! command -v hyperfine >/dev/null 2>&1; then
  log "apt-get install hyperfine"
  export DEBIAN_FRONTEND=noninteractive
  sudo_cmd=""; [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq && $sudo_cmd apt-get install -y -qq --no-install-recommends hyperfine >/dev/null
fi
SWIFT="${SWIFT:-swift}"
[ -d /opt/swift/usr/bin ] && export PATH="/opt/swift/usr/bin:$PATH"

WORK="$ROOT/Benchmarks/results/web-outputs.tmp"
REPORT="$ROOT/Benchmarks/results/web-outputs.md"
rm -rf "$WORK"
mkdir -p "$WORK/out" "$ROOT/Benchmarks/clips"

log "swift build -c release --scratch-path Benchmarks/.build"
"$SWIFT" build -c release --scratch-path "$ROOT/Benchmarks/.build" >"$WORK/build.log" 2>&1 \
  || { tail -n 30 "$WORK/build.log" >&2; die "the release build failed"; }
BIN="$WORK/preview-loop"
cp "$("$SWIFT" build -c release --scratch-path "$ROOT/Benchmarks/.build" --show-bin-path)/preview-loop" "$BIN"

CLIP="$ROOT/Benchmarks/clips/h264-1080p30-60s-gop250.mp4"
if ! ffprobe -v error -select_streams v:0 -show_entries stream=codec_name -of csv=p=0 "$CLIP" 2>/dev/null | grep -q h264; then
  # Benchmarks/run.sh's recipe for this clip: four moving lavfi sources in a 2x2 grid with noise.
  log "making $(basename "$CLIP") (about 1.5 min)"
  ffmpeg -hide_banner -nostdin -loglevel error -y \
    -f lavfi -i "testsrc2=size=960x540:rate=30" \
    -f lavfi -i "mandelbrot=size=480x270:rate=30:start_scale=2,scale=960:540" \
    -f lavfi -i "life=size=480x270:rate=30:mold=10:ratio=0.5:seed=0:life_color=#f0c040,scale=960:540:flags=neighbor" \
    -f lavfi -i "cellauto=size=960x540:rate=30:rule=110:scroll=1,format=yuv420p" \
    -f lavfi -i "sine=frequency=330:sample_rate=48000" \
    -filter_complex "[0:v][1:v][2:v][3:v]xstack=inputs=4:layout=0_0|w0_0|0_h0|w0_h0,noise=alls=8:allf=t,format=yuv420p[v]" \
    -map "[v]" -map 4:a -t 60 -c:v libx264 -preset veryfast -b:v 8M -maxrate 8M -bufsize 16M \
    -g 250 -keyint_min 250 -sc_threshold 0 -pix_fmt yuv420p -c:a aac -b:a 128k -movflags +faststart \
    "${CLIP%.mp4}.partial.mp4" || { rm -f "${CLIP%.mp4}.partial.mp4"; die "could not make the clip"; }
  mv -f "${CLIP%.mp4}.partial.mp4" "$CLIP"
fi

E="$(q "$BIN")"
C="$(q "$CLIP")"
O="$WORK/out"
FF="ffmpeg -hide_banner -nostdin -loglevel error -threads 2"
FILL="scale=480:270:force_original_aspect_ratio=increase,crop=480:270"
declare -a LABELS=() COMMANDS=()
add() { LABELS+=("$1"); COMMANDS+=("$2"); printf '%s: %s\n' "$1" "$2" >>"$WORK/commands.txt"; }
add engine-sprites "$E sprites $C -o $(q "$O/sprites") --every 10 --size 160x90 --grid 10x10"
add ffmpeg-sheet "$FF -skip_frame nokey -i $C -an -vf fps=1/10,scale=160:90:force_original_aspect_ratio=increase,crop=160:90,tile=10x10 -frames:v 1 -y $(q "$O/ffmpeg-sheet.jpg")"
add engine-render-mp4 "$E render $C -o $(q "$O/preview.mp4") --start 20 --length 3 --size 480x270 --fps 15"
add ffmpeg-render-mp4 "$FF -ss 20 -t 3 -i $C -an -vf fps=15,$FILL -c:v libx264 -preset veryfast -crf 23 -pix_fmt yuv420p -movflags +faststart -y $(q "$O/ffmpeg-preview.mp4")"
add engine-render-webp "$E render $C -o $(q "$O/preview.webp") --start 20 --length 3 --size 480x270 --fps 15"
add ffmpeg-render-webp "$FF -ss 20 -t 3 -i $C -an -vf fps=15,$FILL -c:v libwebp_anim -quality 75 -loop 0 -y $(q "$O/ffmpeg-preview.webp")"
add engine-render-gif "$E render $C -o $(q "$O/preview.gif") --start 20 --length 3 --size 480x270 --fps 15"
add ffmpeg-render-gif "$FF -ss 20 -t 3 -i $C -an -filter_complex $(q "fps=15,$FILL,split[a][b];[a]palettegen[p];[b][p]paletteuse") -loop 0 -y $(q "$O/ffmpeg-preview.gif")"

log "checking each command once"
for i in "${!LABELS[@]}"; do
  sh -c "${COMMANDS[$i]}" >"$WORK/${LABELS[$i]}.out" 2>"$WORK/${LABELS[$i]}.err" \
    || { cat "$WORK/${LABELS[$i]}.err" >&2; die "${LABELS[$i]} failed"; }
done

# Alternating rounds: each round runs every command once, in reverse order on even rounds, so a
# burst of load from elsewhere lands on the engine and its peers alike.
log "$RUNS alternating rounds of hyperfine --runs 1 (warm-up 1 in round 1)"
for ((round = 1; round <= RUNS; round++)); do
  args=()
  for i in "${!LABELS[@]}"; do
    j=$i; ((round % 2 == 0)) && j=$((${#LABELS[@]} - 1 - i))
    args+=(--command-name "${LABELS[$j]}" "${COMMANDS[$j]}")
  done
  warm=0; ((round == 1)) && warm=1
  hyperfine --style basic --warmup "$warm" --runs 1 --export-json "$WORK/round-$round.json" "${args[@]}" >>"$WORK/hyperfine.log" 2>&1 \
    || die "hyperfine failed (see $WORK/hyperfine.log)"
done

export BENCH_MACHINE="$(nproc) cores, $(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'); FFmpeg $(ffmpeg -hide_banner -version | head -n1 | awk '{print $3}'); engine $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
export BENCH_LOAD="$(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$WORK" "$REPORT" "$RUNS" <<'PY'
import datetime, glob, json, os, statistics, sys
work, report, runs = sys.argv[1], sys.argv[2], sys.argv[3]
times = {}
for path in sorted(glob.glob(os.path.join(work, "round-*.json"))):
    with open(path) as f:
        for result in json.load(f)["results"]:
            times.setdefault(result["command"], []).extend(result["times"])
def size(name):
    path = os.path.join(work, "out", name)
    if os.path.isdir(path):
        return sum(os.path.getsize(os.path.join(path, n)) for n in os.listdir(path))
    return os.path.getsize(path) if os.path.exists(path) else 0
rows = [("1. sprites 60 s 1080p, 1 tile / 10 s, 10x10 sheet + VTT vs ffmpeg skip_frame nokey + tile", "engine-sprites", "ffmpeg-sheet", 1.0, "sprites", "ffmpeg-sheet.jpg"),
        ("2. render MP4 3 s 480x270 15 fps vs ffmpeg libx264", "engine-render-mp4", "ffmpeg-render-mp4", 1.0, "preview.mp4", "ffmpeg-preview.mp4"),
        ("3. render animated WebP vs ffmpeg libwebp_anim", "engine-render-webp", "ffmpeg-render-webp", None, "preview.webp", "ffmpeg-preview.webp"),
        ("4. render GIF (clip palette, Floyd-Steinberg) vs ffmpeg palettegen/paletteuse", "engine-render-gif", "ffmpeg-render-gif", None, "preview.gif", "ffmpeg-preview.gif")]
lines = ["| case | engine median | ffmpeg median | ratio | target | result | engine bytes | ffmpeg bytes |", "|---|---|---|---|---|---|---|---|"]
summary = []
for name, engine, peer, target, engine_out, peer_out in rows:
    e, p = statistics.median(times[engine]), statistics.median(times[peer])
    ratio = e / p
    verdict = "info" if target is None else ("pass" if ratio <= target else "FAIL")
    lines.append(f"| {name} | {e:.3f} s | {p:.3f} s | {ratio:.3f} | {'-' if target is None else f'<= {target}'} | {verdict} | {size(engine_out)} | {size(peer_out)} |")
    summary.append(f"{name.split('.')[0]}: {ratio:.3f} ({verdict})")
now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
text = f"""# PreviewLoop web-output benchmark

{now}; {runs} timed runs + 1 warm-up per command in alternating rounds, medians; `Benchmarks/web-outputs.sh`.
Machine: {os.environ['BENCH_MACHINE']}. Load average after: {os.environ['BENCH_LOAD']}.

Ratio = engine median ÷ ffmpeg median (below 1 the engine is faster).

""" + "\n".join(lines) + f"""

Ratios: {"; ".join(summary)}.
"""
with open(report + ".tmp", "w") as f:
    f.write(text)
os.replace(report + ".tmp", report)
print(text)
PY
log "report written to ${REPORT#"$ROOT"/}"
