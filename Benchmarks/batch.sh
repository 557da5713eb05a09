#!/usr/bin/env bash
# Batch throughput, side by side on one generated library: `preview-loop batch --jobs 2` against
#   (a) GNU parallel -j2 running the peers a user would copy: ffmpegthumbnailer for the poster, the
#       ffmpeg CLI for the sprite sheets (fps + tile) and the 3 s hover MP4;
#   (b) PreviewLoop's own single-clip commands (thumb, sprites, render) under xargs -P2;
# plus peak RSS of --jobs 2 against one clip alone, and the overhead of sharding (4 shards run one
# after another, summed, against one run). Recipe: poster + sprites with WebVTT (every 10 s) + 3 s
# hover MP4 at 480x270.
#
# The library (Benchmarks/clips-batch/, git-ignored, made once per configuration): H.264, HEVC and
# VP9 in turn, heights 480/720/1080/2160 in turn, every fourth clip rotated 90°, AAC audio,
# durations spread from BATCH_MIN_SECONDS to BATCH_MAX_SECONDS.
#
# Environment (the issue's full configuration is the default; scale it down on a busy machine):
#   BATCH_CLIPS=100  BATCH_MIN_SECONDS=5  BATCH_MAX_SECONDS=600  BATCH_MAX_HEIGHT=2160
#   BATCH_MAX_4K_SECONDS (default: BATCH_MAX_SECONDS) caps the 2160p clips' durations (they cost the most to make)
#   BATCH_GENERATE_ONLY=1 makes the library and stops (run it niced ahead of time on a shared machine)
#   PREVIEW_LOOP=path/to/preview-loop (default .build/release/preview-loop, built when missing)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
N=${BATCH_CLIPS:-100}; MIN=${BATCH_MIN_SECONDS:-5}; MAX=${BATCH_MAX_SECONDS:-600}; MAXH=${BATCH_MAX_HEIGHT:-2160}
MAX4K=${BATCH_MAX_4K_SECONDS:-$MAX}
BIN="${PREVIEW_LOOP:-$ROOT/.build/release/preview-loop}"
if [[ ! -x "$BIN" ]]; then PATH="/opt/swift/usr/bin:$PATH" swift build -c release --product preview-loop; fi
BIN="$(realpath "$BIN")"
missing=()
command -v ffmpegthumbnailer >/dev/null || missing+=(ffmpegthumbnailer)
command -v parallel >/dev/null || missing+=(parallel)
[[ -x /usr/bin/time ]] || missing+=(time)
if ((${#missing[@]})); then
    SUDO=""; [[ $(id -u) -eq 0 ]] || SUDO=sudo
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

LIB="$ROOT/Benchmarks/clips-batch/n$N-${MIN}s-${MAX}s-h$MAXH$([[ $MAX4K != "$MAX" ]] && echo "-4k${MAX4K}s")"
mkdir -p "$LIB"
if [[ ! -f "$LIB/.complete" ]]; then
    echo "making $N clips in $LIB …"
    heights=(480 720 1080 2160)
    codecs=(h264 hevc vp9)
    for ((i = 0; i < N; i++)); do
        h=${heights[i % 4]}; ((h > MAXH)) && h=$MAXH
        w=$(( (h * 16 / 9 + 1) / 2 * 2 ))
        # Durations spread over [MIN, MAX] in a shuffled order (i * 37 mod N).
        d=$(( MIN + (MAX - MIN) * ((i * 37) % N) / (N > 1 ? N - 1 : 1) ))
        ((h == 2160 && d > MAX4K)) && d=$MAX4K
        codec=${codecs[i % 3]}
        case $codec in
            h264) enc=(-c:v libx264 -preset ultrafast -g 50); ext=mp4 ;;
            hevc) enc=(-c:v libx265 -preset ultrafast -x265-params log-level=none:keyint=50 -tag:v hvc1); ext=mp4 ;;
            vp9) enc=(-c:v libvpx-vp9 -deadline realtime -cpu-used 8 -g 50 -b:v 1M); ext=webm ;;
        esac
        audio=(-c:a aac -b:a 64k); [[ $ext == webm ]] && audio=(-c:a libopus -b:a 48k)
        rotate=(); ((i % 4 == 3)) && [[ $ext == mp4 ]] && rotate=(-metadata:s:v:0 rotate=90)
        out="$LIB/clip$(printf %03d "$i")-${h}p-$codec.$ext"
        ffmpeg -nostdin -v error -y -f lavfi -i "testsrc2=size=${w}x$h:rate=25:duration=$d" \
            -f lavfi -i "sine=frequency=$((300 + i)):duration=$d" "${enc[@]}" -pix_fmt yuv420p "${audio[@]}" \
            "${rotate[@]}" -shortest "$out"
    done
    touch "$LIB/.complete"
fi
ls "$LIB"/clip* > "$LIB/list.txt"
[[ -n ${BATCH_GENERATE_ONLY:-} ]] && { echo "library ready: $LIB ($(wc -l < "$LIB/list.txt") clips)"; exit 0; }
N=$(wc -l < "$LIB/list.txt")
WORK="$(mktemp -d /tmp/batch-bench.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
echo '{"poster":{},"sprites":{"every":10},"hover":{"length":3}}' > "$WORK/recipe.json"

measure() {  # name command… → seconds and peak RSS (KB) of the command (children included for RSS: max of any)
    local name=$1; shift
    /usr/bin/time -f "%e %M" -o "$WORK/$name.time" "$@" > "$WORK/$name.out" 2> "$WORK/$name.err" || true
    read -r "${name}_s" "${name}_kb" < "$WORK/$name.time"
}

# PreviewLoop batch, --jobs 2.
measure batch "$BIN" batch "$LIB/list.txt" --out "$WORK/batch" --recipe "$WORK/recipe.json" --jobs 2
grep -q '"status":"failed"' "$WORK/batch/results.jsonl" && { echo "batch: some clips failed:"; grep failed "$WORK/batch/results.jsonl" | head -3; }

# The peers under GNU parallel -j2: the commands a user would copy.
cat > "$WORK/peers.sh" <<'SH'
#!/bin/bash
in=$1; out=$2/$(basename "${in%.*}"); mkdir -p "$out"
ffmpegthumbnailer -i "$in" -o "$out/poster.jpg" -s 320 -q 8
ffmpeg -nostdin -v error -y -i "$in" -an -vf "fps=1/10,scale=160:90:force_original_aspect_ratio=increase,crop=160:90,tile=10x10" -q:v 4 "$out/sheet-%d.jpg"
ffmpeg -nostdin -v error -y -t 3 -i "$in" -an -vf "fps=15,scale=480:270:force_original_aspect_ratio=increase,crop=480:270" \
    -c:v libx264 -crf 23 -pix_fmt yuv420p -movflags +faststart "$out/hover.mp4"
SH
chmod +x "$WORK/peers.sh"
mkdir -p "$WORK/peers"
measure peers parallel -j2 "$WORK/peers.sh" {} "$WORK/peers" :::: "$LIB/list.txt"

# PreviewLoop's single-clip commands, one process per output, under xargs -P2.
cat > "$WORK/single.sh" <<SH
#!/bin/bash
in=\$1; out=$WORK/single/\$(basename "\${in%.*}"); mkdir -p "\$out"
"$BIN" thumb "\$in" -o "\$out/poster.jpg" >/dev/null
"$BIN" sprites "\$in" -o "\$out" --every 10 >/dev/null
"$BIN" render "\$in" -o "\$out/hover.mp4" --length 3 >/dev/null
SH
chmod +x "$WORK/single.sh"
mkdir -p "$WORK/single"
measure single xargs -P2 -n1 "$WORK/single.sh" < "$LIB/list.txt"

# Sharding overhead: 4 shards one after another, summed.
shards_s=0
for i in 0 1 2 3; do
    measure "shard$i" "$BIN" batch "$LIB/list.txt" --out "$WORK/shards" --recipe "$WORK/recipe.json" --jobs 2 --shard "$i/4"
    v="shard${i}_s"; shards_s=$(python3 -c "print(${shards_s} + ${!v})")
done

# One clip alone, for the RSS comparison: the heaviest clip, i.e. the largest clip of the largest
# picture size for each codec, each alone; the peak of the three. (The largest *file* is often a
# long 1080p clip whose decoder needs a third of a 4K one's memory.)
peak_kb=0
for codec in h264 hevc vp9; do
    ls -S "$LIB"/clip*-"${MAXH}p-$codec".* 2>/dev/null | head -1 > "$WORK/one.txt"
    [[ -s "$WORK/one.txt" ]] || continue
    measure "one_$codec" "$BIN" batch "$WORK/one.txt" --out "$WORK/one-$codec" --recipe "$WORK/recipe.json" --jobs 1
    v="one_${codec}_kb"; if ((${!v} > peak_kb)); then peak_kb=${!v}; fi
done
one_kb=$peak_kb

python3 - "$N" "$MIN" "$MAX" "$MAXH" "$batch_s" "$batch_kb" "$peers_s" "$single_s" "$shards_s" "$one_kb" "$(uptime)" "$MAX4K" <<'PY'
import sys
n, lo, hi, h = sys.argv[1:5]
batch, batch_kb, peers, single, shards, one_kb = map(float, sys.argv[5:11])
print(f"library: {n} clips, {lo}-{hi} s (2160p clips at most {sys.argv[12]} s), up to {h}p, H.264/HEVC/VP9, every 4th rotated, with audio")
print(f"recipe: poster + sprites/WebVTT every 10 s + 3 s hover MP4;  {sys.argv[11].strip()}")
print()
print(f"| run | seconds | ratio | target |")
print(f"|---|---|---|---|")
print(f"| preview-loop batch --jobs 2 | {batch:.1f} | 1.00 | |")
print(f"| GNU parallel -j2: ffmpegthumbnailer + ffmpeg CLI | {peers:.1f} | batch/peers = {batch/peers:.2f} | <= 0.5 |")
print(f"| xargs -P2: preview-loop thumb + sprites + render | {single:.1f} | batch/single = {batch/single:.2f} | <= 0.8 |")
print(f"| 4 shards, one after another (sum) | {shards:.1f} | overhead = {100*(shards/batch-1):+.1f} % | <= 5 % |")
print(f"| peak RSS: --jobs 2 / the heaviest clip alone | {batch_kb/1024:.0f} MB / {one_kb/1024:.0f} MB | {batch_kb/one_kb:.2f} | <= 2 |")
PY
