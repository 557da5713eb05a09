#!/usr/bin/env bash
# serve, one cold animated render: the time from request to last byte of animated.FORMAT (10 s of a
# 720p clip at 640x360, 15 fps) from a server just started, for two binaries run alternately (A, B, A,
# B…, each on a fresh server, so no cache answers). Prints each run, each binary's median and B ÷ A, and
# checks both sent the same bytes. Meant for a change to how a render is made (A: before, B: after).
#
# Usage: Benchmarks/serve-animated.sh --a PATH --b PATH [--runs N] [--format mp4|webp|gif]
#        (default 5 runs of each, mp4)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=5; a=""; b=""; format=mp4
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs=$2; shift 2 ;;
        --a) a=$2; shift 2 ;;
        --b) b=$2; shift 2 ;;
        --format) format=$2; shift 2 ;;
        *) echo "unknown argument $1" >&2; exit 64 ;;
    esac
done
[ -x "$a" ] && [ -x "$b" ] || { echo "usage: $0 --a PATH --b PATH [--runs N] [--format mp4|webp|gif]" >&2; exit 64; }
scratch=$(mktemp -d); serve_pid=""
stop() { [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null && wait "$serve_pid" 2>/dev/null; serve_pid=""; }
trap 'stop; rm -rf "$scratch"' EXIT
mkdir "$scratch/root"
ffmpeg -v error -f lavfi -i testsrc2=size=1280x720:rate=30 -t 12 -c:v libx264 -preset ultrafast -g 60 "$scratch/root/clip.mp4"
# One cold render on a fresh server: prints its seconds; the body goes to $2.
cold() {
  rm -f "$scratch/start"
  "$1" serve --root "$scratch/root" --listen 127.0.0.1:0 --workers 1 --json 2>/dev/null >"$scratch/start" &
  serve_pid=$!
  for _ in $(seq 200); do [ -s "$scratch/start" ] && break; sleep 0.05; done
  port=$(sed 's/.*"port":\([0-9]*\).*/\1/' "$scratch/start")
  curl -s -o "$2" -w '%{time_total}' "http://127.0.0.1:$port/clip.mp4/animated.$format?length=10&width=640&height=360"
  stop
}
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
: >"$scratch/a.times"; : >"$scratch/b.times"
for run in $(seq "$runs"); do
  ta=$(cold "$a" "$scratch/a.$format"); tb=$(cold "$b" "$scratch/b.$format")
  echo "run $run: A $ta s, B $tb s"
  echo "$ta" >>"$scratch/a.times"; echo "$tb" >>"$scratch/b.times"
done
cmp -s "$scratch/a.$format" "$scratch/b.$format" || { echo "error: A and B sent different bytes" >&2; exit 1; }
ma=$(median <"$scratch/a.times"); mb=$(median <"$scratch/b.times")
echo "animated.$format, $(stat -c %s "$scratch/b.$format") bytes (the same from both): median A $ma s, B $mb s, B ÷ A $(awk -v a="$ma" -v b="$mb" 'BEGIN { printf "%.3f", b / a }')"
