# Shared by the Benchmarks scripts; source it from the project root (`. Benchmarks/common.sh`):
#   log / die            a progress line / an error line (and exit 1), on standard error
#   need TOOL...         dies naming the first tool missing
#   release_binary [LOG] builds the release binary into Benchmarks/.build (its output to LOG, shown
#                        when the build fails) and prints the binary's path
#   binary_argument [PATH] prints PATH when it is an executable file (dies when it is not), else
#                        builds as release_binary does
#   ten_shots_clip SIZE OUTPUT ENCODER-OPTION...
#                        scenes.sh's clip: ten 6 s lavfi shots (cuts every 6 s) at 25 fps with light
#                        moving noise, encoded with the ffmpeg options given (written whole or not at all)
[ -d /opt/swift/usr/bin ] && export PATH="/opt/swift/usr/bin:$PATH"
log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }
need() {
  local tool
  for tool in "$@"; do command -v "$tool" >/dev/null 2>&1 || die "$tool is missing (make deps installs it)"; done
}
release_binary() {
  local output="${1:-$(mktemp)}"
  swift build -c release --scratch-path Benchmarks/.build >"$output" 2>&1 \
    || { tail -n 30 "$output" >&2; die "the release build failed"; }
  echo "$(swift build -c release --scratch-path Benchmarks/.build --show-bin-path)/preview-loop"
}
binary_argument() {
  if [ -z "${1:-}" ]; then release_binary; return; fi
  [ -x "$1" ] && [ ! -d "$1" ] || die "not a preview-loop binary: '$1' (usage: $0 [--runs N] [path/to/preview-loop])"
  echo "$1"
}
ten_shots_clip() {
  local size="$1" output="$2"; shift 2
  local sources=(testsrc2 smptehdbars rgbtestsrc testsrc pal75bars yuvtestsrc smptebars "cellauto=seed=3"
                 "life=seed=5:mold=10" "mandelbrot")
  local arguments=() inputs="" index source separator
  for index in "${!sources[@]}"; do
    source="${sources[$index]}"; separator="="; [[ "$source" == *=* ]] && separator=":"
    arguments+=(-f lavfi -i "${source}${separator}size=${size}:rate=25,trim=duration=6,setpts=PTS-STARTPTS,noise=alls=6:allf=t")
    inputs+="[$index:v]"
  done
  local part="${output%.*}.part.${output##*.}"
  ffmpeg -v error -nostdin -y "${arguments[@]}" \
    -filter_complex "${inputs}concat=n=${#sources[@]}:v=1:a=0,format=yuv420p[v]" -map "[v]" "$@" "$part"
  mv "$part" "$output"
}
