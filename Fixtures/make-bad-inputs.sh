#!/usr/bin/env bash
# Makes the bad-input catalogue used by Tests/PreviewLoopTests/BadInputCatalogTests.swift: hostile,
# damaged and odd-but-valid inputs, generated at test time with the ffmpeg CLI from lavfi sources
# and with byte edits in python3. Nothing it writes is committed.
#
# Usage: Fixtures/make-bad-inputs.sh OUTPUT_DIRECTORY
#
# Every file is small (well under 1 MB; the 12000x12000 PNG "bomb" is ~15 KB) and the whole run
# takes a few seconds on 2 cores. Writes OUTPUT_DIRECTORY/.complete last, so a caller can tell a
# finished catalogue from an interrupted one.
set -euo pipefail

OUT="${1:?usage: make-bad-inputs.sh OUTPUT_DIRECTORY}"
mkdir -p "$OUT"
cd "$OUT"
rm -f .complete

FF=(ffmpeg -hide_banner -nostdin -loglevel error -y)
X264=(-c:v libx264 -threads 1 -preset ultrafast -g 25 -keyint_min 25 -sc_threshold 0)
src() { echo "-f lavfi -i testsrc2=size=$1:rate=25:duration=$2"; }

# --- Containers the damage is done to ------------------------------------------------------------
# 2.0 s, 50 frames, 320x240, keyframe every 25 frames; moov at the end (ffmpeg's default) and at the
# start (faststart). Both carry an AAC track, as real clips do.
"${FF[@]}" $(src 320x240 2) -f lavfi -i sine=frequency=440:duration=2 "${X264[@]}" -c:a aac -b:a 32k moov-at-end.mp4
"${FF[@]}" -i moov-at-end.mp4 -c copy -movflags +faststart faststart.mp4

# --- Not media at all ------------------------------------------------------------------------------
: > empty.mp4
printf 'This is a text file, not a video.\nIt has two lines.\n' > text.txt
mkdir -p directory.mp4
python3 - <<'EOF'
import random
random.seed(5)
open('random.bin', 'wb').write(bytes(random.getrandbits(8) for _ in range(64 * 1024)))
EOF

# --- Byte edits ----------------------------------------------------------------------------------
python3 - <<'EOF'
import struct

def boxes(data, start=0, end=None):
    """Top-level (offset, size, type) of the ISO BMFF boxes in data[start:end]."""
    end = len(data) if end is None else end
    at = start
    while at + 8 <= end:
        size, kind = struct.unpack('>I4s', data[at:at + 8])
        if size == 1: size = struct.unpack('>Q', data[at + 8:at + 16])[0]
        if size == 0: size = end - at
        yield at, size, kind
        at += size

for name in ('moov-at-end', 'faststart'):
    data = open(name + '.mp4', 'rb').read()
    for percent in (10, 50, 90):
        open('%s-cut%d.mp4' % (name, percent), 'wb').write(data[:len(data) * percent // 100])

data = bytearray(open('faststart.mp4', 'rb').read())
layout = {kind: (at, size) for at, size, kind in boxes(data)}

# 4 KiB of garbage in the middle of the media data: the decoder must conceal it.
mdat_at, mdat_size = layout[b'mdat']
middle = mdat_at + mdat_size // 2
damaged = bytearray(data)
damaged[middle:middle + 4096] = bytes((i * 7919 + 13) & 0xFF for i in range(4096))
open('corrupt-middle.mp4', 'wb').write(damaged)

# The moov box's contents zeroed (its header kept): the index is gone.
moov_at, moov_size = layout[b'moov']
zeroed = bytearray(data)
zeroed[moov_at + 8:moov_at + moov_size] = bytes(moov_size - 8)
open('zeroed-moov.mp4', 'wb').write(zeroed)

# The video sample entry's fourcc `avc1` patched to `zzzz`: a codec no FFmpeg decodes.
unknown = bytearray(data)
entry = unknown.find(b'avc1', moov_at, moov_at + moov_size)
assert entry > 0
unknown[entry:entry + 4] = b'zzzz'
open('unknown-fourcc.mp4', 'wb').write(unknown)

# The same entry as VVC (`vvc1`, which FFmpeg 5.1 does not know) and Dolby Vision AV1 (`dav1`, which
# FFmpeg does not take as AV1): the error must name the tag, not FFmpeg's `none`.
for tag in (b'vvc1', b'dav1'):
    renamed = bytearray(data)
    renamed[entry:entry + 4] = tag
    open(tag.decode() + '-sample-entry.mp4', 'wb').write(renamed)
EOF

# Matroska and WebM cut at half their size: the Duration in their header still promises 2.0 s (the
# cues, written at the end, are gone with the second half).
"${FF[@]}" $(src 320x240 2) "${X264[@]}" whole.mkv
"${FF[@]}" $(src 320x240 2) -c:v libvpx-vp9 -threads 1 -deadline realtime -cpu-used 8 -b:v 300k -g 25 whole.webm
python3 - <<'EOF'
for name in ('whole.mkv', 'whole.webm'):
    data = open(name, 'rb').read()
    open(name.replace('whole', 'cut50'), 'wb').write(data[:len(data) // 2])
EOF

# MJPEG in Matroska with every JPEG image (SOI to EOI) zeroed: FFmpeg's MJPEG decoder logs "No JPEG
# data found in image" at AV_LOG_FATAL for each, which must not reach the CLI's standard error.
"${FF[@]}" -f lavfi -i testsrc2=size=64x48:rate=10:duration=0.3 -c:v mjpeg mjpeg.mkv
python3 - <<'EOF'
data = bytearray(open('mjpeg.mkv', 'rb').read())
at = 0
while (start := data.find(b'\xff\xd8\xff', at)) >= 0:
    end = data.find(b'\xff\xd9', start) + 2
    data[start:end] = bytes(end - start)
    at = end
open('mjpeg-zeroed.mkv', 'wb').write(data)
EOF
rm -f mjpeg.mkv

# --- Limits --------------------------------------------------------------------------------------
# 70 copies of one video stream (the default limit is 64).
"${FF[@]}" $(src 64x48 0.2) "${X264[@]}" small.mkv
MAPS=(); for _ in $(seq 70); do MAPS+=(-map 0:v); done
"${FF[@]}" -i small.mkv "${MAPS[@]}" -c copy many-streams.mkv
# A 12000x12000 picture (a "decompression bomb": 144 Mpx, 432 MB as RGB, ~15 KB as a 1-bit PNG).
python3 - <<'EOF'
import struct, zlib
width = height = 12000
def chunk(kind, body):
    return struct.pack('>I', len(body)) + kind + body + struct.pack('>I', zlib.crc32(kind + body) & 0xffffffff)
row = b'\x00' + bytes((width + 7) // 8)          # filter byte + one row of 1-bit black pixels
packer = zlib.compressobj(9)
idat = b''.join(packer.compress(row) for _ in range(height)) + packer.flush()
png = b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', width, height, 1, 0, 0, 0, 0)) \
    + chunk(b'IDAT', idat) + chunk(b'IEND', b'')
open('bomb.png', 'wb').write(png)
EOF
# The same picture in Matroska, whose track header declares 12000x12000 before any decoding.
"${FF[@]}" -i bomb.png -c copy bomb.mkv
# MPEG-TS with 70 video streams: the demuxer creates streams as PIDs appear and stops at the limit.
"${FF[@]}" -i small.mkv "${MAPS[@]}" -c copy -f mpegts many-streams.ts

# --- Formats and references the policy refuses ---------------------------------------------------
# RealMedia (rv20 video): a video format FFmpeg reads but not on the default allow-list.
"${FF[@]}" $(src 320x240 0.4) -c:v rv20 -b:v 200k realmedia.rm
# A WAV (audio only, not on the allow-list) and a subtitle-only SubRip file.
"${FF[@]}" -f lavfi -i sine=duration=0.5 audio.wav
printf '1\n00:00:00,000 --> 00:00:01,000\nHello\n' > subtitles.srt
# An ffconcat list naming a local file, and a local HLS playlist whose segment is on the network.
printf "ffconcat version 1.0\nfile '%s/faststart.mp4'\n" "$PWD" > list.ffconcat
# Port 9 (discard) on 127.0.0.1: nothing listens there, so an attempt to connect would fail with
# "connection refused" (inputNotReadable), which the tests tell apart from a policy refusal.
printf '#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXTINF:2.0,\nhttp://127.0.0.1:9/segment.ts\n#EXT-X-ENDLIST\n' > network.m3u8
# The same playlist shape with a local segment: allowed (a local input may open local files).
"${FF[@]}" $(src 320x240 1) "${X264[@]}" -f mpegts segment.ts
printf '#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:1\n#EXTINF:1.0,\nsegment.ts\n#EXT-X-ENDLIST\n' > local.m3u8
# A DASH presentation (manifest dash.mpd, init-stream0.m4s, chunk-stream0-00001.m4s) for the tests
# that serve it over HTTP, and rewrite its BaseURL to point elsewhere.
"${FF[@]}" $(src 320x240 1) "${X264[@]}" -f dash -use_template 1 -use_timeline 0 dash.mpd
# A file literally named like FFmpeg's concat protocol.
cp faststart.mp4 'concat:faststart.mp4|faststart.mp4'

# --- Odd but valid -------------------------------------------------------------------------------
# The picture size changes mid-stream: 1 s of 320x240, then 1 s of 480x270, in one MPEG-TS.
"${FF[@]}" $(src 320x240 1) "${X264[@]}" -f mpegts part-a.ts
"${FF[@]}" $(src 480x270 1) "${X264[@]}" -f mpegts part-b.ts
printf "file 'part-a.ts'\nfile 'part-b.ts'\n" > parts.txt
"${FF[@]}" -f concat -safe 0 -i parts.txt -c copy -f mpegts size-change.ts
# The second part alone is the reference for frames after the change (the ffmpeg CLI cannot be one:
# it scales frames after a size change back to the size the output started with).
mv part-b.ts size-change-part2.ts
rm -f part-a.ts parts.txt
"${FF[@]}" $(src 4000x16 0.4) "${X264[@]}" wide-4000x16.mp4
"${FF[@]}" $(src 16x4000 0.4) "${X264[@]}" tall-16x4000.mp4
# (testsrc2 and crop round a 4:2:0 size down to even numbers; cropping RGB does not.)
"${FF[@]}" -f lavfi -i "testsrc2=size=322x242:rate=25:duration=0.4,format=rgb24,crop=321:241:0:0" -c:v ffv1 -pix_fmt yuv420p odd-321x241.mkv
"${FF[@]}" $(src 320x240 0.4) "${X264[@]}" -pix_fmt yuv420p10le -color_range pc 10bit-fullrange.mp4
# RGBA: the left half fully transparent *red*, the right half opaque green. Flattened on black, the
# left half must come out black.
"${FF[@]}" -f lavfi -i "color=c=red:size=320x240:rate=25:duration=0.4,format=rgba,geq=r='if(lt(X,160),255,0)':g='if(lt(X,160),0,255)':b=0:a='if(lt(X,160),0,255)'" \
  -c:v png -pix_fmt rgba alpha.mov
"${FF[@]}" $(src 320x240 1) "${X264[@]}" -flags +ilme+ildct -x264opts tff=1 interlaced.mp4
"${FF[@]}" $(src 320x240 2) "${X264[@]}" -movflags frag_keyframe+empty_moov fragmented.mp4
"${FF[@]}" $(src 320x240 2) "${X264[@]}" -f h264 raw.h264
"${FF[@]}" $(src 320x240 0.04) "${X264[@]}" single-frame.mp4
"${FF[@]}" -f lavfi -i "testsrc2=size=300x300:rate=1:duration=1" -frames:v 1 cover.png
"${FF[@]}" -f lavfi -i sine=duration=1 -i cover.png -map 0 -map 1 -c:a libmp3lame -b:a 64k -c:v mjpeg \
  -disposition:v attached_pic cover-art.mp3
rm -f cover.png

# --- Hostile timing (issue 11): the far/gap family -----------------------------------------------
# small.mp4: 5 s of 320x180 at 25 fps, the clip the timing files are cut from.
"${FF[@]}" $(src 320x180 5) "${X264[@]}" small.mp4
# The whole clip 1e12 s and 1e9 s from zero (Matroska then declares durations of 1e12 + 5 s).
"${FF[@]}" -i small.mp4 -c copy -output_ts_offset 1000000000000 far-1e12.mkv
"${FF[@]}" -i small.mp4 -c copy -output_ts_offset 1000000000 far-1e9.mkv
# One frame at 1e9 s; three frames at 1000 s (the container gives no start for either).
"${FF[@]}" -i small.mp4 -c copy -frames:v 1 -output_ts_offset 1000000000 one-at-1e9.mkv
"${FF[@]}" -i small.mp4 -c copy -frames:v 3 -output_ts_offset 1000 three-at-1000.mkv
# Two frames 1,000,000 s apart.
"${FF[@]}" -f lavfi -i testsrc2=size=320x180:rate=1:duration=2 -vf 'setpts=PTS*1000000' "${X264[@]}" gap-1e6.mkv
# An hour of 16x16 at 1 fps (about 60 KB): a long clip for the work budget.
"${FF[@]}" -f lavfi -i color=c=gray:size=16x16:rate=1:duration=3600 -c:v libx264 -threads 1 -preset ultrafast -g 600 long-1h.mkv

touch .complete
