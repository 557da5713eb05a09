#!/usr/bin/env bash
# serve under a long mixed load (default 30 minutes): warm hits, cold renders (new times), byte ranges
# of animated.mp4, 304 revalidations, and bad requests (400, 404), from wrk with 8 connections against
# a server with a 16 MiB memory cache and a 64 MiB disk cache (both full within the first minutes, so
# growth after that is not the caches filling). Samples RSS every 10 s and checks: no 5xx but 503/504,
# RSS at most 10 % above its value at 5 minutes, the same open descriptors at the end as after warm-up,
# and no temporary file left in the server's scratch folder or the disk cache.
#
# Usage: Benchmarks/serve-soak.sh [--minutes N]   (default 30)
# Installs wrk with apt-get when missing. Run it alone: `flock -o /work/build.lock Benchmarks/serve-soak.sh`.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
minutes=30
while [ $# -gt 0 ]; do
    case "$1" in
        --minutes) minutes=$2; shift 2 ;;
        *) echo "unknown argument $1" >&2; exit 64 ;;
    esac
done
if ! command -v wrk >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq wrk >/dev/null
fi
swift build -c release --product preview-loop --scratch-path Benchmarks/.build >/dev/null
bin=$PWD/Benchmarks/.build/release/preview-loop
scratch=$(mktemp -d); serve_pid=""; sampler_pid=""
cleanup() {
  [ -n "$sampler_pid" ] && kill "$sampler_pid" 2>/dev/null
  [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null && wait "$serve_pid" 2>/dev/null
  rm -rf "$scratch"
}
trap cleanup EXIT
mkdir -p "$scratch/media" "$scratch/tmp"
ffmpeg -v error -f lavfi -i testsrc2=size=1280x720:rate=30 -t 60 -c:v libx264 -preset ultrafast -g 60 "$scratch/media/clip.mp4"
TMPDIR="$scratch/tmp" "$bin" serve --root "$scratch/media" --listen 127.0.0.1:0 --json --workers 2 --queue 32 \
  --memory-cache 16 --cache "$scratch/cache" --cache-size 64M --access-log /dev/null > "$scratch/start" 2>"$scratch/serve.err" &
serve_pid=$!
for _ in $(seq 100); do [ -s "$scratch/start" ] && break; sleep 0.05; done
port=$(sed 's/.*"port":\([0-9]*\).*/\1/' "$scratch/start")
base="http://127.0.0.1:$port"
warm="/clip.mp4/thumbnail.jpg?time=1&width=320"
curl -sf -o /dev/null "$base$warm"
etag=$(curl -sf -D - -o /dev/null "$base$warm" | sed -n 's/^[Ee][Tt]ag: *\(.*\)\r$/\1/p')
curl -sf -o /dev/null "$base/clip.mp4/animated.mp4?length=2&width=320"
cat > "$scratch/mixed.lua" <<'LUA'
local threads = {}
function setup(thread) thread:set("id", #threads); table.insert(threads, thread) end
function init(args) counter = 0; statuses = {}; etag = args[1] end
function request()
  counter = counter + 1
  local kind = counter % 10
  if kind < 4 then return wrk.format("GET", "/clip.mp4/thumbnail.jpg?time=1&width=320") end
  if kind == 4 then
    return wrk.format("GET", "/clip.mp4/thumbnail.jpg?time=1&width=320", {["If-None-Match"] = etag})
  end
  if kind == 5 then
    return wrk.format("GET", "/clip.mp4/animated.mp4?length=2&width=320", {["Range"] = "bytes=" .. (counter % 1000) .. "-"})
  end
  if kind == 6 then return wrk.format("GET", "/clip.mp4/thumbnail.jpg?width=0") end
  if kind == 7 then return wrk.format("GET", "/nothing-" .. counter .. ".mp4/thumbnail.jpg") end
  -- Cold: a new time each (and so a new disk-cache entry, evicted as the 64 MiB fill).
  return wrk.format("GET", string.format("/clip.mp4/thumbnail.jpg?width=320&time=%.4f", ((counter * 8 + id) * 0.0173) % 59))
end
function response(status, headers, body) statuses[status] = (statuses[status] or 0) + 1 end
function done(summary, latency, requests)
  local totals = {}
  for _, thread in ipairs(threads) do
    for status, count in pairs(thread:get("statuses")) do totals[status] = (totals[status] or 0) + count end
  end
  for status, count in pairs(totals) do io.write(string.format("status %d %d\n", status, count)) end
end
LUA
( start=$(date +%s); while kill -0 "$serve_pid" 2>/dev/null; do
    echo "$(( $(date +%s) - start )) $(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$serve_pid/status")" >> "$scratch/rss"
    sleep 10
  done ) &
sampler_pid=$!
# One minute of warm-up first: the descriptor count after it is the baseline.
wrk -t2 -c8 -d60s -s "$scratch/mixed.lua" "$base" -- "$etag" > "$scratch/warmup.wrk"
sleep 2
fds_start=$(ls "/proc/$serve_pid/fd" | wc -l)
wrk -t2 -c8 -d"$((minutes * 60 - 60))s" --timeout 30s --latency -s "$scratch/mixed.lua" "$base" -- "$etag" > "$scratch/soak.wrk"
sleep 2
fds_end=$(ls "/proc/$serve_pid/fd" | wc -l)
leftovers=$( (find "$scratch/tmp" -mindepth 2; find "$scratch/cache" -name '.tmp-*') | wc -l)
alive=yes; kill -0 "$serve_pid" 2>/dev/null || alive=no
kill "$sampler_pid" 2>/dev/null; sampler_pid=""
python3 - "$scratch" "$minutes" "$fds_start" "$fds_end" "$leftovers" "$alive" <<'PY'
import re, sys
scratch, minutes, fds_start, fds_end, leftovers, alive = sys.argv[1:]
statuses = {}
for name in ("warmup", "soak"):
    for status, count in re.findall(r"^status (\d+) (\d+)$", open(f"{scratch}/{name}.wrk").read(), re.M):
        statuses[int(status)] = statuses.get(int(status), 0) + int(count)
samples = [tuple(map(int, line.split())) for line in open(f"{scratch}/rss") if len(line.split()) == 2]
at5 = next((kb for t, kb in samples if t >= 300), samples[-1][1])
later = max(kb for t, kb in samples if t >= 300) if any(t >= 300 for t, _ in samples) else at5
growth = (later - at5) / at5 * 100
bad = {s: n for s, n in statuses.items() if s >= 500 and s not in (503, 504)}
total = sum(statuses.values())
print(f"soak: {minutes} min of mixed traffic (hits, 304s, ranges, 400s, 404s, cold renders), wrk -t2 -c8, {total} requests")
print("statuses: " + ", ".join(f"{n} x {s}" for s, n in sorted(statuses.items())))
print(f"5xx other than 503/504: {bad or 'none'}; process alive: {alive}")
print(f"RSS at 5 min {at5 / 1024:.0f} MB, highest after {later / 1024:.0f} MB: {growth:+.1f} % (target <= 10 %)")
print(f"open descriptors after warm-up {fds_start}, at the end {fds_end}; temporary files left: {leftovers}")
ok = not bad and alive == "yes" and growth <= 10 and fds_start == fds_end and leftovers == "0"
print("soak targets met" if ok else "soak targets NOT met")
sys.exit(0 if ok else 1)
PY
