#!/usr/bin/env bash
# serve, the shared cache (--cache s3://): one thumbnail rendered by server A (a shared miss, then
# uploaded), then asked of server B (its own `cp -p` copy of the clip, the same bucket prefix: a shared
# hit) and of B again (a memory hit), against a SeaweedFS store on 127.0.0.1 (Scripts/s3-store.sh).
# Prints curl's total seconds for each, for N times of the clip, then B's render and shared-cache counts
# (B must have rendered nothing).
#
# Usage: Benchmarks/serve-shared-cache.sh [--runs N] [--bin PATH]   (default 5 runs; the release build)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
runs=5; bin=""
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
mkdir "$work/a" "$work/b"
cp -p Fixtures/landscape.mp4 "$work/a/"; cp -p Fixtures/landscape.mp4 "$work/b/"
port() {
  for _ in $(seq 100); do
    grep -o '"port":[0-9]*' "$1" 2>/dev/null | cut -d: -f2 && return 0
    sleep 0.1
  done
  echo "the server did not start" >&2; exit 1
}
"$bin" serve --root "$work/a" --cache s3://previews/t/ --listen 127.0.0.1:0 --json > "$work/a.out" 2>/dev/null & pids+=($!)
"$bin" serve --root "$work/b" --cache s3://previews/t/ --listen 127.0.0.1:0 --json > "$work/b.out" 2>/dev/null & pids+=($!)
a=$(port "$work/a.out"); b=$(port "$work/b.out")
seconds() { curl -sf -o /dev/null -w '%{time_total}' "$1"; }
for i in $(seq "$runs"); do
  query="landscape.mp4/thumbnail.jpg?width=320&height=180&time=$i"
  rendered=$(seconds "http://127.0.0.1:$a/$query")
  # The upload runs after A's answer: wait for it.
  for _ in $(seq 100); do
    curl -s "http://127.0.0.1:$a/metrics" | grep -q "^previewloop_shared_cache_uploads_total{outcome=\"stored\"} $i\$" && break
    sleep 0.05
  done
  shared=$(seconds "http://127.0.0.1:$b/$query")
  memory=$(seconds "http://127.0.0.1:$b/$query")
  echo "time=$i  A render ${rendered} s  B shared hit ${shared} s  B memory hit ${memory} s"
done
curl -s "http://127.0.0.1:$b/metrics" \
  | grep -E '^previewloop_(renders_total|shared_cache_(hits|misses)_total|shared_cache_lookup_duration_seconds_(sum|count)) '
