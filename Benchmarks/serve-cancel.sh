#!/usr/bin/env bash
# serve, cancelling an abandoned render: how long a running render goes on after its only client hangs
# up. A 10-second animated.mp4 of a 20-second 720p clip is requested with `curl --max-time 0.8`; from
# curl's exit, /metrics is polled every 5 ms until previewloop_renders_in_flight is 0. Prints each run's
# milliseconds and checks previewloop_renders_cancelled_total counted every run.
#
# Usage: Benchmarks/serve-cancel.sh [--runs N] [--bin PATH]   (default 5 runs; the release build)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
runs=5; bin=""
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs=$2; shift 2 ;;
        --bin) bin=$2; shift 2 ;;
        *) echo "unknown argument $1" >&2; exit 64 ;;
    esac
done
if [ -z "$bin" ]; then
  swift build -c release --product preview-loop --scratch-path Benchmarks/.build >/dev/null
  bin=$PWD/Benchmarks/.build/release/preview-loop
fi
scratch=$(mktemp -d); serve_pid=""
cleanup() {
  [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null && wait "$serve_pid" 2>/dev/null
  rm -rf "$scratch"
}
trap cleanup EXIT
ffmpeg -v error -f lavfi -i testsrc2=size=1280x720:rate=30 -t 20 -c:v libx264 -preset ultrafast -g 60 "$scratch/long.mp4"
"$bin" serve --root "$scratch" --listen 127.0.0.1:0 --workers 1 --json 2>/dev/null >"$scratch/start" &
serve_pid=$!
for _ in $(seq 100); do [ -s "$scratch/start" ] && break; sleep 0.05; done
port=$(sed 's/.*"port":\([0-9]*\).*/\1/' "$scratch/start")
base="http://127.0.0.1:$port"
in_flight() { curl -s "$base/metrics" | sed -n 's/^previewloop_renders_in_flight //p'; }
for run in $(seq "$runs"); do
  # A new width each run: a new render, not a cached one.
  curl -s -o /dev/null --max-time 0.8 "$base/long.mp4/animated.mp4?length=10&width=$((400 + 2 * run))" || true
  start=$(date +%s%N)
  while [ "$(in_flight)" != "0" ]; do sleep 0.005; done
  echo "run $run: the render stopped $(( ($(date +%s%N) - start) / 1000000 )) ms after the client left"
done
cancelled=$(curl -s "$base/metrics" | sed -n 's/^previewloop_renders_cancelled_total //p')
echo "renders cancelled: $cancelled of $runs"
[ "$cancelled" = "$runs" ]
