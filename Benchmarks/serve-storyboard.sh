#!/usr/bin/env bash
# serve, a storyboard's three parts cold: on a server just started, `storyboard.vtt`, then
# `storyboard.json`, then `storyboard.jpg` of one clip with the same parameters (as a player asks for
# a thumbnail track and then its picture), against `storyboard.jpg` alone on another fresh server.
# The three share one render, so they should take about the time of one: prints each run, the medians,
# three ÷ one (target <= 1.2) and how much `previewloop_renders_total` rose for the three (target 1).
# Alternating order (odd runs the three first), each on a fresh server with no disk cache.
#
# Usage: Benchmarks/serve-storyboard.sh [--runs N] [path/to/preview-loop]   (default 5 runs; the
#        binary: the path given, else $PREVIEW_LOOP_BIN, else a release build in Benchmarks/.build)
# The clip: 60 s of 1080p25 H.264 (testsrc2, x264 ultrafast, 250-frame GOP), made once (~30 s).
# On the shared machine run it alone: `flock /tmp/previewloop-build.lock Benchmarks/serve-storyboard.sh`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
RUNS=5
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) RUNS="$2"; shift 2 ;;
    -*) echo "unknown option $1" >&2; exit 64 ;;
    *) break ;;
  esac
done
. Benchmarks/common.sh
need ffmpeg curl
if [ -n "${1:-}" ]; then BIN="$(binary_argument "$1")"
elif [ -n "${PREVIEW_LOOP_BIN:-}" ]; then BIN="$(binary_argument "$PREVIEW_LOOP_BIN")"
else BIN="$(release_binary)"; fi

scratch=$(mktemp -d "${TMPDIR:-/tmp}/previewloop-storyboard.XXXXXX"); serve_pid=""
stop() { if [ -n "$serve_pid" ]; then kill "$serve_pid" 2>/dev/null || true; wait "$serve_pid" 2>/dev/null || true; fi; serve_pid=""; }
trap 'stop; rm -rf "$scratch"' EXIT
mkdir "$scratch/root"
log "making a 60 s 1080p clip"
ffmpeg -v error -nostdin -f lavfi -i testsrc2=size=1920x1080:rate=25:duration=60 -c:v libx264 -preset ultrafast \
  -g 250 -keyint_min 250 -sc_threshold 0 -pix_fmt yuv420p "$scratch/root/clip.mp4"

# start: a fresh server; sets $port.
start() {
  rm -f "$scratch/start"
  "$BIN" serve --root "$scratch/root" --listen 127.0.0.1:0 --json 2>"$scratch/serve.log" >"$scratch/start" &
  serve_pid=$!
  for _ in $(seq 400); do [ -s "$scratch/start" ] && break; sleep 0.05; done
  [ -s "$scratch/start" ] || { cat "$scratch/serve.log" >&2; die "serve did not start"; }
  port=$(sed 's/.*"port":\([0-9]*\).*/\1/' "$scratch/start")
}
renders() { curl -s "http://127.0.0.1:$port/metrics" | awk '$1 == "previewloop_renders_total" { print $2 }'; }
# fetch NAME OUT: the seconds from request to last byte; fails on anything but 200.
fetch() {
  local result
  result=$(curl -s -o "$2" -w '%{http_code} %{time_total}' "http://127.0.0.1:$port/clip.mp4/$1")
  [ "${result%% *}" = 200 ] || die "$1 answered ${result%% *}"
  echo "${result#* }"
}
one() {
  start
  fetch storyboard.jpg "$scratch/one.jpg"
  stop
}
three() {
  start
  local before after t1 t2 t3
  before=$(renders)
  t1=$(fetch storyboard.vtt "$scratch/three.vtt"); t2=$(fetch storyboard.json "$scratch/three.json")
  t3=$(fetch storyboard.jpg "$scratch/three.jpg")
  after=$(renders)
  stop
  echo "$t1 $t2 $t3 $((after - before))"
}
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
: >"$scratch/one.t"; : >"$scratch/three.t"; maxrenders=0
echo "preview-loop: $BIN; $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg); $RUNS runs"
for run in $(seq "$RUNS"); do
  if [ $((run % 2)) = 1 ]; then read -r t1 t2 t3 n < <(three); t=$(one)
  else t=$(one); read -r t1 t2 t3 n < <(three); fi
  sum=$(awk -v a="$t1" -v b="$t2" -v c="$t3" 'BEGIN { printf "%.3f", a + b + c }')
  echo "run $run: vtt $t1 s + json $t2 s + jpg $t3 s = $sum s ($n render(s)); jpg alone $t s"
  echo "$sum" >>"$scratch/three.t"; echo "$t" >>"$scratch/one.t"
  [ "$n" -gt "$maxrenders" ] && maxrenders=$n
done
cmp -s "$scratch/one.jpg" "$scratch/three.jpg" || die "the storyboard picture differs between the two servers"
m3=$(median <"$scratch/three.t"); m1=$(median <"$scratch/one.t")
awk -v a="$m3" -v b="$m1" -v n="$maxrenders" 'BEGIN {
  printf "storyboard .vtt + .json + .jpg cold: median %.3f s; .jpg alone: %.3f s; three ÷ one %.2fx (target <= 1.2: %s); renders for the three: at most %d (target 1: %s)\n",
    a, b, a / b, a / b <= 1.2 ? "met" : "missed", n, n == 1 ? "met" : "missed" }'
