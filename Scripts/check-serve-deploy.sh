#!/usr/bin/env bash
# Checks the deployment files in Docs/serve/ (run by .ci/run after `make test`):
#   - preview-loop.service passes `systemd-analyze verify`, with ExecStart pointed at the built binary;
#   - kubernetes.yaml parses as YAML into a Deployment, a Service and a HorizontalPodAutoscaler whose
#     selectors and ports agree;
#   - the `serve` arguments in both are accepted by the binary's parser (they fail only on the missing
#     media folder, status 1, never with a usage error, status 64);
#   - nginx.conf, run by a real nginx in front of a real `serve`: the first request for a thumbnail is an
#     nginx MISS, the second a HIT that never reaches the server (its access log has one line), a bad
#     request's problem body is not cached, and If-None-Match through nginx is 304.
# Installs systemd, python3-yaml, nginx and curl with apt-get when missing; starts and stops its own
# nginx and server in a scratch folder.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BIN="$PWD/.build/release/preview-loop"
[ -x "$BIN" ] || { echo "check-serve-deploy: build the release binary first (make release)" >&2; exit 1; }
need=()
command -v systemd-analyze >/dev/null 2>&1 || need+=(systemd)
python3 -c 'import yaml' 2>/dev/null || need+=(python3-yaml)
[ -x /usr/sbin/nginx ] || need+=(nginx)
command -v curl >/dev/null 2>&1 || need+=(curl)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
  # Debian starts the packaged nginx on port 80; this check runs its own.
  $SUDO systemctl disable --now nginx >/dev/null 2>&1 || $SUDO service nginx stop >/dev/null 2>&1 || true
fi
scratch=$(mktemp -d)
serve_pid=""; nginx_pid=""
cleanup() {
  if [ -n "$serve_pid" ]; then kill "$serve_pid" 2>/dev/null || true; wait "$serve_pid" 2>/dev/null || true; fi
  if [ -n "$nginx_pid" ]; then kill "$nginx_pid" 2>/dev/null || true; wait "$nginx_pid" 2>/dev/null || true; fi
  if [ -n "${KEEP_SCRATCH:-}" ]; then echo "scratch kept: $scratch" >&2; else rm -rf "$scratch"; fi
}
trap cleanup EXIT

sed "s#/usr/local/bin/preview-loop#$BIN#" Docs/serve/preview-loop.service > "$scratch/preview-loop.service"
systemd-analyze verify "$scratch/preview-loop.service"
echo "ok: Docs/serve/preview-loop.service passes systemd-analyze verify"

python3 - "$BIN" Docs/serve/preview-loop.service Docs/serve/kubernetes.yaml <<'PY'
import shlex, subprocess, sys, yaml
binary, unit, manifests = sys.argv[1:]

def accepted(arguments, where):
    # The media folder is replaced by one that cannot exist, so a parse that succeeds stops at the root.
    arguments = list(arguments)
    if "--root" in arguments:
        arguments[arguments.index("--root") + 1] = "/nonexistent/previewloop-check-root"
    result = subprocess.run([binary] + arguments, capture_output=True, text=True, timeout=30)
    if result.returncode == 64 or "no such folder" not in result.stderr:
        sys.exit(f"{where}: the serve arguments are not accepted ({result.returncode}): {result.stderr.strip()}")

line = next(l for l in open(unit) if l.startswith("ExecStart="))
words = shlex.split(line.split("=", 1)[1])
# The log's folder exists only under systemd (LogsDirectory=): the log goes to /dev/null here.
if "--access-log" in words:
    words[words.index("--access-log") + 1] = "/dev/null"
accepted(words[1:], unit)

documents = [d for d in yaml.safe_load_all(open(manifests)) if d]
kinds = {d["kind"]: d for d in documents}
if sorted(kinds) != ["Deployment", "HorizontalPodAutoscaler", "Service"]:
    sys.exit(f"{manifests}: expected a Deployment, a Service and a HorizontalPodAutoscaler, found {sorted(kinds)}")
deployment, service, scaler = kinds["Deployment"], kinds["Service"], kinds["HorizontalPodAutoscaler"]
labels = deployment["spec"]["template"]["metadata"]["labels"]
if deployment["spec"]["selector"]["matchLabels"] != labels or service["spec"]["selector"] != labels:
    sys.exit(f"{manifests}: the Deployment's and the Service's selectors do not match the pod labels")
container = deployment["spec"]["template"]["spec"]["containers"][0]
ports = {p["name"] for p in container["ports"]}
if any(p["targetPort"] not in ports for p in service["spec"]["ports"]):
    sys.exit(f"{manifests}: the Service targets a port the container does not name")
if scaler["spec"]["scaleTargetRef"]["name"] != deployment["metadata"]["name"]:
    sys.exit(f"{manifests}: the autoscaler scales another Deployment")
for probe in ("readinessProbe", "livenessProbe"):
    if container[probe]["httpGet"]["path"] not in ("/readyz", "/healthz"):
        sys.exit(f"{manifests}: {probe} does not use /readyz or /healthz")
accepted(container["args"], manifests)
print(f"ok: {manifests} parses ({', '.join(sorted(kinds))}); the serve arguments of both files are accepted")
PY

# --- nginx in front ------------------------------------------------------------------------------
mkdir -p "$scratch/media" "$scratch/nginx/cache"
# nginx's workers run as another user (www-data or nobody) when it starts as root: they must reach the cache.
chmod 0755 "$scratch"
chmod 0777 "$scratch/nginx" "$scratch/nginx/cache"
cp Fixtures/landscape.mp4 "$scratch/media/"
"$BIN" serve --root "$scratch/media" --listen 127.0.0.1:0 --json --access-log "$scratch/access.jsonl" \
  > "$scratch/serve.json" 2> "$scratch/serve.err" &
serve_pid=$!
for _ in $(seq 100); do [ -s "$scratch/serve.json" ] && break; sleep 0.1; done
serve_port=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["port"])' "$scratch/serve.json")
nginx_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
sed -e "s#/var/cache/nginx/preview-loop#$scratch/nginx/cache#" -e "s#127.0.0.1:8080#127.0.0.1:$serve_port#" \
    -e "s#listen 80;#listen 127.0.0.1:$nginx_port;#" Docs/serve/nginx.conf > "$scratch/nginx/preview-loop.conf"
grep -q "127.0.0.1:$serve_port" "$scratch/nginx/preview-loop.conf" && grep -q "listen 127.0.0.1:$nginx_port;" "$scratch/nginx/preview-loop.conf" \
  || { echo "check-serve-deploy: Docs/serve/nginx.conf no longer has the upstream or listen lines this check rewrites" >&2; exit 1; }
cat > "$scratch/nginx/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $scratch/nginx/nginx.pid;
error_log $scratch/nginx/error.log;
events { worker_connections 256; }
http {
  access_log $scratch/nginx/access.log;
  client_body_temp_path $scratch/nginx/body;
  proxy_temp_path $scratch/nginx/proxy;
  fastcgi_temp_path $scratch/nginx/fastcgi;
  uwsgi_temp_path $scratch/nginx/uwsgi;
  scgi_temp_path $scratch/nginx/scgi;
  include $scratch/nginx/preview-loop.conf;
}
CONF
/usr/sbin/nginx -t -q -c "$scratch/nginx/nginx.conf" -p "$scratch/nginx"
/usr/sbin/nginx -c "$scratch/nginx/nginx.conf" -p "$scratch/nginx" &
nginx_pid=$!
front="http://127.0.0.1:$nginx_port"
for _ in $(seq 100); do curl -s -o /dev/null "$front/" && break; sleep 0.1; done
url="$front/landscape.mp4/thumbnail.jpg?time=1&width=320"
status() { curl -s -o /dev/null -D - "$@" | tr -d '\r' | awk 'tolower($1)=="x-cache-status:" {print $2}'; }
first=$(status "$url"); second=$(status "$url")
tag=$(curl -s -D - -o /dev/null "$url" | tr -d '\r' | awk 'tolower($1)=="etag:" {print $2}')
conditional=$(curl -s -o /dev/null -w '%{http_code}' -H "If-None-Match: $tag" "$url")
bad1=$(status "$front/landscape.mp4/thumbnail.jpg?width=0"); bad2=$(status "$front/landscape.mp4/thumbnail.jpg?width=0")
direct=$(curl -s -o "$scratch/direct.jpg" -w '%{http_code}' "http://127.0.0.1:$serve_port/landscape.mp4/thumbnail.jpg?time=1&width=320")
curl -s -o "$scratch/front.jpg" "$url"
sleep 0.3
upstream=$(grep -c '"path":"/landscape.mp4/thumbnail.jpg","status":200' "$scratch/access.jsonl" || true)
bad_upstream=$(grep -c '"status":400' "$scratch/access.jsonl" || true)
echo "nginx: first $first, second $second, If-None-Match $conditional; width=0: $bad1 then $bad2; thumbnail requests that reached serve: $upstream (1 through nginx + 1 direct)"
[ "$first" = MISS ] && [ "$second" = HIT ] && [ "$conditional" = 304 ] && [ "$direct" = 200 ] \
  && [ "$upstream" = 2 ] && [ "$bad_upstream" = 2 ] && [ "$bad2" != HIT ] && cmp -s "$scratch/direct.jpg" "$scratch/front.jpg" \
  || { echo "check-serve-deploy: nginx in front did not cache as expected" >&2; cat "$scratch/access.jsonl" >&2; exit 1; }
echo "ok: nginx caches renders (HIT without reaching serve), not problem bodies; 304 through nginx; same bytes"
