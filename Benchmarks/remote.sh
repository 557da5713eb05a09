#!/usr/bin/env bash
# What remote inputs cost: bytes fetched, requests made and wall time of preview-loop's outputs over
# http (a counting range server on 127.0.0.1) and s3:// (SeaweedFS, Scripts/s3-store.sh), on a 10-min
# 1080p H.264 MP4 of about 400 MB (testsrc2, 25 fps, 250-frame GOP, 5.4 Mb/s) with its index at the end
# (ffmpeg's default) and a +faststart copy (index at the front), made once and cached in CACHE.
#
# For each input: the default poster (`thumb`), `thumb --at 50%`, `strip --count 10` (its default
# span: a 15-s window, every frame decoded, so it needs the window's packets), `strip --count 10 --span
# all` (across the clip: keyframes) and `sprites --every 10`; over http also with the BEFORE binary when given (a build that reads http(s)
# through FFmpeg's own protocol), and ffmpegthumbnailer (`-s 320`, one still) over the same URL. Prints a
# table of bytes (as the server counted them written; for s3:// the engine's own `remote` count),
# requests, wall time, bytes ÷ the file's size, and whether each output is byte-identical to the same
# command's output on the local file. Then the same http jobs and ffmpegthumbnailer again through
# Benchmarks/delay-proxy.py, which adds RTT ms of round-trip time (default 20; a userspace stand-in for
# `tc netem`, which needs the kernel's sch_netem) — their times are the figures to read there.
#
#   Benchmarks/remote.sh [--cache DIR] [--before path/to/old/preview-loop] [--rtt MS] [path/to/preview-loop]
#
# The binary: the path given, else $PREVIEW_LOOP_BIN, else a release build in Benchmarks/.build.
# CACHE defaults to /tmp/previewloop-remote-cache (making the clip takes about 5 minutes on 2 cores).
# Needs ffmpeg, python3, curl, ffmpegthumbnailer; SeaweedFS's weed for the s3:// rows (skipped without).
set -euo pipefail
cd "$(dirname "$0")/.."
. Benchmarks/common.sh

cache=/tmp/previewloop-remote-cache before="" binary="" rtt=20
while [ $# -gt 0 ]; do
  case "$1" in
    --cache) cache="$2"; shift 2 ;;
    --before) before="$2"; shift 2 ;;
    --rtt) rtt="$2"; shift 2 ;;
    *) binary="$1"; shift ;;
  esac
done
need ffmpeg python3 curl
binary="$(binary_argument "${binary:-${PREVIEW_LOOP_BIN:-}}")"
mkdir -p "$cache"

if [ ! -s "$cache/clip-end.mp4" ]; then
  log "making the 10-min 1080p clip (index at the end) in $cache"
  ffmpeg -nostdin -v error -y -f lavfi -i testsrc2=size=1920x1080:rate=25:duration=600 \
    -c:v libx264 -preset superfast -b:v 5400k -maxrate 6000k -bufsize 12000k -g 250 -keyint_min 250 -sc_threshold 0 \
    -pix_fmt yuv420p "$cache/part-end.mp4"
  mv "$cache/part-end.mp4" "$cache/clip-end.mp4"
fi
if [ ! -s "$cache/clip-front.mp4" ]; then
  ffmpeg -nostdin -v error -y -i "$cache/clip-end.mp4" -c copy -movflags +faststart "$cache/part-front.mp4"
  mv "$cache/part-front.mp4" "$cache/clip-front.mp4"
fi
size=$(stat -c %s "$cache/clip-end.mp4")

work="$(mktemp -d)"
server_pid="" proxy_pid="" store=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
  [ -n "$proxy_pid" ] && kill "$proxy_pid" 2>/dev/null || true
  [ -n "$store" ] && Scripts/s3-store.sh stop "$store" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

python3 -u Benchmarks/range-server.py "$cache" > "$work/server.out" 2>&1 &
server_pid=$!
for _ in $(seq 1 50); do grep -q "port" "$work/server.out" 2>/dev/null && break; sleep 0.1; done
port=$(sed -n 's/.*port \([0-9]*\).*/\1/p' "$work/server.out")
[ -n "$port" ] || die "the range server did not start"
base="http://127.0.0.1:$port"

tags="poster half strip strip-all sprites"
# The outputs of each command, named by a tag: OUT is the output path the command writes.
command_for() {  # TAG OUT -> the arguments after the binary, with INPUT as a placeholder
  case "$1" in
    poster) echo "thumb INPUT -o $2.jpg" ;;
    half) echo "thumb INPUT --at 50% -o $2.jpg" ;;
    strip) echo "strip INPUT --count 10 -o $2.jpg" ;;
    strip-all) echo "strip INPUT --count 10 --span all -o $2.jpg" ;;
    sprites) echo "sprites INPUT --every 10 -o $2" ;;
  esac
}
output_of() { case "$1" in sprites) echo "$2" ;; *) echo "$2.jpg" ;; esac; }

# The local file's outputs, the reference.
for placement in end front; do
  for tag in $tags; do
    read -r -a args <<< "$(command_for "$tag" "$work/local-$placement-$tag")"
    args=("${args[@]/INPUT/$cache/clip-$placement.mp4}")
    "$binary" "${args[@]}" > /dev/null
  done
done

now() { date +%s.%N; }
rows=()
row() { rows+=("$(printf '| %-13s | %-6s | %-9s | %12s | %8s | %7s | %8s | %-9s |' "$@")"); }
measure_http() {  # LABEL BINARY PLACEMENT TAG [URL BASE]
  local label="$1" bin="$2" placement="$3" tag="$4" out="$work/$1-$3-$4" through="${5:-$base}"
  read -r -a args <<< "$(command_for "$tag" "$out")"
  args=("${args[@]/INPUT/$through/clip-$placement.mp4}")
  curl -fsS "$base/__reset" > /dev/null
  local start end
  start=$(now); "$bin" "${args[@]}" > /dev/null; end=$(now)
  local stats; stats=$(curl -fsS "$base/__stats")
  local bytes requests
  bytes=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["bytes"])' "$stats")
  requests=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["requests"])' "$stats")
  local same=no
  if diff -rq "$(output_of "$tag" "$out")" "$(output_of "$tag" "$work/local-$placement-$tag")" > /dev/null; then same=yes; fi
  row "$tag" "$placement" "$label" "$bytes" "$requests" "$(printf '%.2f' "$(echo "$end - $start" | bc)")" \
    "$(printf '%.4f' "$(echo "$bytes / $size" | bc -l)")" "$same"
}

measure_thumbnailer() {  # LABEL PLACEMENT [URL BASE]
  command -v ffmpegthumbnailer > /dev/null || return 0
  local label="$1" placement="$2" through="${3:-$base}" start end stats bytes requests
  curl -fsS "$base/__reset" > /dev/null
  start=$(now); ffmpegthumbnailer -i "$through/clip-$placement.mp4" -o "$work/ft-$placement.jpg" -s 320 2> /dev/null; end=$(now)
  stats=$(curl -fsS "$base/__stats")
  bytes=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["bytes"])' "$stats")
  requests=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["requests"])' "$stats")
  row "one still" "$placement" "$label" "$bytes" "$requests" "$(printf '%.2f' "$(echo "$end - $start" | bc)")" \
    "$(printf '%.4f' "$(echo "$bytes / $size" | bc -l)")" "-"
}

for placement in end front; do
  for tag in $tags; do
    measure_http http "$binary" "$placement" "$tag"
    [ -n "$before" ] && measure_http ffmpeg-http "$before" "$placement" "$tag"
  done
  measure_thumbnailer ffmpegthumbnailer "$placement"
done

# The same over a slower network: RTT ms more round-trip time through the delay proxy.
python3 -u Benchmarks/delay-proxy.py "$port" --rtt "$rtt" > "$work/proxy.out" 2>&1 &
proxy_pid=$!
for _ in $(seq 1 50); do grep -q "port" "$work/proxy.out" 2>/dev/null && break; sleep 0.1; done
delayed="http://127.0.0.1:$(sed -n 's/.*port \([0-9]*\).*/\1/p' "$work/proxy.out")"
for placement in end front; do
  for tag in $tags; do measure_http "http+${rtt}ms" "$binary" "$placement" "$tag" "$delayed"; done
  measure_thumbnailer "ffmpegthumbnailer+${rtt}ms" "$placement" "$delayed"
done

if [ -x .build/seaweedfs/bin/weed ] || command -v weed > /dev/null || [ -n "${WEED:-}" ]; then
  store="$work/store"
  eval "$(Scripts/s3-store.sh start "$store")"
  export AWS_ENDPOINT_URL AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY
  for placement in end front; do
    Scripts/s3-store.sh put "$store" "s3://bench/clip-$placement.mp4" "$cache/clip-$placement.mp4" > /dev/null
    for tag in $tags; do
      out="$work/s3-$placement-$tag"
      read -r -a args <<< "$(command_for "$tag" "$out")"
      args=("${args[@]/INPUT/s3://bench/clip-$placement.mp4}")
      start=$(now); record=$("$binary" "${args[@]}" --json); end=$(now)
      bytes=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["remote"]["bytes_fetched"])' "$record")
      requests=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["remote"]["requests"])' "$record")
      same=no
      if diff -rq "$(output_of "$tag" "$out")" "$(output_of "$tag" "$work/local-$placement-$tag")" > /dev/null; then same=yes; fi
      row "$tag" "$placement" "s3" "$bytes" "$requests" "$(printf '%.2f' "$(echo "$end - $start" | bc)")" \
        "$(printf '%.4f' "$(echo "$bytes / $size" | bc -l)")" "$same"
    done
  done
else
  log "no weed binary: the s3:// rows are skipped (make deps installs it)"
fi

echo "Remote inputs: $(basename "$cache")/clip-{end,front}.mp4, $size bytes, 600 s 1080p H.264, 250-frame GOP"
echo "(index at the end / at the front); $(date -u +%Y-%m-%d), $(nproc) cores; binary: $binary"
echo
echo "| output        | index  | via       |        bytes | requests | time s  | ÷ file   | identical |"
echo "|---------------|--------|-----------|--------------|----------|---------|----------|-----------|"
printf '%s\n' "${rows[@]}"
