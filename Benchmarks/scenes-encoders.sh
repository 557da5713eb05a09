#!/usr/bin/env bash
# Does `--pick scenes` find the same cuts whatever encoded the clip? The 10-shot source of scenes.sh
# (lavfi shots with moving noise, cuts every 6 s) at 640x360, encoded 6 ways (x264 veryfast and medium
# with their scene-cut keyframes, x264 with a fixed 48-frame group and none, x265, MPEG-4 Part 2, VP9
# realtime); for each, the cuts found against the concat offsets (a hit within one frame), how they
# were found (on frames, on early keyframes) and what was decoded. Exit status 1 when a cut is missed
# or an extra one reported.
#
#   ./Benchmarks/scenes-encoders.sh              # builds the release binary into Benchmarks/.build
#   ./Benchmarks/scenes-encoders.sh --bin PATH
#
# Clips are made once into Benchmarks/clips/scenes-encoders/ (~1 min on 2 cores).
set -euo pipefail
script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$script_dir/.."
ROOT="$PWD"
BIN=""
while (($#)); do
  case "$1" in
    --bin) [[ $# -ge 2 && -x "$2" ]] || { echo "error: --bin needs an executable" >&2; exit 64; }
           BIN="$2"; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "error: unknown argument '$1' (try --help)" >&2; exit 64 ;;
  esac
done
. Benchmarks/common.sh
need ffmpeg python3
WORK="$ROOT/Benchmarks/results/scenes-encoders.tmp"
CLIPS="$ROOT/Benchmarks/clips/scenes-encoders"
rm -rf "$WORK"; mkdir -p "$WORK" "$CLIPS"
[ -n "$BIN" ] || BIN="$(release_binary "$WORK/build.log")"

SOURCE="$CLIPS/source.nut"
[ -s "$SOURCE" ] || ten_shots_clip 640x360 "$SOURCE" -c:v ffv1

encode() {
  local name="$1"; shift
  [ -s "$CLIPS/$name" ] && return
  ffmpeg -v error -nostdin -y -i "$SOURCE" "$@" "$CLIPS/part.$name" && mv "$CLIPS/part.$name" "$CLIPS/$name"
}
encode x264-veryfast.mp4 -c:v libx264 -preset veryfast -crf 23
encode x264-medium.mp4 -c:v libx264 -preset medium -crf 23
encode x264-fixed-gop.mp4 -c:v libx264 -preset veryfast -crf 23 -g 48 -sc_threshold 0
encode x265.mp4 -c:v libx265 -preset fast -crf 28 -x265-params log-level=error
encode mpeg4.avi -c:v mpeg4 -q:v 5
encode vp9.webm -c:v libvpx-vp9 -deadline realtime -cpu-used 8 -b:v 1M

status=0
printf '%-18s %7s %8s %8s %6s  %s\n' clip seconds decoded groups cands "cuts (f: on frames, k: on a keyframe)"
for clip in x264-veryfast.mp4 x264-medium.mp4 x264-fixed-gop.mp4 x265.mp4 mpeg4.avi vp9.webm; do
  start=$(date +%s.%N)
  "$BIN" sheet "$CLIPS/$clip" -o "$WORK/$clip.jpg" --grid 4x4 --pick scenes --json >"$WORK/$clip.json" \
    || die "$clip: preview-loop failed"
  end=$(date +%s.%N)
  python3 - "$WORK/$clip.json" "$clip" "$start" "$end" <<'PY' || status=1
import json, sys
path, clip, start, end = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
scan = json.load(open(path))["outputs"][0]["plan"]["scan"]
cuts = [(c["time"], c.get("evidence", "frames")[0]) for c in scan["cuts"]]
truth = [6.0 * i for i in range(1, 10)]
missed = [t for t in truth if not any(abs(c - t) <= 0.041 for c, _ in cuts)]
extra = [c for c, _ in cuts if not any(abs(c - t) <= 0.041 for t in truth)]
found = " ".join(f"{c:g}{e}" for c, e in cuts)
print(f"{clip:18s} {end - start:7.2f} {scan['frames_decoded']:8d} {scan['groups_decoded']:>3d}/{scan['groups']:<4d} "
      f"{scan.get('packet_candidates')!s:>6s}  {found}" + (f"  MISSED {missed}" if missed else "") + (f"  EXTRA {extra}" if extra else ""))
sys.exit(1 if missed or extra else 0)
PY
done
exit $status
