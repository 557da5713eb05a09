#!/usr/bin/env bash
# Installs what building and testing PreviewLoop needs on Debian 12, only when it is missing:
# FFmpeg 5.1's -dev packages (found through pkg-config), the ffmpeg/ffprobe CLIs (test oracles),
# python3 (the tests' HTTP server) and a C compiler (the allocation-counting shim).
set -euo pipefail
need=()
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
if ! pkg-config --exists libavformat libavcodec libswscale libavutil 2>/dev/null; then
  need+=(libavformat-dev libavcodec-dev libswscale-dev libavutil-dev)
fi
command -v ffmpeg >/dev/null 2>&1 || need+=(ffmpeg)
command -v ffprobe >/dev/null 2>&1 || need+=(ffmpeg)
command -v python3 >/dev/null 2>&1 || need+=(python3)
command -v cc >/dev/null 2>&1 || need+=(gcc libc6-dev)
if ((${#need[@]})); then
  echo "Installing: ${need[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
