#!/usr/bin/env bash
# Checks that every fixture in this directory has the properties the tests
# rely on (see README.md), prints a summary table, and exits 1 on any mismatch.
# Uses only ffprobe/ffmpeg (+ coreutils/awk). Works from any cwd.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$HERE"

TMP="$(mktemp -d "${TMPDIR:-/tmp}/previewloop-verify.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT

FAILURES=()
fail() { FAILURES+=("$1: $2"); }

# Numeric |a - b| <= tol
near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN{d=a-b; if(d<0)d=-d; exit !(a!="" && a!="N/A" && d<=t)}'; }

# Expected properties, one line per media file:
# file | start_time (center:tolerance) | duration | vcodec | WxH | SAR |
# rotation (clockwise display degrees) | color_range | color_space |
# video frames | audio streams | audio codec
EXPECTED="
landscape.mp4  |0:0.001     |4.0|h264|400x300|1:1|0  |unknown|unknown|100|1|aac
rotated90.mp4  |0:0.001     |2.0|h264|320x240|1:1|90 |unknown|unknown|50 |1|aac
rotated180.mp4 |0:0.001     |1.0|h264|320x240|1:1|180|unknown|unknown|25 |0|-
rotated270.mp4 |0:0.001     |1.0|h264|320x240|1:1|270|unknown|unknown|25 |0|-
anamorphic.mp4 |0:0.001     |2.0|h264|360x240|3:2|0  |unknown|unknown|50 |0|-
anamorphic-rotated90.mp4|0:0.001|2.0|h264|360x240|3:2|90 |unknown|unknown|50 |0|-
short.mp4      |0:0.001     |0.4|h264|320x240|1:1|0  |unknown|unknown|10 |1|aac
offset.ts      |11.4:0.1    |3.0|h264|320x240|1:1|0  |unknown|unknown|75 |1|aac
audio-only.m4a |0:0.001     |1.0|-   |-      |-  |0  |-      |-      |0  |1|aac
fullrange.mp4  |0:0.001     |1.0|h264|320x240|1:1|0  |pc     |unknown|25 |0|-
bt709.mp4      |0:0.001     |1.0|h264|640x360|1:1|0  |tv     |bt709  |25 |0|-
vp9.webm       |0:0.01      |1.0|vp9 |320x240|1:1|0  |tv     |unknown|25 |1|opus
black-start.mp4|0:0.001     |2.6|h264|320x240|1:1|0  |unknown|unknown|65 |0|-
fade-in.mp4    |0:0.001     |2.6|h264|320x240|1:1|0  |unknown|unknown|65 |0|-
slate.mp4      |0:0.001     |2.6|h264|320x240|1:1|0  |unknown|unknown|65 |0|-
blur-start.mp4 |0:0.001     |2.6|h264|320x240|1:1|0  |unknown|unknown|65 |0|-
dark.mp4       |0:0.001     |2.2|h264|320x240|1:1|0  |unknown|unknown|55 |0|-
card.mp4       |0:0.001     |3.0|h264|320x180|1:1|0  |unknown|unknown|75 |0|-
hdr10.mp4      |0:0.001     |1.0|hevc|320x180|1:1|0  |tv     |bt2020nc|25 |0|-
hlg.mp4        |0:0.001     |1.0|hevc|320x180|1:1|0  |tv     |bt2020nc|25 |0|-
dolby-vision-p5.mp4|0:0.001 |1.0|hevc|320x180|1:1|0  |tv     |bt2020nc|25 |0|-
portrait-phone.mp4|0:0.001  |1.0|h264|320x180|1:1|90 |unknown|unknown|25 |0|-
title-card.mp4 |0:0.001     |3.8|h264|320x240|1:1|0  |unknown|unknown|95 |0|-
long-audio.mp4 |0:0.001     |4.5|h264|320x240|1:1|0  |unknown|unknown|75 |1|aac
"

# key=value lines for the first video stream (ffprobe repeats streams under
# programs for MPEG-TS, hence sort -u).
vprobe() {
  ffprobe -v error -select_streams v:0 -count_frames \
    -show_entries stream=codec_name,width,height,sample_aspect_ratio,display_aspect_ratio,color_range,color_space,color_primaries,color_transfer,nb_read_frames:stream_side_data=rotation \
    -of default=nw=1 "$1" | sort -u
}
kv() { grep -m1 "^$2=" <<<"$1" | cut -d= -f2- || true; }

# ffprobe's "rotation" is av_display_rotation_get(): counter-clockwise.
# Convert to clockwise display degrees in [0, 360).
cw_from_probe() { awk -v r="${1:-0}" 'BEGIN{ if(r=="")r=0; d=(-r)%360; if(d<0)d+=360; printf "%d", d }'; }

printf '%-15s %7s %10s %6s %-5s %-8s %-4s %5s %-14s %7s %3s %-5s\n' \
  FILE BYTES START DUR VCODEC WxH SAR ROTcw RANGE/SPACE VFRAMES AUD ACODEC
printf '%s\n' "$(printf '%.0s-' {1..104})"

total=0
while IFS='|' read -r file start dur vcodec wh sar rot range space frames nau acodec; do
  file="$(echo "$file" | xargs)"; [[ -z "$file" ]] && continue
  start="$(echo "$start" | xargs)"; frames="$(echo "$frames" | xargs)"
  vcodec="$(echo "$vcodec" | xargs)"; range="$(echo "$range" | xargs)"
  space="$(echo "$space" | xargs)"; rot="$(echo "$rot" | xargs)"
  acodec="$(echo "$acodec" | xargs)"; nau="$(echo "$nau" | xargs)"

  if [[ ! -f "$file" ]]; then fail "$file" "missing"; continue; fi
  size=$(stat -c %s "$file"); total=$((total + size))

  fmt="$(ffprobe -v error -show_entries format=start_time,duration -of default=nw=1 "$file")"
  f_start="$(kv "$fmt" start_time)"; f_dur="$(kv "$fmt" duration)"

  if [[ "$vcodec" == "-" ]]; then
    v=""; g_codec="-"; g_wh="-"; g_sar="-"; g_rot=0; g_range="-"; g_space="-"; g_frames=0
    if [[ -n "$(ffprobe -v error -select_streams v -show_entries stream=index -of csv=p=0 "$file")" ]]; then
      fail "$file" "has a video stream, expected none"
    fi
  else
    v="$(vprobe "$file")"
    g_codec="$(kv "$v" codec_name)"; g_wh="$(kv "$v" width)x$(kv "$v" height)"
    g_sar="$(kv "$v" sample_aspect_ratio)"; g_rot="$(cw_from_probe "$(kv "$v" rotation)")"
    g_range="$(kv "$v" color_range)"; g_space="$(kv "$v" color_space)"
    g_frames="$(kv "$v" nb_read_frames)"
  fi
  g_nau="$(ffprobe -v error -select_streams a -show_entries stream=index -of csv=p=0 "$file" | sort -u | grep -c . || true)"
  g_acodec="$(ffprobe -v error -select_streams a:0 -show_entries stream=codec_name -of csv=p=0 "$file" | sed -n 1p)"
  [[ -z "$g_acodec" ]] && g_acodec="-"

  printf '%-15s %7d %10s %6s %-5s %-8s %-4s %5s %-14s %7s %3s %-5s\n' \
    "$file" "$size" "$f_start" "$f_dur" "$g_codec" "$g_wh" "$g_sar" "$g_rot" \
    "$g_range/$g_space" "$g_frames" "$g_nau" "$g_acodec"

  near "$f_start" "${start%%:*}" "${start##*:}" || fail "$file" "start_time $f_start, expected ${start%%:*}±${start##*:}"
  near "$f_dur" "$dur" 0.05 || fail "$file" "duration $f_dur, expected $dur±0.05"
  [[ "$g_codec" == "$vcodec" ]] || fail "$file" "video codec $g_codec, expected $vcodec"
  [[ "$g_wh" == "$(echo "$wh" | xargs)" ]] || fail "$file" "size $g_wh, expected $wh"
  [[ "$g_sar" == "$(echo "$sar" | xargs)" ]] || fail "$file" "SAR $g_sar, expected $sar"
  [[ "$g_rot" == "$rot" ]] || fail "$file" "rotation ${g_rot}° cw, expected ${rot}°"
  [[ "$g_range" == "$range" ]] || fail "$file" "color_range $g_range, expected $range"
  [[ "$g_space" == "$space" ]] || fail "$file" "color_space $g_space, expected $space"
  [[ "$g_frames" == "$frames" ]] || fail "$file" "$g_frames video frames, expected $frames"
  [[ "$g_nau" == "$nau" ]] || fail "$file" "$g_nau audio streams, expected $nau"
  [[ "$g_acodec" == "$acodec" ]] || fail "$file" "audio codec $g_acodec, expected $acodec"

  # Whole file must decode without errors.
  if ! err="$(ffmpeg -hide_banner -nostdin -v error -xerror -i "$file" -map 0 -f null - 2>&1)" || [[ -n "$err" ]]; then
    fail "$file" "decode errors: $err"
  fi
done <<<"$EXPECTED"

# --- extra, file-specific checks ------------------------------------------

# anamorphic: display aspect ratio
dar="$(kv "$(vprobe anamorphic.mp4)" display_aspect_ratio)"
[[ "$dar" == "9:4" ]] || fail anamorphic.mp4 "DAR $dar, expected 9:4"

# bt709: primaries and transfer too
v="$(vprobe bt709.mp4)"
[[ "$(kv "$v" color_primaries)" == bt709 ]] || fail bt709.mp4 "color_primaries $(kv "$v" color_primaries)"
[[ "$(kv "$v" color_transfer)" == bt709 ]] || fail bt709.mp4 "color_transfer $(kv "$v" color_transfer)"

# HDR: transfer and primaries; HDR10 metadata (x265 SEI, so frame side data); the Dolby Vision record.
for f in hdr10.mp4:smpte2084 hlg.mp4:arib-std-b67 dolby-vision-p5.mp4:smpte2084; do
  v="$(vprobe "${f%%:*}")"
  [[ "$(kv "$v" color_transfer)" == "${f#*:}" ]] || fail "${f%%:*}" "color_transfer $(kv "$v" color_transfer)"
  [[ "$(kv "$v" color_primaries)" == bt2020 ]] || fail "${f%%:*}" "color_primaries $(kv "$v" color_primaries)"
done
side="$(ffprobe -v error -select_streams v:0 -read_intervals %+#1 -show_frames hdr10.mp4)"
grep -q "^max_luminance=10000000/10000" <<<"$side" || fail hdr10.mp4 "no 1000 cd/m² mastering display metadata"
grep -q "^max_content=1000" <<<"$side" || fail hdr10.mp4 "no MaxCLL 1000"
ffprobe -v error -show_streams dolby-vision-p5.mp4 | grep -q "^dv_profile=5" || fail dolby-vision-p5.mp4 "no Dolby Vision profile 5 record"

# landscape: the first decoded video frame has pts 0 (edit list applied).
first_pts="$(ffprobe -v error -select_streams v:0 -read_intervals %+#1 -show_entries frame=best_effort_timestamp_time -of csv=p=0 landscape.mp4 | sed -n 1p)"
near "$first_pts" 0 0.0001 || fail landscape.mp4 "first frame pts $first_pts, expected 0"

# landscape: B-frames present, i.e. some packet has pts != dts.
if ! ffprobe -v error -select_streams v:0 -show_entries packet=pts,dts -of csv=p=0 landscape.mp4 \
     | awk -F, '$1!=$2{found=1} END{exit !found}'; then
  fail landscape.mp4 "no packet with pts != dts (B-frames missing)"
fi

# GOP: keyframes exactly every 25 frames (frame numbers in output order).
# (-of default with nw=1:nk=1 so frame side data such as x264's SEI does not
# add extra lines.)
for f in landscape.mp4 rotated90.mp4 anamorphic.mp4 offset.ts bt709.mp4 vp9.webm \
         black-start.mp4 fade-in.mp4 slate.mp4 blur-start.mp4 dark.mp4; do
  kf="$(ffprobe -v error -select_streams v:0 -show_entries frame=key_frame -of default=nw=1:nk=1 "$f" \
        | awk '$1==1 { printf "%d ", NR-1 }')"
  n="$(kv "$(vprobe "$f")" nb_read_frames)"
  want="$(awk -v n="$n" 'BEGIN{ for(i=0;i<n;i+=25) printf "%d ", i }')"
  [[ "$kf" == "$want" ]] || fail "$f" "keyframes at [$kf], expected [$want]"
done

# Rotation: the ffmpeg CLI autorotates to the portrait/flipped size, and the
# autorotated pixels equal the un-rotated decode passed through the filter
# for an N-degree clockwise display rotation.
declare -A ROTFILTER=([90]="transpose=clock" [180]="hflip,vflip" [270]="transpose=cclock")
declare -A ROTSIZE=([90]="240 320" [180]="320 240" [270]="240 320")
for deg in 90 180 270; do
  f="rotated$deg.mp4"
  ffmpeg -hide_banner -nostdin -v error -y -i "$f" -frames:v 1 -c:v ppm -f image2 "$TMP/r$deg.ppm"
  dims="$(sed -n 2p "$TMP/r$deg.ppm" | tr -d '\r' | cut -c1-20 | awk '{print $1, $2}')"
  [[ "$dims" == "${ROTSIZE[$deg]}" ]] || fail "$f" "autorotated frame is $dims, expected ${ROTSIZE[$deg]}"
  a="$(ffmpeg -hide_banner -nostdin -v error -i "$f" -map 0:v:0 -frames:v 5 -pix_fmt rgb24 -f md5 -)"
  b="$(ffmpeg -hide_banner -nostdin -v error -noautorotate -i "$f" -map 0:v:0 -frames:v 5 \
        -vf "${ROTFILTER[$deg]}" -pix_fmt rgb24 -f md5 -)"
  [[ "$a" == "$b" ]] || fail "$f" "autorotated pixels != ${ROTFILTER[$deg]} of coded pixels"
done

# Poster fixtures: what each frame shows, measured by ffmpeg's own filters. Frame numbers are in
# presentation order, from 0.
#   frame_stat FILE FILTER KEY  -> one value per frame (the filter's metadata KEY)
frame_stat() {
  ffmpeg -hide_banner -nostdin -v error -i "$1" -vf "$2,metadata=print:key=$3:file=-" -f null - \
    | awk -F= -v key="$3" '$1==key { print $2 }'
}
#   frames_all FROM TO CONDITION  -> true if CONDITION (awk, on $1) holds for lines FROM..TO (1-based)
frames_all() { awk -v from="$1" -v to="$2" "NR>=from && NR<=to && !($3) { bad=1 } END { exit bad }"; }

# black-start: frames 0-24 black (luma 16, limited range), frame 25 on the picture.
yavg="$(frame_stat black-start.mp4 signalstats lavfi.signalstats.YAVG)"
frames_all 1 25 '$1<=16.5' <<<"$yavg" || fail black-start.mp4 "frames 0-24 are not all black"
frames_all 26 65 '$1>=60' <<<"$yavg" || fail black-start.mp4 "frames 25-64 are not all the picture"

# fade-in: luma rises frame by frame from black (frame 0) to the full picture at frame 25.
yavg="$(frame_stat fade-in.mp4 signalstats lavfi.signalstats.YAVG)"
frames_all 1 1 '$1<=16.5' <<<"$yavg" || fail fade-in.mp4 "frame 0 is not black"
awk 'NR>=2 && NR<=26 && $1<=prev { bad=1 } { prev=$1 } END { exit bad }' <<<"$yavg" \
  || fail fade-in.mp4 "luma does not rise over frames 0-25"
frames_all 26 65 '$1>=60' <<<"$yavg" || fail fade-in.mp4 "frames 25-64 are not the full picture"

# slate: frames 0-24 one flat colour (luma range <= 2), frames 25-64 the picture.
yrange="$(paste -d' ' <(frame_stat slate.mp4 signalstats lavfi.signalstats.YMIN) \
                      <(frame_stat slate.mp4 signalstats lavfi.signalstats.YMAX) | awk '{ print $2 - $1 }')"
frames_all 1 25 '$1<=2' <<<"$yrange" || fail slate.mp4 "frames 0-24 are not one flat colour"
frames_all 26 65 '$1>=100' <<<"$yrange" || fail slate.mp4 "frames 25-64 are not the picture"

# blur-start: blurdetect (higher = blurrier) over 3x the sharp frames' worst on frames 0-19.
blur="$(frame_stat blur-start.mp4 blurdetect lavfi.blur)"
sharpest_blurred="$(awk 'NR<=20 { if (min=="" || $1<min) min=$1 } END { print min }' <<<"$blur")"
blurriest_sharp="$(awk 'NR>=21 { if ($1>max) max=$1 } END { print max }' <<<"$blur")"
awk -v a="$sharpest_blurred" -v b="$blurriest_sharp" 'BEGIN { exit !(a > 3 * b) }' \
  || fail blur-start.mp4 "frames 0-19 are not clearly blurrier than 20-64 ($sharpest_blurred vs $blurriest_sharp)"

# dark: frames 0-14 black, frames 15-54 a dim picture (mean luma 20-40, nothing above 60).
yavg="$(frame_stat dark.mp4 signalstats lavfi.signalstats.YAVG)"
ymax="$(frame_stat dark.mp4 signalstats lavfi.signalstats.YMAX)"
frames_all 1 15 '$1<=16.5' <<<"$yavg" || fail dark.mp4 "frames 0-14 are not black"
frames_all 16 55 '$1>=20 && $1<=40' <<<"$yavg" || fail dark.mp4 "frames 15-54 are not a dim picture"
frames_all 16 55 '$1<=60' <<<"$ymax" || fail dark.mp4 "frames 15-54 have bright pixels"

# not-video.txt: must exist and must NOT be openable as media.
if [[ ! -s not-video.txt ]]; then
  fail not-video.txt "missing or empty"
elif ffprobe -v quiet -show_streams not-video.txt >/dev/null 2>&1 \
     && [[ -n "$(ffprobe -v quiet -show_entries stream=codec_type -of csv=p=0 not-video.txt)" ]]; then
  fail not-video.txt "ffprobe found media streams in it"
fi
total=$((total + $(stat -c %s not-video.txt)))
printf '%-15s %7d %s\n' not-video.txt "$(stat -c %s not-video.txt)" "(ffprobe: not media)"

printf '%s\n' "$(printf '%.0s-' {1..104})"
echo "total fixture bytes: $total"
(( total <= 1048576 )) || fail total "fixtures are $total bytes, budget is 1 MiB"

if ((${#FAILURES[@]})); then
  echo "FAILED (${#FAILURES[@]}):" >&2
  printf '  %s\n' "${FAILURES[@]}" >&2
  exit 1
fi
echo "all fixture checks passed"
