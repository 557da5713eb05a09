#!/usr/bin/env bash
# The preview wall (issue 17) on this machine:
#   1. capacity: the largest number of concurrent realtime loops of *different* 1080p30 H.264 clips
#      (~20 s each, made here with the ffmpeg CLI), each to 320x180, started a second apart, that play
#      3 passes of a 15 s window with 0 drops after the first pass and lateness p99 <= 5 ms (target >= 8);
#      tried at 6, 8, 10, … loops until one fails, with a cache budget that holds every window
#      (N x 80 MiB); then 8 loops with the default shared budget of 256 MiB (evicted loops decode again);
#   2. clips cut mid-GOP by stream copy: 8 clips of 4 s cut with `-ss S -t 4 -c copy` (S = 5, 6, 15, 16,
#      25, 26, 35, 36 s) from a 60 s 1080p30 H.264 film with a 10 s GOP, so each carries 150 or 180
#      frames of its GOP before its first shown frame (a pre-roll FFmpeg marks discard), 3 realtime
#      passes at 320x180 under the default 256 MiB budget, all started at once: drops in each pass and
#      lateness (target: 0 drops after pass 1, p99 <= 5 ms);
#   3. memory: peak RSS and threads of 8 and 32 such loops for 20 s under a 256 MiB shared budget
#      (target RSS <= 256 MiB + 40 MiB per loop; 32 loops reuse the clips in turn), beside the status quo
#      for 8: 8 separate `preview-loop loop --realtime --loops 2` processes (RSS added up, threads counted).
#
# Usage: Benchmarks/wall.sh [--max N] [--clips DIR] [--only mid-gop] [--bin PATH]
#   --max N         the most loops the capacity search tries, and the number of different clips made (default 12)
#   --clips DIR     where the clips are made or reused (default /tmp/previewloop-wall-clips)
#   --only mid-gop  run only the stream-copied mid-GOP case (about a minute once its clips exist)
#   --bin PATH      measure this preview-loop binary instead of building one (an older build, to compare)
# Run it alone: `flock /tmp/previewloop-heavy.lock Benchmarks/wall.sh` on the shared machine.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
max=12
clips=/tmp/previewloop-wall-clips
only=
bin=
while [ $# -gt 0 ]; do
    case "$1" in
        --max) max=$2; shift 2 ;;
        --clips) clips=$2; shift 2 ;;
        --only) only=$2; shift 2 ;;
        --bin) bin=$2; shift 2 ;;
        *) echo "unknown argument $1" >&2; exit 64 ;;
    esac
done
case "$only" in ''|mid-gop) ;; *) echo "--only takes mid-gop" >&2; exit 64 ;; esac
command -v /usr/bin/time >/dev/null || { echo "GNU time is needed (apt-get install time)" >&2; exit 1; }
if [ -z "$bin" ]; then
    swift build -c release --product preview-loop --scratch-path Benchmarks/.build >/dev/null
    bin=Benchmarks/.build/release/preview-loop
fi
mkdir -p "$clips"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Clips cut without re-encoding from inside a long GOP: the cut keeps the GOP from its keyframe, and
# the container's edit list starts playback at S, so the frames before it are a pre-roll every decode
# of the window pays for (and FFmpeg marks discard).
mid_gop() {
    local film="$clips/gop-film.mp4" cuts=() s
    if [ ! -s "$film" ]; then
        echo "making a 60 s 1080p30 H.264 film with a 10 s GOP in $film..."
        ffmpeg -v error -nostdin -y -f lavfi -i testsrc2=size=1920x1080:rate=30 -t 60 -c:v libx264 -preset veryfast \
            -g 300 -pix_fmt yuv420p "$film.tmp.mp4"
        mv "$film.tmp.mp4" "$film"
    fi
    for s in 5 6 15 16 25 26 35 36; do
        local cut="$clips/gop-cut-$s.mp4"
        [ -s "$cut" ] || ffmpeg -v error -nostdin -y -ss "$s" -i "$film" -t 4 -c copy "$cut"
        cuts+=("$cut")
    done
    local preroll=""
    for cut in "${cuts[@]}"; do
        preroll="$preroll $(ffprobe -v error -select_streams v:0 -show_entries packet=flags -of csv=p=0 "$cut" | grep -c D)"
    done
    echo
    echo "clips cut mid-GOP by stream copy: 8 realtime loops of 4 s, 3 passes, 320x180, 256 MiB budget, started at once"
    echo "pre-roll pictures (packets marked discard) per clip:$preroll"
    local out="$work/mid-gop" load; load=$(cut -d' ' -f1 /proc/loadavg)
    "$bin" wall "${cuts[@]}" --realtime --loops 3 --size 320x180 --log "$out" > "$out.summary" 2> "$out.err" || true
    # Frames missing from a pass's rows were dropped (a drop is logged on the next frame shown).
    local passes
    passes=$(cat "$out"/*.csv | awk -F, '$1 ~ /^[0-9]+$/ { rows[$1]++; if ($1 > n) n = $1 }
        END { for (p = 1; p <= n; p++) printf "%s ", rows[p] }')
    local frames; frames=$(for log in "$out"/*.csv; do awk -F, '$1 ~ /^[0-9]+$/ && $2 > m { m = $2 } END { print m }' "$log"; done | paste -sd+ | bc)
    local p99 maxl dropped
    p99=$(awk '/^lateness ms:/ { print $6 }' "$out.summary")
    maxl=$(awk '/^lateness ms:/ { print $8 }' "$out.summary")
    dropped=$(awk '/^dropped:/ { print $2 }' "$out.summary")
    printf '%10s %10s %10s %12s %9s %9s  %s\n' "pass 1" "pass 2" "pass 3" "drops (all)" "p99 ms" "max ms" verdict
    read -r r1 r2 r3 <<< "$passes"
    local d1=$(( frames - ${r1:-0} )) d2=$(( frames - ${r2:-0} )) d3=$(( frames - ${r3:-0} )) verdict=FAIL
    if [ "$d2" = 0 ] && [ "$d3" = 0 ] && awk -v p="$p99" 'BEGIN { exit !(p != "" && p <= 5) }'; then verdict=pass; fi
    printf '%10s %10s %10s %12s %9s %9s  %s (load average %s before)\n' "$d1" "$d2" "$d3" "${dropped:-?}" "${p99:-?}" "${maxl:-?}" "$verdict" "$load"
    echo "drops per pass, per loop (frames missing from its log):"
    for log in "$out"/*.csv; do
        awk -F, -v name="$(basename "$log" .csv)" '$1 ~ /^[0-9]+$/ { rows[$1]++; if ($2 > last) last = $2; if ($1 > n) n = $1 }
            END { s = sprintf("  %-22s", name); for (p = 1; p <= n; p++) s = s sprintf(" %4d", last - rows[p]); print s }' "$log"
    done
    tail -1 "$out.err"
}

if [ "$only" = mid-gop ]; then
    mid_gop
    exit 0
fi

# Different clips: testsrc2 turned through the colour wheel, with its own noise seed (so no two share a
# picture or a bitstream), 20 s at 1080p30, x264 veryfast with a 2 s GOP.
echo "making up to $max different 20 s 1080p30 H.264 clips in $clips (reused when present)..."
for i in $(seq 1 "$max"); do
    clip="$clips/clip-$i.mp4"
    [ -s "$clip" ] && continue
    ffmpeg -v error -nostdin -y -f lavfi -i "testsrc2=s=1920x1080:r=30,hue=h=$((i * 37)),noise=alls=6:allf=t:all_seed=$i" \
        -t 20 -c:v libx264 -preset veryfast -g 60 -pix_fmt yuv420p "$clip.tmp.mp4"
    mv "$clip.tmp.mp4" "$clip"
done
clip_list() { for i in $(seq 1 "$1"); do echo "$clips/clip-$(( (i - 1) % max + 1 )).mp4"; done; }

# One wall run: prints "loops dropped_after_pass1 p99 max dropped_total rss_mb peak_threads" and keeps its logs.
run_wall() {
    local n=$1 budget=$2 out=$3; shift 3
    rm -rf "$out"
    # shellcheck disable=SC2046
    /usr/bin/time -f "%M" -o "$out.rss" "$bin" wall $(clip_list "$n") --size 320x180 --log "$out" \
        --cache-budget "$budget" "$@" > "$out.summary" 2> "$out.err" || true
    local rss threads late_after p99 maxl dropped
    rss=$(( $(tail -1 "$out.rss") / 1024 ))
    threads=$(sed -n 's/.*process peak \([0-9]*\).*/\1/p' "$out.err")
    # A drop is logged on the next frame shown, which may be in the next pass; count by the pass the
    # dropped frame belonged to instead: every pass has the first pass's frames (index 1 to the last),
    # so a frame of pass >= 2 missing from the log was dropped.
    late_after=0
    for log in "$out"/*.csv; do
        [ -f "$log" ] || continue
        late_after=$(( late_after + $(awk -F, '$1 ~ /^[0-9]+$/ { rows[$1]++; if ($2 > last) last = $2; if ($1 > passes) passes = $1 }
            END { d = 0; for (p = 2; p <= passes; p++) d += last - rows[p]; print d }' "$log") ))
    done
    p99=$(awk '/^lateness ms:/ { print $6 }' "$out.summary")
    maxl=$(awk '/^lateness ms:/ { print $8 }' "$out.summary")
    dropped=$(awk '/^dropped:/ { print $2 }' "$out.summary")
    echo "$n ${late_after:-?} ${p99:-?} ${maxl:-?} ${dropped:-?} $rss ${threads:-?}"
}

capacity() {
    local label=$1 per_loop_budget=$2 first=$3 last=$4 best=0
    echo
    echo "capacity, $label: N realtime loops, 3 passes of 15 s, 320x180, started 1 s apart"
    printf '%6s %22s %12s %10s %14s %9s %8s  %s\n' loops "drops after pass 1" "p99 ms" "max ms" "drops (all)" "RSS MB" threads verdict
    for n in $(seq "$first" 2 "$last"); do
        local budget=$per_loop_budget
        [ "$budget" = per-loop ] && budget=$(( n * 80 ))
        local load; load=$(cut -d' ' -f1 /proc/loadavg)
        read -r loops after p99 maxl dropped rss threads < <(run_wall "$n" "$budget" "$work/cap-$n" --realtime --loops 3 --stagger 1)
        local verdict=FAIL
        if [ "$after" = 0 ] && awk -v p="$p99" 'BEGIN { exit !(p != "?" && p <= 5) }'; then verdict=pass; best=$n; fi
        printf '%6s %22s %12s %10s %14s %9s %8s  %s (load average %s before)\n' "$loops" "$after" "$p99" "$maxl" "$dropped" "$rss" "$threads" "$verdict" "$load"
        [ "$verdict" = pass ] || break
    done
    echo "largest passing: $best loops (target >= 8; tried $first to $last)"
}

capacity "cache budget N x 80 MiB (every window cached)" per-loop 6 "$max"
capacity "shared cache budget 256 MiB (the default; 3 windows fit)" 256 8 8

mid_gop

echo
echo "memory: 20 s of N realtime loops under a 256 MiB shared budget (target RSS <= 256 + 40 x N MiB)"
printf '%6s %9s %11s %8s %14s\n' loops "RSS MB" "target MB" threads "frames/drops"
for n in 8 32; do
    read -r loops after p99 maxl dropped rss threads < <(run_wall "$n" 256 "$work/mem-$n" --realtime --seconds 20)
    frames=$(awk '/^frames:/ { print $2 }' "$work/mem-$n.summary")
    printf '%6s %9s %11s %8s %14s\n' "$n" "$rss" $(( 256 + 40 * n )) "$threads" "$frames/$dropped"
done

echo
echo "status quo for 8: 8 separate 'preview-loop loop --realtime --loops 2' processes (30 s; each its own 256 MiB cache)"
timers=()
for i in $(seq 1 8); do
    /usr/bin/time -f "%M" -o "$work/solo-$i.rss" "$bin" loop "$(clip_list 8 | sed -n "${i}p")" --realtime --loops 2 \
        --size 320x180 --log "$work/solo-$i.csv" 2>/dev/null &
    timers+=($!)
done
sleep 10
solo_threads=0
for timer in "${timers[@]}"; do
    for child in $(pgrep -P "$timer" || true); do
        solo_threads=$(( solo_threads + $(ls "/proc/$child/task" 2>/dev/null | wc -l) ))
    done
done
wait "${timers[@]}" || true
solo_rss=0
for i in $(seq 1 8); do solo_rss=$(( solo_rss + $(tail -1 "$work/solo-$i.rss" 2>/dev/null || echo 0) / 1024 )); done
solo_dropped=$(cat "$work"/solo-*.csv 2>/dev/null | awk -F, '$1 ~ /^[0-9]+$/ { d += $8 } END { print d + 0 }')
wall_rss=$(tail -1 "$work/mem-8.rss"); wall_rss=$(( wall_rss / 1024 ))
echo "8 processes: RSS added up $solo_rss MB, threads $solo_threads (at 10 s), drops $solo_dropped"
echo "ratio wall / processes, RSS: $(awk -v a="$wall_rss" -v b="$solo_rss" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')"
