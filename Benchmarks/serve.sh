#!/usr/bin/env bash
# serve, warm cache hits, side by side with nginx in one run: the same thumbnail bytes requested by wrk
# with 16 connections, from `preview-loop serve` (its memory cache), from a server whose memory cache is
# off (--memory-cache 0) answering from its disk cache (--cache DIR), and, when the binary has the
# shared response cache (--cache s3://), from a server with no memory or disk cache answering from a
# SeaweedFS bucket (Scripts/s3-store.sh) another server filled; and from nginx serving the same file
# statically from disk (sendfile, access log off). Prints requests/s, p50 and p99 latency of each and the
# ratio. Target (Docs/serve.md): memory-cache requests/s >= 0.5x nginx's, p99 <= 5 ms.
#
# Usage: Benchmarks/serve.sh [--seconds N]   (default 30 per server)
# PREVIEW_LOOP_BIN names a binary to measure instead of building one.
# Installs wrk and nginx with apt-get when missing. Run it alone: `flock -o /work/build.lock Benchmarks/serve.sh`.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
seconds=30
while [ $# -gt 0 ]; do
    case "$1" in
        --seconds) seconds=$2; shift 2 ;;
        *) echo "unknown argument $1" >&2; exit 64 ;;
    esac
done
need=()
command -v wrk >/dev/null 2>&1 || need+=(wrk)
[ -x /usr/sbin/nginx ] || need+=(nginx)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
  # Debian starts the packaged nginx on port 80; this benchmark runs its own.
  $SUDO systemctl disable --now nginx >/dev/null 2>&1 || $SUDO service nginx stop >/dev/null 2>&1 || true
fi
if [ -n "${PREVIEW_LOOP_BIN:-}" ]; then
  bin=$PREVIEW_LOOP_BIN
else
  swift build -c release --product preview-loop --scratch-path Benchmarks/.build >/dev/null
  bin=$PWD/Benchmarks/.build/release/preview-loop
fi
scratch=$(mktemp -d)
serve_pid=""; nginx_pid=""; more_pids=(); store=""
cleanup() {
  [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null && wait "$serve_pid" 2>/dev/null
  [ -n "$nginx_pid" ] && kill "$nginx_pid" 2>/dev/null && wait "$nginx_pid" 2>/dev/null
  for pid in "${more_pids[@]}"; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; done
  [ -n "$store" ] && Scripts/s3-store.sh stop "$store" >/dev/null 2>&1
  rm -rf "$scratch"
}
trap cleanup EXIT
# Starts another server with the given options; sets more_port.
start_more() {
  local name=$1; shift
  "$bin" serve --root "$scratch/media" --listen 127.0.0.1:0 --json --access-log /dev/null "$@" > "$scratch/$name.json" 2>"$scratch/$name.err" &
  more_pids+=("$!")
  for _ in $(seq 100); do [ -s "$scratch/$name.json" ] && break; sleep 0.1; done
  more_port=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["port"])' "$scratch/$name.json") \
    || { echo "serve.sh: the $name server did not start: $(cat "$scratch/$name.err")" >&2; exit 1; }
}
metric() { curl -sf "http://127.0.0.1:$1/metrics" | awk -v name="$2" '$1 == name {print $2}'; }
mkdir -p "$scratch/media" "$scratch/static/landscape.mp4" "$scratch/nginx"
# nginx's workers run as another user when it starts as root: they must read the files.
chmod 0755 "$scratch" "$scratch/static" "$scratch/static/landscape.mp4"; chmod 0777 "$scratch/nginx"
cp Fixtures/landscape.mp4 "$scratch/media/"

"$bin" serve --root "$scratch/media" --listen 127.0.0.1:0 --json --access-log /dev/null > "$scratch/serve.json" 2>"$scratch/serve.err" &
serve_pid=$!
for _ in $(seq 100); do [ -s "$scratch/serve.json" ] && break; sleep 0.1; done
serve_port=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["port"])' "$scratch/serve.json")
path="landscape.mp4/thumbnail.jpg"
query="time=1&width=320&height=180"
curl -sf -o "$scratch/static/$path" "http://127.0.0.1:$serve_port/$path?$query"

nginx_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$scratch/nginx/nginx.conf" <<CONF
worker_processes auto;
daemon off;
pid $scratch/nginx/nginx.pid;
error_log $scratch/nginx/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  client_body_temp_path $scratch/nginx/body;
  proxy_temp_path $scratch/nginx/proxy;
  fastcgi_temp_path $scratch/nginx/fastcgi;
  uwsgi_temp_path $scratch/nginx/uwsgi;
  scgi_temp_path $scratch/nginx/scgi;
  types { image/jpeg jpg; }
  server { listen 127.0.0.1:$nginx_port; root $scratch/static; }
}
CONF
/usr/sbin/nginx -c "$scratch/nginx/nginx.conf" -p "$scratch/nginx" &
nginx_pid=$!
for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$nginx_port/$path" && break; sleep 0.1; done
curl -s -o "$scratch/from-nginx" "http://127.0.0.1:$nginx_port/$path"; curl -s -o "$scratch/from-serve" "http://127.0.0.1:$serve_port/$path?$query"
cmp -s "$scratch/from-nginx" "$scratch/from-serve" \
  || { echo "serve.sh: nginx and serve do not send the same bytes" >&2; exit 1; }

# The disk cache alone: the memory cache off, the entry written by a first request.
start_more disk --memory-cache 0 --cache "$scratch/disk-cache"; disk_port=$more_port
curl -sf -o /dev/null "http://127.0.0.1:$disk_port/$path?$query"
curl -sf -o "$scratch/from-disk" "http://127.0.0.1:$disk_port/$path?$query"
[ "$(metric "$disk_port" previewloop_disk_cache_hits_total)" = 1 ] && cmp -s "$scratch/from-disk" "$scratch/from-serve" \
  || { echo "serve.sh: the disk-cache server did not answer the same bytes from its disk cache" >&2; exit 1; }
rows="nginx serve disk"
# The shared cache alone (when this binary has --cache s3://): one server renders and uploads, another
# with no memory or disk cache answers every request from the bucket.
if "$bin" serve --help 2>&1 | awk '/^  --cache </{p=1; print; next} p && /^  --/{p=0} p' | grep -q 's3://'; then
  store="$scratch/s3"
  Scripts/s3-store.sh start "$store" > "$scratch/s3.env"
  set -a; . "$scratch/s3.env"; set +a
  export AWS_REGION=us-east-1
  echo bench > "$scratch/marker"; Scripts/s3-store.sh put "$store" s3://bench/marker "$scratch/marker"
  start_more writer --cache s3://bench/serve/; writer_port=$more_port
  curl -sf -o /dev/null "http://127.0.0.1:$writer_port/$path?$query"
  for _ in $(seq 50); do
    curl -s --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
      "$AWS_ENDPOINT_URL/bench?list-type=2&prefix=serve/" | grep -q '<Key>serve/' && break
    sleep 0.2
  done
  start_more shared --memory-cache 0 --cache s3://bench/serve/; shared_port=$more_port
  curl -sf -o "$scratch/from-shared" "http://127.0.0.1:$shared_port/$path?$query"
  [ "$(metric "$shared_port" previewloop_shared_cache_hits_total)" = 1 ] && [ "$(metric "$shared_port" previewloop_renders_total)" = 0 ] \
    && cmp -s "$scratch/from-shared" "$scratch/from-serve" \
    || { echo "serve.sh: the shared-cache server did not answer the same bytes from the bucket" >&2; exit 1; }
  rows="$rows shared"
fi

run() { wrk -t2 -c16 -d"${seconds}s" --latency "$1" > "$scratch/$2.wrk"; }
run "http://127.0.0.1:$nginx_port/$path" nginx
run "http://127.0.0.1:$serve_port/$path?$query" serve
run "http://127.0.0.1:$disk_port/$path?$query" disk
case " $rows " in *" shared "*) run "http://127.0.0.1:$shared_port/$path?$query" shared ;; esac
python3 - "$scratch" "$(stat -c %s "$scratch/static/$path")" "$seconds" $rows <<'PY'
import re, sys
scratch, size, seconds, names = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
def ms(text):
    number, unit = re.fullmatch(r"([\d.]+)(us|ms|s)", text).groups()
    return float(number) * {"us": 0.001, "ms": 1, "s": 1000}[unit]
rows = {}
for name in names:
    text = open(f"{scratch}/{name}.wrk").read()
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    p50 = ms(re.search(r"^\s+50%\s+(\S+)", text, re.M).group(1))
    p99 = ms(re.search(r"^\s+99%\s+(\S+)", text, re.M).group(1))
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    rows[name] = (rate, p50, p99, int(errors.group(1)) if errors else 0)
print(f"warm hits of one {size}-byte thumbnail, wrk -t2 -c16 -d{seconds}s --latency, one after the other on this machine")
labels = {"nginx": "nginx (static file)", "serve": "serve, memory cache", "disk": "serve, disk-cache hit",
          "shared": "serve, shared-cache hit"}
print(f"{'server':<28}{'requests/s':>12}{'p50 ms':>10}{'p99 ms':>10}{'non-2xx':>10}")
for name in names:
    rate, p50, p99, errors = rows[name]
    print(f"{labels[name]:<28}{rate:>12.0f}{p50:>10.2f}{p99:>10.2f}{errors:>10}")
if "shared" not in names:
    print("(no shared-cache row: this binary's serve has no --cache s3://)")
ratio = rows["serve"][0] / rows["nginx"][0]
print(f"serve / nginx requests/s: {ratio:.2f}x (target >= 0.5x); serve p99 {rows['serve'][2]:.2f} ms (target <= 5 ms)")
PY
