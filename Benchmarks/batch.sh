#!/usr/bin/env bash
# Batch throughput, side by side on one generated library: `preview-loop batch --jobs 2` against
#   (a) GNU parallel -j2 running the peers a user would copy: ffmpegthumbnailer for the poster, the
#       ffmpeg CLI for the sprite sheets (fps + tile) and the 3 s hover MP4;
#   (b) PreviewLoop's own single-clip commands (thumb, sprites, render) under xargs -P2;
# plus peak RSS of --jobs 2 against one clip alone, and the overhead of sharding (4 shards run one
# after another, summed, against one run). Recipe: poster + sprites with WebVTT (every 10 s) + 3 s
# hover MP4 at 480x270.
#
# The library (Benchmarks/clips-batch/, git-ignored, made once per configuration, in a folder whose
# name gives that configuration): H.264, HEVC and VP9 in turn, heights 480/720/1080/2160 in turn,
# every fourth clip rotated 90° (display matrix; MP4 only, so the 2160p H.264/HEVC clips), AAC or Opus
# audio, durations from BATCH_MIN_SECONDS to BATCH_MAX_SECONDS. It is cheap at full durations: one
# base segment per (codec, height) is encoded once (testsrc2 + a sine tone, BATCH_BASE_SECONDS long,
# a keyframe exactly every 2 s, in Benchmarks/clips-batch/bases-*), and each clip is the base joined
# to itself by the concat demuxer and cut at its duration with `-c copy`: seconds of I/O per clip
# instead of encoding. The decoders see the same bitstream a clip encoded in one piece would give
# (the same GOPs again and again); the picture repeats every BATCH_BASE_SECONDS, which no output here
# depends on. Durations are log-uniform by default (BATCH_SPREAD=log: d = MIN·(MAX/MIN)^(k/(N−1)) for
# rank k, so as many clips of 5–30 s as of 100–600 s: many short clips and a few long films, as in
# real libraries; 100 clips of 5–600 s hold 3.5 h of video, mean 126 s) or linear (BATCH_SPREAD=linear,
# mean 302 s). The ranks are shuffled (k = i·37 mod N), so every height and codec gets short and long
# clips.
#
# Environment (the issue's full configuration is the default; scale it down on a busy machine):
#   BATCH_CLIPS=100  BATCH_MIN_SECONDS=5  BATCH_MAX_SECONDS=600  BATCH_MAX_HEIGHT=2160
#   BATCH_SPREAD=log|linear (default log)  BATCH_BASE_SECONDS=20 (length of the encoded base segments)
#   BATCH_MAX_4K_SECONDS (default: BATCH_MAX_SECONDS) caps the 2160p clips' durations: the peers' ffmpeg
#     sprite pass decodes every frame, and 2160p frames are most of that run's time. The figures in
#     Docs/batch.md use BATCH_MAX_4K_SECONDS=120: timing the peers on 5 s and 20 s cuts of the 12 base
#     segments predicted 18 min for them at 120 s and 27 min uncapped (×1.12, what the 120 s run then
#     measured against its prediction: ~30 min), i.e. a run of ~35 min holding both cores of a shared
#     machine; at 120 s the whole run took 25 min. The other 75 clips keep the full 5–600 s.
#   BATCH_GENERATE_ONLY=1 makes the library and stops (run it niced ahead of time on a shared machine;
#     it does not need the release build)
#   PREVIEW_LOOP=path/to/preview-loop (default .build/release/preview-loop, built when missing)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
N=${BATCH_CLIPS:-100}; MIN=${BATCH_MIN_SECONDS:-5}; MAX=${BATCH_MAX_SECONDS:-600}; MAXH=${BATCH_MAX_HEIGHT:-2160}
MAX4K=${BATCH_MAX_4K_SECONDS:-$MAX}
missing=()
command -v ffmpegthumbnailer >/dev/null || missing+=(ffmpegthumbnailer)
command -v parallel >/dev/null || missing+=(parallel)
[[ -x /usr/bin/time ]] || missing+=(time)
if ((${#missing[@]})); then
    SUDO=""; [[ $(id -u) -eq 0 ]] || SUDO=sudo
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

SPREAD=${BATCH_SPREAD:-log}; BASE=${BATCH_BASE_SECONDS:-20}
[[ $SPREAD == log || $SPREAD == linear ]] || { echo "BATCH_SPREAD must be log or linear" >&2; exit 64; }
# Base segments, one per (codec, height), shared by every library made from segments of that length.
BASES="$ROOT/Benchmarks/clips-batch/bases-${BASE}s-v2"
cap4k=""; [[ $MAX4K != "$MAX" ]] && cap4k="-4k${MAX4K}s"  # (inside $(…) a false test ended the script under set -e)
LIB="$ROOT/Benchmarks/clips-batch/n$N-${MIN}s-${MAX}s-h$MAXH$cap4k-$SPREAD-base${BASE}s"
mkdir -p "$LIB" "$BASES"
heights=(480 720 1080 2160)
codecs=(h264 hevc vp9)
base_of() {  # codec height → the base segment's path, encoded once (keyframes every 2 s exactly, with audio)
    local codec=$1 h=$2 w=$(( ($2 * 16 / 9 + 1) / 2 * 2 )) enc ext audio
    case $codec in
        h264) enc=(-c:v libx264 -preset ultrafast -g 50 -keyint_min 50 -sc_threshold 0); ext=mp4 ;;
        hevc) enc=(-c:v libx265 -preset ultrafast -x265-params log-level=none:keyint=50:min-keyint=50:scenecut=0 -tag:v hvc1); ext=mp4 ;;
        vp9) enc=(-c:v libvpx-vp9 -deadline realtime -cpu-used 8 -g 50 -keyint_min 50 -b:v 1M); ext=webm ;;
    esac
    audio=(-c:a aac -b:a 64k); [[ $ext == webm ]] && audio=(-c:a libopus -b:a 48k)
    local out="$BASES/base-${h}p-$codec.$ext"
    if [[ ! -s $out ]]; then
        echo "  encoding the ${BASE} s base segment ${h}p $codec …" >&2
        ffmpeg -nostdin -v error -y -f lavfi -i "testsrc2=size=${w}x$h:rate=25:duration=$BASE" \
            -f lavfi -i "sine=frequency=$((300 + h / 4)):duration=$BASE" "${enc[@]}" -pix_fmt yuv420p "${audio[@]}" \
            -shortest "$out.part.$ext"
        mv "$out.part.$ext" "$out"
    fi
    echo "$out"
}
if [[ ! -f "$LIB/.complete" ]]; then
    echo "making $N clips in $LIB (durations $SPREAD over ${MIN}-${MAX} s, stream copies of ${BASE} s base segments) …"
    for ((i = 0; i < N; i++)); do
        h=${heights[i % 4]}; ((h > MAXH)) && h=$MAXH
        codec=${codecs[i % 3]}
        # Duration rank k in a shuffled order (i * 37 mod N), mapped onto [MIN, MAX]: log-uniform by
        # default (MIN * (MAX/MIN)^(k/(N-1)): as many clips between 5 and 30 s as between 100 and 600 s,
        # many short clips and some long films, as in real libraries), or linear (BATCH_SPREAD=linear).
        k=$(( (i * 37) % N ))
        d=$(awk -v lo="$MIN" -v hi="$MAX" -v k="$k" -v n="$N" -v s="$SPREAD" 'BEGIN {
            f = (n > 1) ? k / (n - 1) : 0
            d = (s == "log") ? lo * exp(log(hi / lo) * f) : lo + (hi - lo) * f
            printf "%d", d + 0.5 }')
        ((h == 2160 && d > MAX4K)) && d=$MAX4K
        base=$(base_of "$codec" "$h")
        ext=${base##*.}
        rotate=(); ((i % 4 == 3)) && [[ $ext == mp4 ]] && rotate=(-metadata:s:v:0 rotate=90)
        out="$LIB/clip$(printf %03d "$i")-${h}p-$codec-${d}s.$ext"
        # Enough copies of the base for d seconds, joined by the concat demuxer and cut at d: packets
        # are copied, nothing is decoded or encoded.
        : > "$LIB/.concat.txt"
        for ((r = 0; r * BASE < d; r++)); do echo "file '$base'" >> "$LIB/.concat.txt"; done
        ffmpeg -nostdin -v error -y -f concat -safe 0 -i "$LIB/.concat.txt" -map 0 -c copy -t "$d" \
            "${rotate[@]}" "$out"
    done
    rm -f "$LIB/.concat.txt"
    touch "$LIB/.complete"
fi
ls "$LIB"/clip* > "$LIB/list.txt"
[[ -n ${BATCH_GENERATE_ONLY:-} ]] && { echo "library ready: $LIB ($(wc -l < "$LIB/list.txt") clips)"; exit 0; }
N=$(wc -l < "$LIB/list.txt")
BIN="${PREVIEW_LOOP:-$ROOT/.build/release/preview-loop}"
if [[ ! -x "$BIN" ]]; then PATH="/opt/swift/usr/bin:$PATH" swift build -c release --product preview-loop; fi
BIN="$(realpath "$BIN")"
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
# sprites -o DIR refuses a folder holding files it did not write (the poster), so the sheets get their own.
"$BIN" thumb "\$in" -o "\$out/poster.jpg" --json >> "\$out/records.jsonl"
"$BIN" sprites "\$in" -o "\$out/sprites" --every 10 --json >> "\$out/records.jsonl"
"$BIN" render "\$in" -o "\$out/hover.mp4" --length 3 --json >> "\$out/records.jsonl"
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
    # (A small library may have no such clip: ls fails, which must not end the script under pipefail.)
    { ls -S "$LIB"/clip*-"${MAXH}p-$codec"[.-]* 2>/dev/null || true; } | head -1 > "$WORK/one.txt"
    [[ -s "$WORK/one.txt" ]] || continue
    measure "one_$codec" "$BIN" batch "$WORK/one.txt" --out "$WORK/one-$codec" --recipe "$WORK/recipe.json" --jobs 1
    v="one_${codec}_kb"; if ((${!v} > peak_kb)); then peak_kb=${!v}; fi
done
one_kb=$peak_kb

# Every run must have made every output, or its time means nothing: count the clips each one completed.
complete() {  # dir poster sheet hover → clips whose three outputs exist and are not empty
    local n=0 d
    for d in "$1"/*/; do [[ -s $d/$2 && -s $d/$3 && -s $d/$4 ]] && n=$((n + 1)); done
    echo $n
}
batch_ok=$(complete "$WORK/batch" poster.jpg sprites-1.jpg hover.mp4)
peers_ok=$(complete "$WORK/peers" poster.jpg sheet-1.jpg hover.mp4)
single_ok=$(complete "$WORK/single" poster.jpg sprites/sprites-1.jpg hover.mp4)
echo "clips with all three outputs: batch $batch_ok/$N, peers $peers_ok/$N, single-clip commands $single_ok/$N"
# Keep the per-output timings (results.jsonl of the batch, the single commands' --json records) for a look afterwards.
KEEP="$LIB/last-run"; rm -rf "$KEEP"; mkdir -p "$KEEP"
cp "$WORK/batch/results.jsonl" "$KEEP/batch-results.jsonl"
cat "$WORK"/single/*/records.jsonl > "$KEEP/single-records.jsonl" 2>/dev/null || true

python3 - "$N" "$MIN" "$MAX" "$MAXH" "$batch_s" "$batch_kb" "$peers_s" "$single_s" "$shards_s" "$one_kb" "$(uptime)" "$MAX4K" "$SPREAD" "$BASE" "$KEEP" <<'PY'
import sys, json, os
n, lo, hi, h = sys.argv[1:5]
batch, batch_kb, peers, single, shards, one_kb = map(float, sys.argv[5:11])
spread, base, keep = sys.argv[13:16]
print(f"library: {n} clips, {lo}-{hi} s {spread}-spread (2160p clips at most {sys.argv[12]} s), up to {h}p, H.264/HEVC/VP9, every 4th rotated, with audio; stream copies of {base} s base segments")
print(f"recipe: poster + sprites/WebVTT every 10 s + 3 s hover MP4;  {sys.argv[11].strip()}")
print()
print(f"| run | seconds | ratio | target |")
print(f"|---|---|---|---|")
print(f"| preview-loop batch --jobs 2 | {batch:.1f} | 1.00 | |")
print(f"| GNU parallel -j2: ffmpegthumbnailer + ffmpeg CLI | {peers:.1f} | batch/peers = {batch/peers:.2f} | <= 0.5 |")
print(f"| xargs -P2: preview-loop thumb + sprites + render | {single:.1f} | batch/single = {batch/single:.2f} | <= 0.8 |")
print(f"| 4 shards, one after another (sum) | {shards:.1f} | overhead = {100*(shards/batch-1):+.1f} % | <= 5 % |")
print(f"| peak RSS: --jobs 2 / the heaviest clip alone | {batch_kb/1024:.0f} MB / {one_kb/1024:.0f} MB | {batch_kb/one_kb:.2f} | <= 2 |")
# Where the time goes: the per-output timings summed over the clips (seconds of one job; two run at once).
sums = {"batch": {}, "single": {}}
for name, side in (("batch-results.jsonl", "batch"), ("single-records.jsonl", "single")):
    path = os.path.join(keep, name)
    if not os.path.exists(path): continue
    for line in open(path):
        r = json.loads(line)
        if r.get("type") != "clip": continue
        label = r.get("command", "batch")
        for k, v in r.get("timings", {}).items():
            sums[side][f"{label}.{k}"] = sums[side].get(f"{label}.{k}", 0) + v / 1000
print()
for side, t in sums.items():
    print(f"{side} per-output seconds (summed over clips): " + ", ".join(f"{k} {v:.1f}" for k, v in sorted(t.items())))
print(f"(records kept in {keep})")
PY
