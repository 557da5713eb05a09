#!/usr/bin/env bash
# The feed page in a real browser (Scripts/feed-check.py): installs Debian's chromium, chromium-driver
# and python3-selenium when missing (apt-get; root), then drives headless Chromium against a live
# `preview-loop serve` on 127.0.0.1 with a free port. Bounded by a timeout; serve, chromedriver and
# Chromium run in one process group of their own, which the trap ends on any exit.
# Usage: Scripts/feed-check.sh [--bin PATH] [--screenshot Docs/feed.png] [--keep]
set -euo pipefail
cd "$(dirname "$0")/.."
need=()
command -v chromium >/dev/null || need+=(chromium)
command -v chromedriver >/dev/null || need+=(chromium-driver)
/usr/bin/python3 -c 'import selenium' 2>/dev/null || need+=(python3-selenium)
command -v ffmpeg >/dev/null || need+=(ffmpeg)
if ((${#need[@]})); then
    echo "feed-check: installing ${need[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
# setsid: the checker, and everything it starts, in a new process group whose id is its pid.
setsid timeout -k 10 900 /usr/bin/python3 Scripts/feed-check.py "$@" &
group=$!
trap 'kill -TERM -- "-$group" 2>/dev/null || true; sleep 1; kill -KILL -- "-$group" 2>/dev/null || true' EXIT
trap 'exit 130' INT TERM
wait "$group"
