#!/usr/bin/env bash
# serve, the shared cache (--cache s3://): one thumbnail rendered by server A (a shared miss, then
# uploaded), then asked of server B (its own `cp -p` copy of the clip, the same bucket prefix: a shared
# hit) and of B again (a memory hit), against a SeaweedFS store on 127.0.0.1 (Scripts/s3-store.sh).
# Prints curl's total seconds for each, for N times of the clip, beside server C (its own copy, no shared
# cache) and server D (the same as C: the noise floor) rendering the same request cold; then the medians
# of A's, C's and D's cold renders (what a shared miss adds to a render: a lookup before, an upload after
# the answer; C against D is what two identical servers differ by), the mean shared-cache lookup time,
# and B's render and shared-cache counts (B must have rendered nothing).
#
# Usage: Benchmarks/serve-shared-cache.sh [--runs N] [--bin PATH]   (default 9 runs; the release build)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
runs=9; bin=""
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs=$2; shift 2 ;;
        --bin) bin=$2; shift 2 ;;
        *) echo "unknown argument $1" >&2; exit 64 ;;
    esac
done
if [ -z "$bin" ]; then
  swift build -c release --product preview-loop --scratch-path Benchmarks/.build >/dev/null
  bin=Benchmarks/.build/release/preview-loop
fi
work=$(mktemp -d); store=$work/store
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  Scripts/s3-store.sh stop "$store" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
while IFS='=' read -r name value; do export "$name=$value"; done < <(Scripts/s3-store.sh start "$store")
export AWS_REGION=us-east-1 AWS_PROFILE= AWS_SHARED_CREDENTIALS_FILE=/dev/null AWS_CONFIG_FILE=/dev/null
curl -sf -o /dev/null --aws-sigv4 aws:amz:us-east-1:s3 --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" -X PUT "$AWS_ENDPOINT_URL/previews"
mkdir "$work/a" "$work/b" "$work/c" "$work/d"
for server in a b c d; do cp -p Fixtures/landscape.mp4 "$work/$server/"; done
port() {
  for _ in $(seq 100); do
    grep -o '"port":[0-9]*' "$1" 2>/dev/null | cut -d: -f2 && return 0
    sleep 0.1
  done
  echo "the server did not start" >&2; exit 1
}
"$bin" serve --root "$work/a" --cache s3://previews/t/ --listen 127.0.0.1:0 --json > "$work/a.out" 2>/dev/null & pids+=($!)
"$bin" serve --root "$work/b" --cache s3://previews/t/ --listen 127.0.0.1:0 --json > "$work/b.out" 2>/dev/null & pids+=($!)
"$bin" serve --root "$work/c" --listen 127.0.0.1:0 --json > "$work/c.out" 2>/dev/null & pids+=($!)
"$bin" serve --root "$work/d" --listen 127.0.0.1:0 --json > "$work/d.out" 2>/dev/null & pids+=($!)
a=$(port "$work/a.out"); b=$(port "$work/b.out"); c=$(port "$work/c.out"); d=$(port "$work/d.out")
seconds() { curl -sf -o /dev/null -w '%{time_total}' "$1"; }
for i in $(seq "$runs"); do
  query="landscape.mp4/thumbnail.jpg?width=320&height=180&time=$i"
  # A, C and D render the same request cold, in turn (which goes first rotates).
  case $((i % 3)) in
    0) rendered=$(seconds "http://127.0.0.1:$a/$query"); plain=$(seconds "http://127.0.0.1:$c/$query"); twin=$(seconds "http://127.0.0.1:$d/$query") ;;
    1) plain=$(seconds "http://127.0.0.1:$c/$query"); twin=$(seconds "http://127.0.0.1:$d/$query"); rendered=$(seconds "http://127.0.0.1:$a/$query") ;;
    *) twin=$(seconds "http://127.0.0.1:$d/$query"); rendered=$(seconds "http://127.0.0.1:$a/$query"); plain=$(seconds "http://127.0.0.1:$c/$query") ;;
  esac
  echo "$rendered" >> "$work/a.times"; echo "$plain" >> "$work/c.times"; echo "$twin" >> "$work/d.times"
  # The upload runs after A's answer: wait for it.
  for _ in $(seq 100); do
    curl -s "http://127.0.0.1:$a/metrics" | grep -q "^previewloop_shared_cache_uploads_total{outcome=\"stored\"} $i\$" && break
    sleep 0.05
  done
  shared=$(seconds "http://127.0.0.1:$b/$query")
  memory=$(seconds "http://127.0.0.1:$b/$query")
  echo "time=$i  A render ${rendered} s  C render (no shared cache) ${plain} s  D (as C) ${twin} s  B shared hit ${shared} s  B memory hit ${memory} s"
done
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
ma=$(median "$work/a.times"); mc=$(median "$work/c.times"); md=$(median "$work/d.times")
ratio() { awk -v a="$1" -v c="$2" 'BEGIN { printf "%.2f", a / c }'; }
echo "cold render p50: with the shared cache (a miss) ${ma} s, without ${mc} s (C) and ${md} s (D)"
echo "ratios: A/C $(ratio "$ma" "$mc"), A/D $(ratio "$ma" "$md"); noise floor C/D $(ratio "$mc" "$md")"
curl -s "http://127.0.0.1:$a/metrics" | awk '/^previewloop_shared_cache_lookup_duration_seconds_sum /{s=$2} /^previewloop_shared_cache_lookup_duration_seconds_count /{n=$2} END { if (n) printf "A: %d shared-cache lookups (misses), mean %.2f ms\n", n, s / n * 1000 }' 
curl -s "http://127.0.0.1:$b/metrics" \
  | grep -E '^previewloop_(renders_total|shared_cache_(hits|misses)_total|shared_cache_lookup_duration_seconds_(sum|count)) '
