#!/usr/bin/env bash
# Regenerates every media fixture in this directory from ffmpeg's synthetic
# lavfi sources (testsrc2 for video, sine for audio). See README.md.
#
# Usage: Fixtures/make-fixtures.sh        (works from any cwd)
#
# - Uses only the ffmpeg CLI (tested with Debian 12's FFmpeg 5.1.x).
# - Idempotent: every output is overwritten, and the encodes are bit-exact, so
#   re-running on the same ffmpeg/x264/libvpx/libopus build gives byte-identical
#   files. A different build may produce different bytes; the tests compare
#   against ffmpeg's own decoding of the committed file, so that is fine.
# - Runs verify-fixtures.sh at the end and fails if any property is wrong.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$HERE"

command -v ffmpeg >/dev/null || { echo "ffmpeg not found in PATH" >&2; exit 1; }

TMP="$(mktemp -d "${TMPDIR:-/tmp}/previewloop-fixtures.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT

FF=(ffmpeg -hide_banner -nostdin -loglevel error -y)

# Reproducibility flags, applied to every output.
BITEXACT=(-fflags +bitexact -flags:v +bitexact -flags:a +bitexact -map_metadata -1 -map_chapters -1)

# H.264: 1 thread (x264 output depends on thread count), fixed CRF,
# GOP of exactly 25 frames, x264 default B-frames (so pts != dts).
X264=(-c:v libx264 -threads 1 -preset medium -crf 30
      -g 25 -keyint_min 25 -sc_threshold 0)

# AAC: ffmpeg's native encoder, 48 kHz stereo, low bitrate (size budget).
AAC=(-c:a aac -b:a 64k -ar 48000 -ac 2)

# Audio source: two lavfi `sine` inputs (440 Hz -> left, 660 Hz -> right, so
# a channel swap is detectable), joined to stereo by sine_graph into the
# -filter_complex label [a].
#   sine_inputs SECONDS    -> the two -f lavfi -i ... inputs
#   sine_graph  L R        -> filtergraph; L/R are the two inputs' indexes
sine_graph() {
  # $1 = input index of left sine, $2 = input index of right sine
  echo "[$1:a][$2:a]join=inputs=2:channel_layout=stereo[a]"
}
sine_inputs() {
  local d="$1"
  echo "-f lavfi -i sine=frequency=440:sample_rate=48000:duration=$d" \
       "-f lavfi -i sine=frequency=660:sample_rate=48000:duration=$d"
}

# testsrc2 video source, 25 fps. Args: WxH FRAMES.
# The source itself is bounded (duration = FRAMES/25 s, exact for these
# values); do NOT rely on -frames:v alone: in FFmpeg 5.1, hitting -frames:v on
# an unbounded lavfi video input ends the whole output early and truncates
# the audio track.
testsrc() {
  echo "-f lavfi -i testsrc2=size=$1:rate=25:duration=$(secs "$2")"
}
secs() { awk "BEGIN{printf \"%g\", $1/25}"; }

echo "== generating fixtures in $HERE"

# 1. landscape.mp4: 400x300, 25 fps, 100 frames (4.0 s), H.264 + AAC stereo.
#    No colour tags.
# shellcheck disable=SC2046
"${FF[@]}" $(testsrc 400x300 100) $(sine_inputs 4) \
  -filter_complex "$(sine_graph 1 2)" \
  -map 0:v -map '[a]' \
  "${X264[@]}" -pix_fmt yuv420p "${AAC[@]}" \
  "${BITEXACT[@]}" -movflags +faststart landscape.mp4

# 2./3. rotated{90,180,270}.mp4: coded 320x240, display matrix rotation.
#
# FFmpeg 5.1 notes (see README): the CLI's `-metadata:s:v:0 rotate=N` is only
# turned into a display matrix on the *stream-copy* path (when encoding it is
# silently dropped), and it is interpreted as a COUNTER-clockwise angle. So we
# encode first, then remux with -c copy and rotate=-N to get a display that is
# rotated N degrees clockwise (ffprobe: "rotation=-N", QuickTime tkhd matrix of
# an iPhone-style portrait clip for N=90). There is no -display_rotation in 5.1.
make_rotated() {
  local deg="$1" frames="$2" with_audio="$3" out="rotated$1.mp4"
  local tmp="$TMP/unrotated-$deg.mp4"
  if [[ "$with_audio" == yes ]]; then
    # shellcheck disable=SC2046
    "${FF[@]}" $(testsrc 320x240 "$frames") $(sine_inputs "$(secs "$frames")") \
      -filter_complex "$(sine_graph 1 2)" \
      -map 0:v -map '[a]' \
      "${X264[@]}" -pix_fmt yuv420p "${AAC[@]}" \
      "${BITEXACT[@]}" "$tmp"
  else
    # shellcheck disable=SC2046
    "${FF[@]}" $(testsrc 320x240 "$frames") -frames:v "$frames" \
      "${X264[@]}" -pix_fmt yuv420p -an \
      "${BITEXACT[@]}" "$tmp"
  fi
  "${FF[@]}" -i "$tmp" -map 0 -c copy -metadata:s:v:0 rotate="-$deg" \
    "${BITEXACT[@]}" -movflags +faststart "$out"
}
make_rotated 90 50 yes
make_rotated 180 25 no
make_rotated 270 25 no

# 4. anamorphic.mp4: coded 360x240, SAR 3:2 -> DAR 9:4, 2.0 s, no audio.
# shellcheck disable=SC2046
"${FF[@]}" $(testsrc 360x240 50) -frames:v 50 -vf setsar=3/2 \
  "${X264[@]}" -pix_fmt yuv420p -an \
  "${BITEXACT[@]}" -movflags +faststart anamorphic.mp4

# 4b. anamorphic-rotated90.mp4: anamorphic.mp4's stream shown turned 90° clockwise (displays 240x540):
#     non-square pixels and a quarter turn together.
"${FF[@]}" -i anamorphic.mp4 -map 0 -c copy -metadata:s:v:0 rotate=-90 \
  "${BITEXACT[@]}" -movflags +faststart anamorphic-rotated90.mp4

# 5. short.mp4: 320x240, exactly 10 frames (0.4 s), H.264 + AAC.
# shellcheck disable=SC2046
"${FF[@]}" $(testsrc 320x240 10) $(sine_inputs 0.4) \
  -filter_complex "$(sine_graph 1 2)" \
  -map 0:v -map '[a]' \
  "${X264[@]}" -pix_fmt yuv420p "${AAC[@]}" \
  "${BITEXACT[@]}" -movflags +faststart short.mp4

# 6. offset.ts: MPEG-TS, 320x240, 3.0 s, H.264 + AAC, start_time ~11.4 s
#    (10 s offset + the mpegts muxer's default 1.4 s initial delay).
# shellcheck disable=SC2046
"${FF[@]}" $(testsrc 320x240 75) $(sine_inputs 3) \
  -filter_complex "$(sine_graph 1 2)" \
  -map 0:v -map '[a]' \
  "${X264[@]}" -pix_fmt yuv420p "${AAC[@]}" \
  "${BITEXACT[@]}" -output_ts_offset 10 -f mpegts offset.ts

# 7. audio-only.m4a: 1.0 s AAC stereo sine, no video stream.
# shellcheck disable=SC2046
"${FF[@]}" $(sine_inputs 1) \
  -filter_complex "$(sine_graph 0 1)" -map '[a]' \
  "${AAC[@]}" -vn \
  "${BITEXACT[@]}" -movflags +faststart audio-only.m4a

# 8. not-video.txt: plain text that must be rejected as media.
cat > not-video.txt <<'EOF'
This is not a media file.
It is a plain-text fixture used to check that PreviewLoop rejects
inputs that FFmpeg cannot open as audio or video.
EOF

# 9. fullrange.mp4: 320x240, 1.0 s, H.264 full (pc/JPEG) range, no audio.
#    Converted from RGB so the full-range quantisation is real, not just a tag.
# shellcheck disable=SC2046
"${FF[@]}" $(testsrc 320x240 25) -frames:v 25 \
  -vf "format=rgb24,scale=out_range=pc,format=yuv420p" \
  "${X264[@]}" -pix_fmt yuv420p -color_range pc -an \
  "${BITEXACT[@]}" -movflags +faststart fullrange.mp4

# 10. bt709.mp4: 640x360, 1.0 s, limited range, BT.709 matrix/primaries/trc.
#     Generated as RGB and converted with the BT.709 matrix (testsrc2 would
#     otherwise draw straight into YUV with BT.601 coefficients).
# shellcheck disable=SC2046
"${FF[@]}" $(testsrc 640x360 25) -frames:v 25 \
  -vf "format=rgb24,scale=out_color_matrix=bt709:out_range=tv,format=yuv420p" \
  "${X264[@]}" -pix_fmt yuv420p -color_range tv \
  -colorspace bt709 -color_primaries bt709 -color_trc bt709 -an \
  "${BITEXACT[@]}" -movflags +faststart bt709.mp4

# 11. vp9.webm: 320x240, 1.0 s, VP9 + Opus.
# shellcheck disable=SC2046
"${FF[@]}" $(testsrc 320x240 25) $(sine_inputs 1) \
  -filter_complex "$(sine_graph 1 2)" \
  -map 0:v -map '[a]' \
  -c:v libvpx-vp9 -threads 1 -deadline realtime -cpu-used 8 -b:v 200k \
  -g 25 -keyint_min 25 -pix_fmt yuv420p \
  -c:a libopus -b:a 48k -ar 48000 -ac 2 \
  "${BITEXACT[@]}" vp9.webm

# 12.-16. Poster fixtures: 320x240, 25 fps, H.264, no audio; each starts with something a poster must
#     not show, then testsrc2. Leaders are concatenated with the `concat` filter, so testsrc2 starts
#     at its own frame 0 right after the cut; durations are whole frames.
#   poster_clip NAME FILTERGRAPH INPUTS...  -> encodes the graph's [v] into NAME
poster_clip() {
  local out="$1" graph="$2"
  shift 2
  "${FF[@]}" "$@" -filter_complex "$graph" -map '[v]' \
    "${X264[@]}" -pix_fmt yuv420p -an \
    "${BITEXACT[@]}" -movflags +faststart "$out"
}
# 12. black-start.mp4: 1.0 s of black (frames 0-24), then 1.6 s of testsrc2 (frames 25-64).
# shellcheck disable=SC2046
poster_clip black-start.mp4 "[0:v][1:v]concat=n=2:v=1:a=0,format=yuv420p[v]" \
  -f lavfi -i color=c=black:size=320x240:rate=25:duration=1 $(testsrc 320x240 40)
# 13. fade-in.mp4: testsrc2 fading in from black over 1.0 s (frame n at n/25 of its level), 2.6 s.
# shellcheck disable=SC2046
poster_clip fade-in.mp4 "[0:v]fade=t=in:st=0:d=1,format=yuv420p[v]" $(testsrc 320x240 65)
# 14. slate.mp4: 1.0 s of a flat blue card (#2a4f8f, frames 0-24), then 1.6 s of testsrc2.
# shellcheck disable=SC2046
poster_clip slate.mp4 "[0:v][1:v]concat=n=2:v=1:a=0,format=yuv420p[v]" \
  -f lavfi -i color=c=0x2a4f8f:size=320x240:rate=25:duration=1 $(testsrc 320x240 40)
# 15. blur-start.mp4: testsrc2 under a strong Gaussian blur (sigma 6, 3 steps) for 0.8 s (frames
#     0-19), sharp from frame 20; 2.6 s.
# shellcheck disable=SC2046
poster_clip blur-start.mp4 "[0:v]gblur=sigma=6:steps=3:enable='lt(t,0.8)',format=yuv420p[v]" $(testsrc 320x240 65)
# 16. dark.mp4: 0.6 s of black (frames 0-14), then 1.6 s of testsrc2 at 12 % of its level (luma
#     16 + (Y - 16) * 0.12, chroma likewise towards grey): a night scene, dark throughout.
# shellcheck disable=SC2046
poster_clip dark.mp4 "[1:v]lutyuv=y='16+(val-16)*0.12':u='128+(val-128)*0.12':v='128+(val-128)*0.12'[d];[0:v][d]concat=n=2:v=1:a=0,format=yuv420p[v]" \
  -f lavfi -i color=c=black:size=320x240:rate=25:duration=0.6 $(testsrc 320x240 40)
# 17. card.mp4: 320x180, 3.0 s, H.264, no audio: testsrc2 whose hues turn a quarter circle per second,
#    so that frames a fraction of a second apart differ visibly (the card's reveal and golden images).
# shellcheck disable=SC2046
"${FF[@]}" $(testsrc 320x180 75) -frames:v 75 -vf "hue=H=t*PI/2" \
  "${X264[@]}" -pix_fmt yuv420p -an \
  "${BITEXACT[@]}" -movflags +faststart card.mp4
# 18. portrait-phone.mp4: coded 320x180, 25 fps, 25 frames = 1.0 s, H.264, no audio; a 90° clockwise
#     display matrix (as a phone held upright writes it), so it displays as 180x320 portrait.
# shellcheck disable=SC2046
"${FF[@]}" $(testsrc 320x180 25) -frames:v 25 \
  "${X264[@]}" -pix_fmt yuv420p -an \
  "${BITEXACT[@]}" "$TMP/portrait-unrotated.mp4"
"${FF[@]}" -i "$TMP/portrait-unrotated.mp4" -map 0 -c copy -metadata:s:v:0 rotate=-90 \
  "${BITEXACT[@]}" -movflags +faststart portrait-phone.mp4

# 19. title-card.mp4: 320x240, 25 fps, 3.8 s, H.264, no audio: a studio title card (small white text
#     on black, frames 0-29 = 1.2 s), then testsrc2 (frames 30-69 = 1.6 s), then end credits (small
#     white lines on black, frames 70-94 = 1.0 s). drawtext needs a font (fonts-dejavu-core); the file
#     is committed, so the tests need neither.
FONT=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf
# shellcheck disable=SC2046
poster_clip title-card.mp4 "[0:v]drawtext=fontfile=$FONT:text='STUDIO LOGO PRESENTS':fontsize=14:fontcolor=white:x=(w-tw)/2:y=(h-th)/2[t];[2:v]drawtext=fontfile=$FONT:text='Directed by Nobody':fontsize=12:fontcolor=white:x=(w-tw)/2:y=100,drawtext=fontfile=$FONT:text='Music by No One':fontsize=12:fontcolor=white:x=(w-tw)/2:y=130[c];[t][1:v][c]concat=n=3:v=1:a=0,format=yuv420p[v]" \
  -f lavfi -i color=c=black:size=320x240:rate=25:duration=1.2 $(testsrc 320x240 40) \
  -f lavfi -i color=c=black:size=320x240:rate=25:duration=1

# 20. long-audio.mp4: 320x240, 25 fps, 75 frames = 3.0 s of H.264, with 4.5 s of AAC: the container
#     lasts 4.5 s, the video 3.0 s (as a clip whose audio or subtitles outlast the picture).
# shellcheck disable=SC2046
"${FF[@]}" $(testsrc 320x240 75) $(sine_inputs 4.5) \
  -filter_complex "$(sine_graph 1 2)" \
  -map 0:v -map '[a]' \
  "${X264[@]}" -pix_fmt yuv420p "${AAC[@]}" \
  "${BITEXACT[@]}" -movflags +faststart long-audio.mp4

# 18.-20. HDR fixtures: 320x180, 1.0 s, 25 fps, HEVC Main 10 (x265), made from SDR BT.709 originals by
#     zimg (`zscale`) with SDR white placed at HDR reference white (npl=203: linear 1.0 = 203 cd/m²,
#     ITU-R BT.2408), so the exact inverse chain gives the originals back. x265 writes the HDR10
#     metadata (mastering display, MaxCLL/MaxFALL) as SEI; FFmpeg shows it as frame side data.
#   hdr_clip NAME TRANSFER X265-EXTRA SOURCE...
X265=(-c:v libx265 -preset fast -crf 20 -pix_fmt yuv420p10le -tag:v hvc1)
hdr_clip() {
  local out="$1" transfer="$2" extra="$3"
  shift 3
  "${FF[@]}" "$@" -frames:v 25 \
    -vf "format=yuv420p,zscale=tin=bt709:min=bt709:pin=bt709:rin=tv:t=$transfer:p=bt2020:m=bt2020nc:r=tv:npl=203,format=yuv420p10le" \
    "${X265[@]}" -x265-params "log-level=error:pools=1:frame-threads=1:keyint=25:min-keyint=25:repeat-headers=1:colorprim=bt2020:transfer=$transfer:colormatrix=bt2020nc$extra" \
    -an "${BITEXACT[@]}" "$out"
}
# 18. hdr10.mp4: testsrc2 in PQ, mastering display P3 D65 0.0001-1000 cd/m², MaxCLL 1000, MaxFALL 400.
# shellcheck disable=SC2046
hdr_clip hdr10.mp4 smpte2084 ":hdr10=1:master-display=G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)L(10000000,1):max-cll=1000,400" \
  $(testsrc 320x180 25)
# 19. hlg.mp4: SMPTE HD colour bars in HLG (no static metadata).
hdr_clip hlg.mp4 arib-std-b67 "" -f lavfi -i smptehdbars=size=320x180:rate=25:duration=1
# 20. dolby-vision-p5.mp4: hdr10.mp4 with a hand-built Dolby Vision configuration record (`dvcC`:
#     profile 5, level 1, RPU + base layer, compatibility ID 0) appended to its hvc1 sample entry.
#     The pictures stay HDR10's: only the record matters (profile 5 cannot be reconstructed anyway).
python3 - hdr10.mp4 dolby-vision-p5.mp4 <<'PY'
import struct, sys
data = bytearray(open(sys.argv[1], "rb").read())
record = bytes([1, 0, 0x0A, 0x0D, 0x00]) + bytes(19)   # v1.0; profile 5, level 1, rpu 1, el 0, bl 1; compat 0
box = struct.pack(">I4s", 8 + len(record), b"dvcC") + record
def find(start, end, path):
    """Offsets of the boxes along `path` (sample entries: 8 header + 78 visual fields, stsd: 8 more)."""
    offset = start
    while offset < end:
        size, kind = struct.unpack(">I4s", data[offset:offset + 8])
        if kind.decode() == path[0]:
            if len(path) == 1: return [offset]
            body = offset + 8 + (8 if kind == b"stsd" else 0)
            return [offset] + find(body, offset + size, path[1:])
        offset += size
    raise SystemExit("box %s not found" % path[0])
chain = find(0, len(data), ["moov", "trak", "mdia", "minf", "stbl", "stsd", "hvc1"])
moov_first = data.find(b"moov") < data.find(b"mdat")
assert not moov_first, "expects the moov box after mdat (no chunk offsets move)"
entry = chain[-1]
end = entry + struct.unpack(">I", data[entry:entry + 4])[0]
data[end:end] = box
for offset in chain:
    struct.pack_into(">I", data, offset, struct.unpack(">I", data[offset:offset + 4])[0] + len(box))
open(sys.argv[2], "wb").write(data)
PY

echo "== verifying"
"$HERE/verify-fixtures.sh"
