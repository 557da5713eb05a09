#!/usr/bin/env bash
# serve, cold thumbnails side by side with thumbor + thumbor-video-engine (both from PyPI) in one run:
# distinct times over a 10-minute 1080p H.264 clip and a 4K HEVC clip, 320x180 JPEG, 8 connections,
# from `preview-loop serve` (2 workers, no cache hits: every request a new time) and from thumbor (2
# processes, its video engine with the still(T) and format(jpeg) filters, the file loader on the same
# folder, no result storage). Prints requests/s of each and the ratio (target >= 3x), and serve's p50
# on one connection against the CLI `thumb` for the same requests (target <= 1.2x).
#
# Usage: Benchmarks/serve-thumbor.sh [--seconds N]   (default 30 per server and clip)
# Makes the clips once in Benchmarks/.build/clips and thumbor's venv in Benchmarks/.build/thumbor-venv.
# Run it alone: `flock -o /work/build.lock Benchmarks/serve-thumbor.sh`.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
seconds=30
while [ $# -gt 0 ]; do
    case "$1" in
        --seconds) seconds=$2; shift 2 ;;
        *) echo "unknown argument $1" >&2; exit 64 ;;
    esac
done
if ! command -v wrk >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq wrk >/dev/null
fi
swift build -c release --product preview-loop --scratch-path Benchmarks/.build >/dev/null
bin=$PWD/Benchmarks/.build/release/preview-loop
venv=$PWD/Benchmarks/.build/thumbor-venv
if [ ! -x "$venv/bin/thumbor" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q thumbor thumbor-video-engine
fi
clips=$PWD/Benchmarks/.build/clips
mkdir -p "$clips"
# 4 Mbit/s, as a 1080p web upload is (about 300 MB).
if [ ! -s "$clips/hd.mp4" ]; then
  ffmpeg -v error -y -f lavfi -i testsrc2=size=1920x1080:rate=30 -t 600 \
    -c:v libx264 -preset ultrafast -b:v 4M -maxrate 5M -bufsize 8M -g 120 -pix_fmt yuv420p -f mp4 "$clips/hd.mp4.part"
  mv "$clips/hd.mp4.part" "$clips/hd.mp4"
fi
if [ ! -s "$clips/uhd.mp4" ]; then
  ffmpeg -v error -y -f lavfi -i testsrc2=size=3840x2160:rate=24 -t 20 \
    -c:v libx265 -preset ultrafast -b:v 12M -x265-params log-level=error -g 48 -pix_fmt yuv420p -tag:v hvc1 -f mp4 "$clips/uhd.mp4.part"
  mv "$clips/uhd.mp4.part" "$clips/uhd.mp4"
fi
scratch=$(mktemp -d); serve_pid=""; thumbor_pid=""
cleanup() {
  [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null && wait "$serve_pid" 2>/dev/null
  [ -n "$thumbor_pid" ] && kill -- "-$thumbor_pid" 2>/dev/null
  rm -rf "$scratch"
}
trap cleanup EXIT
"$bin" serve --root "$clips" --listen 127.0.0.1:0 --json --workers 2 --memory-cache 0 --access-log /dev/null \
  > "$scratch/start" 2>/dev/null &
serve_pid=$!
thumbor_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$scratch/thumbor.conf" <<CONF
LOADER = 'thumbor.loaders.file_loader'
FILE_LOADER_ROOT_PATH = '$clips'
ENGINE = 'thumbor_video_engine.engines.video'
FILTERS = ['thumbor_video_engine.filters.format', 'thumbor_video_engine.filters.still']
FFMPEG_PATH = '/usr/bin/ffmpeg'
FFPROBE_PATH = '/usr/bin/ffprobe'
ALLOW_UNSAFE_URL = True
STORAGE = 'thumbor.storages.no_storage'
RESULT_STORAGE = None
MAX_AGE = 0
QUALITY = 85
CONF
setsid "$venv/bin/thumbor" -c "$scratch/thumbor.conf" -p "$thumbor_port" -i 127.0.0.1 -l error --processes 2 \
  > "$scratch/thumbor.log" 2>&1 &
thumbor_pid=$!
for _ in $(seq 100); do [ -s "$scratch/start" ] && break; sleep 0.05; done
serve_port=$(sed 's/.*"port":\([0-9]*\).*/\1/' "$scratch/start")
for _ in $(seq 200); do curl -sf -o /dev/null "http://127.0.0.1:$thumbor_port/healthcheck" && break; sleep 0.1; done
# Both must answer a JPEG before anything is timed.
curl -sf -o "$scratch/t.jpg" "http://127.0.0.1:$thumbor_port/unsafe/320x180/filters:still(12.5):format(jpeg)/hd.mp4"
curl -sf -o "$scratch/s.jpg" "http://127.0.0.1:$serve_port/hd.mp4/thumbnail.jpg?time=12.5&width=320&height=180"
file "$scratch/t.jpg" "$scratch/s.jpg" | grep -c JPEG | grep -qx 2 || { echo "serve-thumbor.sh: a server did not answer a JPEG" >&2; exit 1; }

# Distinct times for every request: cold renders on both servers.
cat > "$scratch/cold.lua" <<'LUA'
local threads = {}
function setup(thread) thread:set("id", #threads); table.insert(threads, thread) end
function init(args) counter = 0; kind = args[1]; clip = args[2]; span = tonumber(args[3]) end
function request()
  counter = counter + 1
  local t = ((counter * 8 + id) * 7.3137) % span
  if kind == "thumbor" then
    return wrk.format("GET", string.format("/unsafe/320x180/filters:still(%.3f):format(jpeg)/%s", t, clip))
  end
  return wrk.format("GET", string.format("/%s/thumbnail.jpg?width=320&height=180&time=%.3f", clip, t))
end
LUA
: > "$scratch/rows"
for clip in hd.mp4 uhd.mp4; do
  span=$([ "$clip" = hd.mp4 ] && echo 599 || echo 19.5)
  wrk -t2 -c8 -d"${seconds}s" --timeout 60s --latency -s "$scratch/cold.lua" "http://127.0.0.1:$serve_port" -- serve "$clip" "$span" \
    > "$scratch/serve-$clip.wrk"
  # thumbor pipes the whole file into ffmpeg, which then decodes from the start up to the time: its
  # requests take tens of seconds, so it gets three times as long to finish some.
  wrk -t2 -c8 -d"$((seconds * 3))s" --timeout 120s --latency -s "$scratch/cold.lua" "http://127.0.0.1:$thumbor_port" -- thumbor "$clip" "$span" \
    > "$scratch/thumbor-$clip.wrk"
  # p50 on one connection against the CLI on the same kind of request (new times again).
  wrk -t1 -c1 -d10s --timeout 60s --latency -s "$scratch/cold.lua" "http://127.0.0.1:$serve_port" -- serve "$clip" "$span" \
    > "$scratch/serve1-$clip.wrk"
  : > "$scratch/cli-$clip"
  for index in $(seq 9); do
    t=$(python3 -c "print(f'{($index * 61.7) % $span:.3f}')")
    start=$(date +%s%N)
    "$bin" thumb "$clips/$clip" -o "$scratch/cli.jpg" --at "$t" --size 320x180 --quiet
    echo $(( ($(date +%s%N) - start) / 1000 )) >> "$scratch/cli-$clip"
  done
done
# The raw wrk outputs stay for a look: Benchmarks/.build/serve-thumbor-last/.
rm -rf Benchmarks/.build/serve-thumbor-last && mkdir -p Benchmarks/.build/serve-thumbor-last
cp "$scratch"/*.wrk "$scratch"/cli-* "$scratch/thumbor.log" Benchmarks/.build/serve-thumbor-last/
python3 - "$scratch" "$seconds" <<'PY'
import re, statistics, sys
scratch, seconds = sys.argv[1], sys.argv[2]
def ms(text):
    # wrk prints "0.00us" or "-nanus" when nothing finished.
    match = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text)
    if not match: return float("nan")
    number, unit = match.groups()
    return float(number) * {"us": 0.001, "ms": 1, "s": 1000, "m": 60000}[unit]
def read(name):
    text = open(f"{scratch}/{name}.wrk").read()
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    p50_match = re.search(r"^\s+50%\s+(\S+)", text, re.M)
    p50 = ms(p50_match.group(1)) if p50_match else float("nan")
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    errors = re.search(r"Socket errors: (.*)", text)
    done = int(re.search(r"(\d+) requests in", text).group(1))
    return rate, p50, int(bad.group(1)) if bad else 0, errors.group(1) if errors else "none", done
print(f"cold 320x180 JPEG thumbnails at distinct times, wrk -t2 -c8, {seconds} s for serve and {int(seconds) * 3} s for thumbor, "
      "one server after the other")
print(f"{'clip':<34}{'serve req/s':>12}{'thumbor req/s':>15}{'ratio':>8}{'serve p50 c1':>14}{'CLI thumb p50':>15}{'p50 ratio':>11}")
ok = True
for clip, label in (("hd.mp4", "10 min 1080p H.264"), ("uhd.mp4", "20 s 2160p HEVC")):
    serve, thumbor, single = read(f"serve-{clip}"), read(f"thumbor-{clip}"), read(f"serve1-{clip}")
    cli = statistics.median(int(x) for x in open(f"{scratch}/cli-{clip}").read().split()) / 1000
    ratio, p50_ratio = serve[0] / thumbor[0] if thumbor[0] else float("inf"), single[1] / cli
    print(f"{label:<34}{serve[0]:>12.1f}{thumbor[0]:>15.2f}{ratio:>7.1f}x{single[1]:>12.1f}ms{cli:>13.1f}ms{p50_ratio:>10.2f}x")
    print(f"  requests answered: serve {serve[4]}, thumbor {thumbor[4]}")
    for name, row in (("serve", serve), ("thumbor", thumbor)):
        if row[2] or row[3] != "none":
            print(f"  {name} on {clip}: {row[2]} non-2xx answers, socket errors: {row[3]}")
    ok = ok and ratio >= 3 and p50_ratio <= 1.2 and serve[2] == 0
print("targets (>= 3x thumbor, p50 <= 1.2x thumb) met" if ok else "targets NOT met")
sys.exit(0 if ok else 1)
PY
