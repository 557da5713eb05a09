#!/usr/bin/env bash
# serve under overload: cold thumbnail requests (each a distinct time, so each a render) from wrk with
# many connections, far past what the workers can render, for 60 s. Checks that every answer is 200 or
# 503 with Retry-After, that the process lives, that its peak RSS (sampled every 0.2 s) stays within
# --max-memory + 100 MB, and how long after the load stops warm-hit latency and the queue are back to
# normal. Prints the figures against those targets (Docs/serve.md).
#
# Then the 4K animated burst: a server with --workers 8 --max-memory 1024 gets eight concurrent cold
# 640x640, 6 s, 30 fps animated.mp4 requests of an 8 s 4K clip; its peak RSS must stay within the budget
# + 100 MB (each render is admitted by its estimate at the source's real size).
#
# Usage: Benchmarks/serve-overload.sh [--seconds N] [--connections N] [--burst-only]   (defaults 60 and 64)
# Installs wrk with apt-get when missing. Run it alone: `flock -o /work/build.lock Benchmarks/serve-overload.sh`.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
seconds=60; connections=64; burst_only=no
while [ $# -gt 0 ]; do
    case "$1" in
        --burst-only) burst_only=yes; shift ;;
        --seconds) seconds=$2; shift 2 ;;
        --connections) connections=$2; shift 2 ;;
        *) echo "unknown argument $1" >&2; exit 64 ;;
    esac
done
if ! command -v wrk >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq wrk >/dev/null
fi
# PREVIEW_LOOP_BIN names a binary to measure instead of building one.
if [ -n "${PREVIEW_LOOP_BIN:-}" ]; then
  bin=$PREVIEW_LOOP_BIN
else
  swift build -c release --product preview-loop --scratch-path Benchmarks/.build >/dev/null
  bin=$PWD/Benchmarks/.build/release/preview-loop
fi
scratch=$(mktemp -d); serve_pid=""; sampler_pid=""
cleanup() {
  [ -n "$sampler_pid" ] && kill "$sampler_pid" 2>/dev/null
  [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null && wait "$serve_pid" 2>/dev/null
  rm -rf "$scratch"
}
trap cleanup EXIT

# Starts `serve` on $scratch with the given options; sets serve_pid and base.
start_serve() {
  rm -f "$scratch/start"
  "$bin" serve --root "$scratch" --listen 127.0.0.1:0 --json --access-log /dev/null "$@" > "$scratch/start" 2>"$scratch/serve.err" &
  serve_pid=$!
  for _ in $(seq 100); do [ -s "$scratch/start" ] && break; sleep 0.05; done
  port=$(sed 's/.*"port":\([0-9]*\).*/\1/' "$scratch/start")
  base="http://127.0.0.1:$port"
}

# Samples the server's RSS every 0.1 s into $scratch/peak (kB) while it lives.
sample_rss() {
  echo 0 > "$scratch/peak"
  ( peak=0; while kill -0 "$serve_pid" 2>/dev/null; do
      rss=$(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$serve_pid/status" 2>/dev/null || echo 0)
      [ "${rss:-0}" -gt "$peak" ] && peak=$rss && echo "$peak" > "$scratch/peak"
      sleep 0.1
    done ) &
  sampler_pid=$!
}

# The 4K animated burst.
burst() {
  local budget=1024
  ffmpeg -v error -f lavfi -i testsrc2=size=3840x2160:rate=30 -t 8 -c:v libx264 -preset ultrafast -g 250 "$scratch/4k.mp4"
  start_serve --workers 8 --max-memory "$budget" --queue 16
  local idle; idle=$(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$serve_pid/status")
  sample_rss
  local started; started=$(date +%s%N)
  local curls=()
  for n in 1 2 3 4 5 6 7 8; do
    curl -s -o /dev/null -w "%{http_code}\n" --max-time 300 \
      "$base/4k.mp4/animated.mp4?width=640&height=640&length=6&fps=30&start=0.$n" >> "$scratch/burst.status" &
    curls+=($!)
  done
  wait "${curls[@]}" || true
  local took_ms=$(( ($(date +%s%N) - started) / 1000000 ))
  kill "$sampler_pid" 2>/dev/null; sampler_pid=""
  local peak; peak=$(cat "$scratch/peak")
  kill "$serve_pid" 2>/dev/null; wait "$serve_pid" 2>/dev/null || true; serve_pid=""
  python3 - "$scratch" "$budget" "$idle" "$peak" "$took_ms" <<'PY'
import sys
scratch, budget, idle, peak, took = sys.argv[1:]
statuses = open(f"{scratch}/burst.status").read().split()
peak_mb, idle_mb, limit = int(peak) / 1024, int(idle) / 1024, int(budget) * 1.048576 + 100
print(f"4K animated burst: 8 concurrent 640x640 6 s 30 fps animated.mp4 of an 8 s 3840x2160 H.264 clip, "
      f"--workers 8 --max-memory {budget}: statuses {' '.join(sorted(statuses))}, {int(took) / 1000:.1f} s")
print(f"burst peak RSS {peak_mb:.0f} MB (idle {idle_mb:.0f} MB; target <= {budget} MiB budget + 100 MB = {limit:.0f} MB)")
ok = peak_mb <= limit and len(statuses) == 8 and all(s == "200" for s in statuses)
print("burst targets met" if ok else "burst targets NOT met")
sys.exit(0 if ok else 1)
PY
}

if [ "$burst_only" = yes ]; then
  burst
  exit $?
fi
budget_mib=512
# A 720p clip with 2-second GOPs: an exact-time thumbnail decodes up to 60 frames.
ffmpeg -v error -f lavfi -i testsrc2=size=1280x720:rate=30 -t 60 -c:v libx264 -preset ultrafast -g 60 "$scratch/clip.mp4"
start_serve --workers 2 --queue 16 --max-memory "$budget_mib"
warm="$base/clip.mp4/thumbnail.jpg?time=1&width=320"
curl -sf -o /dev/null "$warm"

# Capacity: cold renders one at a time per worker.
cat > "$scratch/cold.lua" <<'LUA'
local threads = {}
function setup(thread)
  thread:set("id", #threads)
  table.insert(threads, thread)
end
function init(args)
  counter = 0
  statuses = {}
  missing_retry = 0
  offset = tonumber(args[1] or "0")
end
function request()
  counter = counter + 1
  -- A distinct time for every request of every thread: a cold render each.
  local t = ((counter * 16 + id) * 0.0137 + offset) % 59
  return wrk.format("GET", string.format("/clip.mp4/thumbnail.jpg?width=320&time=%.4f", t))
end
function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
  if status == 503 and headers["Retry-After"] == nil then missing_retry = missing_retry + 1 end
end
function done(summary, latency, requests)
  local totals, missing = {}, 0
  for _, thread in ipairs(threads) do
    for status, count in pairs(thread:get("statuses")) do totals[status] = (totals[status] or 0) + count end
    missing = missing + thread:get("missing_retry")
  end
  for status, count in pairs(totals) do io.write(string.format("status %d %d\n", status, count)) end
  io.write(string.format("missing_retry %d\n", missing))
end
LUA
wrk -t2 -c2 -d10s -s "$scratch/cold.lua" "$base" -- 0 > "$scratch/capacity.wrk"
capacity=$(sed -n 's/^Requests\/sec:[[:space:]]*//p' "$scratch/capacity.wrk")
wrk -t2 -c4 -d5s --latency "$warm" > "$scratch/warm-before.wrk"

# The overload, with RSS sampled throughout.
sample_rss
wrk -t2 -c"$connections" -d"${seconds}s" --timeout 30s -s "$scratch/cold.lua" "$base" -- 7 > "$scratch/overload.wrk"
stopped=$(date +%s%N)
# Back to normal: the queue empty and renders finished.
while curl -s "$base/metrics" | grep -qE '^previewloop_(queue_depth|renders_in_flight) [1-9]'; do sleep 0.05; done
drained_ms=$(( ($(date +%s%N) - stopped) / 1000000 ))
wrk -t2 -c4 -d5s --latency "$warm" > "$scratch/warm-after.wrk"
alive=yes; kill -0 "$serve_pid" 2>/dev/null || alive=no
kill "$sampler_pid" 2>/dev/null; sampler_pid=""
overload_status=0
python3 - "$scratch" "$capacity" "$budget_mib" "$drained_ms" "$alive" "$seconds" "$connections" <<'PY' || overload_status=$?
import re, sys
scratch, capacity, budget, drained, alive, seconds, connections = sys.argv[1:]
def ms(text):
    number, unit = re.fullmatch(r"([\d.]+)(us|ms|s)", text).groups()
    return float(number) * {"us": 0.001, "ms": 1, "s": 1000}[unit]
def p99(name):
    return ms(re.search(r"^\s+99%\s+(\S+)", open(f"{scratch}/{name}.wrk").read(), re.M).group(1))
text = open(f"{scratch}/overload.wrk").read()
statuses = {int(a): int(b) for a, b in re.findall(r"^status (\d+) (\d+)$", text, re.M)}
missing = int(re.search(r"^missing_retry (\d+)$", text, re.M).group(1))
socket_errors = re.search(r"Socket errors: (.*)", text)
rate = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
peak_mb = int(open(f"{scratch}/peak").read()) / 1024
others = {s: n for s, n in statuses.items() if s not in (200, 503)}
print(f"capacity (cold thumbnails, 2 connections): {float(capacity):.1f} renders/s")
print(f"overload: wrk -c{connections} -d{seconds}s, {rate:.0f} requests/s offered and answered = {rate / float(capacity):.0f}x capacity")
print(f"answers: {statuses.get(200, 0)} x 200, {statuses.get(503, 0)} x 503, other statuses {others or 'none'}, "
      f"503 without Retry-After: {missing}, socket errors: {socket_errors.group(1) if socket_errors else 'none'}")
print(f"peak RSS {peak_mb:.0f} MB (target <= {budget} MiB budget + 100 MB = {int(budget) * 1.048576 + 100:.0f} MB); process alive: {alive}")
print(f"after the load: queue drained in {int(drained)} ms; warm-hit p99 {p99('warm-before'):.2f} ms before, "
      f"{p99('warm-after'):.2f} ms in the 5 s after (target: back to normal within 5 s)")
ok = not others and missing == 0 and alive == "yes" and peak_mb <= int(budget) * 1.048576 + 100 and int(drained) <= 5000
print("overload targets met" if ok else "overload targets NOT met")
sys.exit(0 if ok else 1)
PY
overload_status=$?
kill "$serve_pid" 2>/dev/null; wait "$serve_pid" 2>/dev/null || true; serve_pid=""
burst_status=0
burst || burst_status=$?
[ "$overload_status" -eq 0 ] && [ "$burst_status" -eq 0 ]
