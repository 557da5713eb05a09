#!/usr/bin/env bash
# The default poster side by side with ffmpegthumbnailer, on look-alikes of the footage a platform
# gets, made here with the ffmpeg CLI (reproducible: the same lavfi sources and encoder settings):
#
#   phone-fade      1080x1920 phone clip: H.264 1920x1080 stored with a 90-degree rotation, 30 fps,
#                   10 s, a 1 s fade in from black, keyint 30, no B-frames, camera-like noise, AAC
#   hdr10-sdr-tag   1080p HDR10 phone clip: HEVC Main10, PQ / BT.2020 in the bitstream (with mastering
#                   display and MaxCLL) in an MP4 whose colour box says BT.709, 30 fps, 10 s, keyint 30
#   hlg-chart       HLG colour chart: HEVC Main10 1080p SMPTE HD bars, ARIB STD-B67 / BT.2020,
#                   25 fps, 10 s, x265's default GOP (one keyframe)
#   h264-gop250     60 s 1080p H.264, 25 fps, 250-frame GOP, 3 B-frames, noise, AAC
#   hevc-4k-key0    8 s 4K HEVC whose only keyframe is its first frame, 25 fps
#   vp9-cues-end    10 s 1080p VP9 WebM, keyint 60, the cues at the end (ffmpeg's default), Opus
#   h264-dense      5 s 720p H.264, keyint 12: a short clip with dense keyframes
#   black-leader    2 s of black, then the picture: 12 s 1080p H.264, 25 fps, a streaming encode's
#                   fixed 2 s GOP (keyint 50, no scene-cut keyframes), noise, AAC
#
# For each clip, in alternating order (odd rounds preview-loop first, even rounds the peer first),
# after one untimed warm-up of each: `preview-loop thumb CLIP -o p.jpg` (the default poster: the
# first good frame of the first 15 s, 320 wide), the floor `preview-loop thumb CLIP -o k.jpg
# --accuracy keyframe --at 0` (one keyframe, no judgement), and `ffmpegthumbnailer -i CLIP -o f.jpg
# -s 320` (its default: the keyframe at or after 10 % of the clip, no check). Prints the median wall
# time of RUNS runs and the peak RSS (GNU time's %M, the maximum over the runs), the ratios
# preview-loop ÷ ffmpegthumbnailer per clip, their geometric mean, and default ÷ floor: the cost of the
# poster's judgement. Targets: geometric mean of the time ratios <= 1.0, no clip above 1.5x, peak RSS
# <= 1.25x ffmpegthumbnailer's on every clip.
#
#   Benchmarks/poster.sh [--runs N] [--clips DIR] [--only NAME] [--best] [--batch] [path/to/preview-loop]
#
# The binary: the path given, else $PREVIEW_LOOP_BIN, else a release build in Benchmarks/.build.
# --clips DIR keeps the clips in DIR and reuses them (default: a temporary folder, removed at the end;
# making them takes about 2 minutes on 2 cores). --only NAME measures one clip. --best adds `thumb
# --at best` on a 30-minute 1080p clip against one `ffmpegthumbnailer -t 10%` run.
# --batch adds a poster-only `batch --jobs 2` over the clips, each three times under its own id (24
# clips), against GNU parallel -j2 running one ffmpegthumbnailer per clip (the same 24), alternating
# which goes first, median of RUNS; each batch run starts from an empty output folder.
# On the shared machine run it alone: `flock /tmp/previewloop-build.lock Benchmarks/poster.sh`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
RUNS=5
CLIPS=""
ONLY=""
BEST=0
BATCH=0
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) RUNS="$2"; shift 2 ;;
    --clips) CLIPS="$2"; shift 2 ;;
    --only) ONLY="$2"; shift 2 ;;
    --best) BEST=1; shift ;;
    --batch) BATCH=1; shift ;;
    --only-default) shift ;;              # the old name of the default
    -*) echo "unknown option $1" >&2; exit 64 ;;
    *) break ;;
  esac
done
. Benchmarks/common.sh
install_missing() {  # TOOL PACKAGE
  command -v "$1" >/dev/null 2>&1 && return
  local sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  log "installing $2"
  $sudo apt-get install -y -qq "$2" >/dev/null 2>&1 \
    || { $sudo apt-get update -qq && $sudo apt-get install -y -qq "$2" >/dev/null; }
}
install_missing ffmpegthumbnailer ffmpegthumbnailer
[ "$BATCH" = 1 ] && install_missing parallel parallel
[ -x /usr/bin/time ] || install_missing /usr/bin/time time
need ffmpeg ffprobe ffmpegthumbnailer
if [ -n "${1:-}" ]; then BIN="$(binary_argument "$1")"
elif [ -n "${PREVIEW_LOOP_BIN:-}" ]; then BIN="$(binary_argument "$PREVIEW_LOOP_BIN")"
else BIN="$(release_binary)"; fi

WORK="$(mktemp -d "${TMPDIR:-/tmp}/previewloop-poster.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
if [ -z "$CLIPS" ]; then CLIPS="$WORK/clips"; fi
mkdir -p "$CLIPS"

# clip NAME FILE ffmpeg-arguments…: makes $CLIPS/FILE unless it is there (written whole or not at all).
wanted() { [ -z "$ONLY" ] || [ "$ONLY" = "$1" ]; }
clip() {
  local name="$1" file="$2"; shift 2
  wanted "$name" || return 0
  [ -s "$CLIPS/$file" ] && return
  log "making $CLIPS/$file"
  local part="$CLIPS/part.$file"
  ffmpeg -v error -nostdin -y "$@" "$part"
  mv "$part" "$CLIPS/$file"
}
x265() { echo "log-level=error:$1"; }
GRAIN="noise=alls=10:allf=t+u"
HDR10="colorprim=bt2020:transfer=smpte2084:colormatrix=bt2020nc:master-display=G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)L(10000000,50):max-cll=1000,400"
# A phone held upright: the sensor's landscape picture with a 90-degree display matrix, fading in.
clip phone-fade phone-fade.mp4 -f lavfi -i "testsrc2=size=1920x1080:rate=30:duration=10,$GRAIN,fade=in:st=0:d=1" \
  -f lavfi -i "sine=frequency=440:duration=10" -c:v libx264 -preset veryfast -crf 23 -profile:v high -g 30 -bf 0 \
  -pix_fmt yuv420p -c:a aac -b:a 96k -shortest -f mp4
# FFmpeg 5.1 writes the display matrix of a `rotate` tag only when it copies the stream, not when it
# encodes it: the rotation is a second, stream-copying step.
if wanted phone-fade && [ ! -s "$CLIPS/phone.mp4" ]; then
  ffmpeg -v error -nostdin -y -i "$CLIPS/phone-fade.mp4" -c copy -metadata:s:v:0 rotate=90 "$CLIPS/part.phone.mp4"
  mv "$CLIPS/part.phone.mp4" "$CLIPS/phone.mp4"
fi
# HDR10 in the bitstream, BT.709 in the MP4's colour box (what an editor that rewrote the container
# without looking at the stream leaves behind).
clip hdr10-sdr-tag hdr10-sdr-tag.mp4 -f lavfi -i "testsrc2=size=1920x1080:rate=30:duration=10,$GRAIN,format=yuv420p10le" \
  -c:v libx265 -preset ultrafast -crf 24 -pix_fmt yuv420p10le -x265-params "$(x265 "keyint=30:min-keyint=30:scenecut=0:$HDR10")" \
  -color_primaries bt709 -color_trc bt709 -colorspace bt709 -tag:v hvc1 -f mp4
clip hlg-chart hlg-chart.mp4 -f lavfi -i "smptehdbars=size=1920x1080:rate=25:duration=10,format=yuv420p10le" \
  -c:v libx265 -preset ultrafast -crf 22 -pix_fmt yuv420p10le \
  -x265-params "$(x265 "colorprim=bt2020:transfer=arib-std-b67:colormatrix=bt2020nc")" \
  -color_primaries bt2020 -color_trc arib-std-b67 -colorspace bt2020nc -tag:v hvc1 -f mp4
clip h264-gop250 h264-gop250.mp4 -f lavfi -i "testsrc2=size=1920x1080:rate=25:duration=60,$GRAIN" \
  -f lavfi -i "sine=frequency=440:duration=60" -c:v libx264 -preset ultrafast -crf 23 -g 250 -keyint_min 250 \
  -sc_threshold 0 -bf 3 -pix_fmt yuv420p -c:a aac -b:a 96k -shortest -f mp4
clip hevc-4k-key0 hevc-4k-key0.mp4 -f lavfi -i "testsrc2=size=3840x2160:rate=25:duration=8" \
  -c:v libx265 -preset ultrafast -crf 26 -x265-params "$(x265 keyint=-1:scenecut=0:open-gop=0)" -pix_fmt yuv420p -f mp4
clip vp9-cues-end vp9-cues-end.webm -f lavfi -i "testsrc2=size=1920x1080:rate=25:duration=10,$GRAIN" \
  -f lavfi -i "sine=frequency=440:duration=10" -c:v libvpx-vp9 -deadline realtime -cpu-used 8 -row-mt 1 -b:v 4M \
  -g 60 -pix_fmt yuv420p -c:a libopus -b:a 64k -shortest -f webm
clip h264-dense h264-dense.mp4 -f lavfi -i "testsrc2=size=1280x720:rate=25:duration=5,$GRAIN" \
  -c:v libx264 -preset veryfast -crf 23 -g 12 -pix_fmt yuv420p -f mp4
clip black-leader black-leader.mp4 -f lavfi -i "color=black:size=1920x1080:rate=25:duration=2" \
  -f lavfi -i "testsrc2=size=1920x1080:rate=25:duration=10,$GRAIN" -f lavfi -i "sine=frequency=440:duration=12" \
  -filter_complex "[0:v][1:v]concat=n=2:v=1:a=0,format=yuv420p[v]" -map "[v]" -map 2:a \
  -c:v libx264 -preset veryfast -crf 23 -g 50 -keyint_min 50 -sc_threshold 0 -c:a aac -b:a 96k -f mp4
if [ "$BEST" = 1 ] && [ ! -s "$CLIPS/h264-1080p-30min.mp4" ]; then
  log "making $CLIPS/h264-1080p-30min.mp4"
  ffmpeg -v error -nostdin -y -f lavfi -i "testsrc2=size=1920x1080:rate=25:duration=60" \
    -f lavfi -i "sine=frequency=440:duration=60" -c:v libx264 -preset ultrafast -crf 28 -g 250 \
    -pix_fmt yuv420p -c:a aac -shortest "$WORK/one-minute.mp4"
  ffmpeg -v error -nostdin -y -stream_loop 29 -i "$WORK/one-minute.mp4" -c copy "$CLIPS/part.30min.mp4"
  mv "$CLIPS/part.30min.mp4" "$CLIPS/h264-1080p-30min.mp4"
fi

# once SIDE command…: one timed run; appends its seconds to $WORK/SIDE.t and its peak kB to $WORK/SIDE.m.
once() {
  local side="$1"; shift
  local start end
  start=$(date +%s.%N)
  /usr/bin/time -f %M -o "$WORK/rss" "$@" >/dev/null 2>"$WORK/err" || { cat "$WORK/err" >&2; die "failed: $*"; }
  end=$(date +%s.%N)
  echo "$start $end" | awk '{ printf "%.4f\n", $2 - $1 }' >> "$WORK/$side.t"
  tail -1 "$WORK/rss" >> "$WORK/$side.m"
}
median() { sort -n "$1" | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
peak() { sort -n "$1" | tail -1; }
# measure CLIP: alternating rounds of the three commands; sets the globals d_t d_m k_t k_m f_t f_m
# (median seconds and peak kB of the default, the floor and ffmpegthumbnailer) and CHOICE.
measure() {
  local input="$CLIPS/$1" round
  local default=("$BIN" thumb "$input" -o "$WORK/p.jpg")
  local floor=("$BIN" thumb "$input" -o "$WORK/k.jpg" --accuracy keyframe --at 0)
  local peer=(ffmpegthumbnailer -i "$input" -o "$WORK/f.jpg" -s 320)
  rm -f "$WORK"/*.t "$WORK"/*.m
  CHOICE="$("${default[@]}" 2>&1)"; "${floor[@]}" >/dev/null 2>&1; "${peer[@]}" >/dev/null 2>&1
  for round in $(seq "$RUNS"); do
    if [ $((round % 2)) = 1 ]; then
      once d "${default[@]}"; once k "${floor[@]}"; once f "${peer[@]}"
    else
      once f "${peer[@]}"; once k "${floor[@]}"; once d "${default[@]}"
    fi
  done
  d_t=$(median "$WORK/d.t"); d_m=$(peak "$WORK/d.m")
  k_t=$(median "$WORK/k.t"); k_m=$(peak "$WORK/k.m")
  f_t=$(median "$WORK/f.t"); f_m=$(peak "$WORK/f.m")
}

echo "preview-loop: $BIN"
echo "$(ffmpegthumbnailer -v 2>&1 | head -1); $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg); $RUNS runs, median time, peak RSS"
printf "%-14s | %-17s | %-17s | %-17s | %-23s | %s\n" clip "default" "floor (keyframe 0)" "ffmpegthumbnailer" \
  "default ÷ ftn: time RSS" "floor ÷ ftn, default ÷ floor"
SUMLOG=0; COUNT=0; FLOORLOG=0; WORST=0; RSS_OK=1; CHOICES=""
for name in phone-fade hdr10-sdr-tag hlg-chart h264-gop250 hevc-4k-key0 vp9-cues-end h264-dense black-leader; do
  wanted "$name" || continue
  file=$(cd "$CLIPS" && ls "$name".* | grep -v '^part\.' | head -1)
  [ "$name" = phone-fade ] && file=phone.mp4
  measure "$file"
  read -r line logratio floorlog worst rss_ok < <(awk -v n="$name" -v dt="$d_t" -v dm="$d_m" -v kt="$k_t" -v km="$k_m" \
    -v ft="$f_t" -v fm="$f_m" -v w="$WORST" 'BEGIN {
      r = dt / ft; m = dm / fm
      line = sprintf("%-14s | %6.3f s %6.1f MB | %6.3f s %6.1f MB | %6.3f s %6.1f MB | %5.2fx%s %5.2fx%s | %5.2fx %5.2fx",
        n, dt, dm / 1024, kt, km / 1024, ft, fm / 1024, r, r > 1.5 ? "!" : " ", m, m > 1.25 ? "!" : " ", kt / ft, dt / kt)
      gsub(/ /, "\x01", line)
      printf "%s %.6f %.6f %.4f %d\n", line, log(r), log(kt / ft), (r > w ? r : w), (m <= 1.25)
    }')
  echo "${line//$'\x01'/ }"
  SUMLOG=$(awk -v a="$SUMLOG" -v b="$logratio" 'BEGIN { print a + b }')
  FLOORLOG=$(awk -v a="$FLOORLOG" -v b="$floorlog" 'BEGIN { print a + b }')
  WORST=$worst; COUNT=$((COUNT + 1)); [ "$rss_ok" = 1 ] || RSS_OK=0
  CHOICES+="  $name: ${CHOICE#wrote }"$'\n'
done
if [ "$COUNT" -gt 0 ]; then
  awk -v s="$SUMLOG" -v f="$FLOORLOG" -v n="$COUNT" -v w="$WORST" -v ok="$RSS_OK" 'BEGIN {
    g = exp(s / n)
    printf "geometric mean of default ÷ ffmpegthumbnailer: %.2fx (target <= 1.0: %s); worst clip %.2fx (target <= 1.5: %s); RSS <= 1.25x on every clip: %s\n",
      g, g <= 1.0 ? "met" : "missed", w, w <= 1.5 ? "met" : "missed", ok ? "met" : "missed"
    printf "geometric mean of floor ÷ ffmpegthumbnailer: %.2fx; of default ÷ floor (the judgement): %.2fx\n", exp(f / n), g / exp(f / n)
  }'
  echo "posters chosen:"
  printf "%s" "$CHOICES"
fi
if [ "$BEST" = 1 ]; then
  rm -f "$WORK"/*.t "$WORK"/*.m
  best=("$BIN" thumb "$CLIPS/h264-1080p-30min.mp4" -o "$WORK/b.jpg" --at best)
  peer=(ffmpegthumbnailer -i "$CLIPS/h264-1080p-30min.mp4" -o "$WORK/g.jpg" -s 320 -t 10%)
  "${best[@]}" >/dev/null 2>&1; "${peer[@]}" >/dev/null 2>&1
  for round in $(seq "$RUNS"); do
    if [ $((round % 2)) = 1 ]; then once d "${best[@]}"; once f "${peer[@]}"; else once f "${peer[@]}"; once d "${best[@]}"; fi
  done
  awk -v dt="$(median "$WORK/d.t")" -v dm="$(peak "$WORK/d.m")" -v ft="$(median "$WORK/f.t")" -v fm="$(peak "$WORK/f.m")" 'BEGIN {
    printf "30 min 1080p, --at best vs -t 10%%: %.3f s %.1f MB | %.3f s %.1f MB | time %.2fx (target <= 1.5) RSS %.2fx\n",
      dt, dm / 1024, ft, fm / 1024, dt / ft, dm / fm }'
fi
if [ "$BATCH" = 1 ]; then
  rm -f "$WORK"/*.t "$WORK"/*.m "$WORK/manifest.jsonl" "$WORK/inputs.txt"
  for name in phone-fade hdr10-sdr-tag hlg-chart h264-gop250 hevc-4k-key0 vp9-cues-end h264-dense black-leader; do
    wanted "$name" || continue
    file=$(cd "$CLIPS" && ls "$name".* | grep -v '^part\.' | head -1)
    [ "$name" = phone-fade ] && file=phone.mp4
    for copy in 1 2 3; do
      echo "{\"id\":\"$name-$copy\",\"input\":\"$CLIPS/$file\"}" >> "$WORK/manifest.jsonl"
      echo "$CLIPS/$file $WORK/peer-$name-$copy.jpg" >> "$WORK/inputs.txt"
    done
  done
  echo '{"poster":{"size":"320x180"}}' > "$WORK/poster-only.json"
  clips=$(wc -l < "$WORK/manifest.jsonl")
  # As scripts, so GNU time measures each whole run (its peak RSS is then the largest single process).
  printf 'rm -rf "%s/batch-out"\nexec "%s" batch "%s/manifest.jsonl" --out "%s/batch-out" --recipe "%s/poster-only.json" --jobs 2 --quiet\n' \
    "$WORK" "$BIN" "$WORK" "$WORK" "$WORK" > "$WORK/ours.sh"
  printf "exec parallel -j2 --colsep ' ' ffmpegthumbnailer -i {1} -o {2} -s 320 :::: \"%s/inputs.txt\"\n" "$WORK" > "$WORK/theirs.sh"
  bash "$WORK/ours.sh" >/dev/null 2>&1; bash "$WORK/theirs.sh" >/dev/null 2>&1
  for round in $(seq "$RUNS"); do
    if [ $((round % 2)) = 1 ]; then once d bash "$WORK/ours.sh"; once f bash "$WORK/theirs.sh"
    else once f bash "$WORK/theirs.sh"; once d bash "$WORK/ours.sh"; fi
  done
  awk -v n="$clips" -v dt="$(median "$WORK/d.t")" -v ft="$(median "$WORK/f.t")" 'BEGIN {
    printf "poster-only batch of %d clips, --jobs 2 vs parallel -j2 ffmpegthumbnailer: %.3f s | %.3f s | %.2fx (target <= 1.0)\n",
      n, dt, ft, dt / ft }'
fi
