#!/usr/bin/env bash
# Checks the deployment files in Docs/serve/ (run by .ci/run after `make test`):
#   - preview-loop.service passes `systemd-analyze verify`, with ExecStart pointed at the built binary;
#   - kubernetes.yaml parses as YAML into a Deployment, a Service and a HorizontalPodAutoscaler whose
#     selectors and ports agree;
#   - kubernetes-tier.yaml (the tier of several servers) parses into the serve Deployment, its headless
#     Service and autoscaler, the front's nginx Deployment, ConfigMap and Service, and the cache's
#     ConfigMap, whose names, selectors, ports, probes and Secret references agree; the front's nginx
#     configuration is Docs/serve/nginx-tier.conf but for how it finds the servers, and passes `nginx -t`;
#   - the `serve` arguments in all three are accepted by the binary's parser (they fail only on the
#     missing media folder, status 1, never with a usage error, status 64);
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

# --- the tier on Kubernetes ----------------------------------------------------------------------------
# Whether this binary has the shared response cache: --cache's own help paragraph names s3://.
shared_cache=no
if "$BIN" serve --help 2>&1 | awk '/^  --cache </{p=1; print; next} p && /^  --/{p=0} p' | grep -q 's3://'; then shared_cache=yes; fi
python3 - "$BIN" Docs/serve/kubernetes-tier.yaml Docs/serve/nginx-tier.conf "$scratch/front.conf" "$shared_cache" <<'PY'
import difflib, re, subprocess, sys, yaml
binary, manifests, tier_conf, front_out, shared_cache = sys.argv[1:]
def fail(message):
    sys.exit(f"{manifests}: {message}")
documents = [d for d in yaml.safe_load_all(open(manifests)) if d]
by = {}
for d in documents:
    by.setdefault(d["kind"], {})[d["metadata"]["name"]] = d
expected = {"ConfigMap": 2, "Deployment": 2, "Service": 2, "HorizontalPodAutoscaler": 1}
found = {kind: len(names) for kind, names in by.items()}
if found != expected:
    fail(f"expected {expected}, found {found}")
deployments = list(by["Deployment"].values())
serve = next((d for d in deployments if d["spec"]["template"]["spec"]["containers"][0].get("args", [])[:1] == ["serve"]), None)
front = next((d for d in deployments if d is not serve), None)
if serve is None or front is None:
    fail("expected a Deployment running `serve` and one running the nginx front")
def pods(deployment):
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    if deployment["spec"]["selector"]["matchLabels"] != labels:
        fail(f"{deployment['metadata']['name']}: its selector does not match its pod labels")
    return labels
def service_for(labels, container, what):
    match = [s for s in by["Service"].values() if s["spec"]["selector"] == labels]
    if len(match) != 1:
        fail(f"expected one Service selecting the {what} pods, found {len(match)}")
    names = {p["name"] for p in container["ports"]}
    if any(p["targetPort"] not in names for p in match[0]["spec"]["ports"]):
        fail(f"the {what} Service targets a port the container does not name")
    return match[0]
container = serve["spec"]["template"]["spec"]["containers"][0]
front_container = front["spec"]["template"]["spec"]["containers"][0]
pods_service = service_for(pods(serve), container, "serve")
service_for(pods(front), front_container, "front")
if pods_service["spec"].get("clusterIP") != "None":
    fail("the serve pods' Service must be headless (clusterIP: None): the front resolves each pod")
scaler = next(iter(by["HorizontalPodAutoscaler"].values()))
if scaler["apiVersion"] != "autoscaling/v2" or scaler["spec"]["scaleTargetRef"]["name"] != serve["metadata"]["name"]:
    fail("the autoscaler (autoscaling/v2) does not scale the serve Deployment")
if [m["resource"]["name"] for m in scaler["spec"]["metrics"]] != ["cpu"]:
    fail("the autoscaler does not scale on CPU")
if container["readinessProbe"]["httpGet"]["path"] != "/readyz" or container["livenessProbe"]["httpGet"]["path"] != "/healthz":
    fail("serve's readiness probe must be /readyz and its liveness probe /healthz")
if "requests" not in container.get("resources", {}):
    fail("serve has no resource requests (the autoscaler's CPU target is a share of them)")
# The bucket: its endpoint from a ConfigMap of this file, its credentials from a Secret, never in a ConfigMap.
maps = [e["configMapRef"]["name"] for e in container.get("envFrom", []) if "configMapRef" in e]
if not maps or any(m not in by["ConfigMap"] for m in maps) or not any("AWS_ENDPOINT_URL" in by["ConfigMap"][m]["data"] for m in maps):
    fail("serve takes AWS_ENDPOINT_URL from no ConfigMap of this file")
secrets = {e["name"]: e["valueFrom"]["secretKeyRef"] for e in container.get("env", []) if "secretKeyRef" in e.get("valueFrom", {})}
for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
    if key not in secrets or secrets[key]["key"] != key:
        fail(f"serve does not take {key} from a Secret")
if any(name.startswith(("AWS_ACCESS", "AWS_SECRET", "AWS_SESSION")) for m in maps for name in by["ConfigMap"][m]["data"]):
    fail("a credential is written in a ConfigMap")
arguments = list(container["args"])
if not any(a == "--cache" and b.startswith("s3://") for a, b in zip(arguments, arguments[1:])):
    fail("serve is given no --cache s3://BUCKET/PREFIX/ (the shared cache)")
if shared_cache != "yes":
    # Tolerated until the binary has the shared response cache: the bucket's --cache and
    # --require-shared-cache are taken out before the parse; every other argument is still checked.
    for index in reversed(range(len(arguments) - 1)):
        if arguments[index] == "--cache" and arguments[index + 1].startswith("s3://"):
            del arguments[index:index + 2]
    arguments = [a for a in arguments if a != "--require-shared-cache"]
    print(f"note: this binary has no --cache s3://: {manifests}'s --cache s3://… and --require-shared-cache are not parsed")
arguments[arguments.index("--root") + 1] = "/nonexistent/previewloop-check-root"
result = subprocess.run([binary] + arguments, capture_output=True, text=True, timeout=30)
if result.returncode == 64 or "no such folder" not in result.stderr:
    fail(f"the serve arguments are not accepted ({result.returncode}): {result.stderr.strip()}")
# The front: its ConfigMap mounted where the nginx image includes it, holding the documented configuration.
volumes = {v["name"]: v for v in front["spec"]["template"]["spec"]["volumes"]}
mounted = [volumes[m["name"]]["configMap"]["name"] for m in front_container["volumeMounts"]
           if "configMap" in volumes.get(m["name"], {}) and m["mountPath"] == "/etc/nginx/conf.d"]
if len(mounted) != 1 or mounted[0] not in by["ConfigMap"]:
    fail("the front mounts no ConfigMap of this file at /etc/nginx/conf.d")
configs = [v for k, v in by["ConfigMap"][mounted[0]]["data"].items() if k.endswith(".conf")]
if len(configs) != 1:
    fail("the front's ConfigMap holds no single .conf file")
def directives(text):
    # Comments and blank lines out; how the servers are found (the upstream's server lines, the
    # resolver) is all that may differ.
    lines = [re.sub(r"#.*", "", l).strip() for l in text.splitlines()]
    return [l for l in lines if l and not l.startswith("resolver ") and not re.match(r"server \S+( |;)", l)]
documented = directives(open(tier_conf).read())
if directives(configs[0]) != documented:
    diff = "\n".join(difflib.unified_diff(documented, directives(configs[0]), tier_conf, "front", lineterm="", n=0))
    fail(f"the front's nginx configuration differs from {tier_conf} beyond how it finds the servers:\n{diff}")
if not re.search(r"^\s*server \S+ service=\S+ resolve", configs[0], re.M):
    fail("the front's upstream does not resolve the pods (server NAME service=http resolve)")
open(front_out, "w").write(configs[0])
print(f"ok: {manifests} parses ({', '.join(f'{n} {k}' for k, n in sorted(found.items()))}); names, selectors, ports,"
      f" probes, Secret and ConfigMaps agree; serve's arguments are accepted; the front runs {tier_conf}")
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
# The Kubernetes front's configuration through the same nginx: Debian 12's nginx (1.22) has no `resolve`
# in upstream blocks (1.27.3 added it) and there is no cluster DNS here, so its resolving server line
# becomes one fixed address and its resolver line goes, for this syntax check; the rest is as written.
mkdir -p "$scratch/nginx/front-cache"; chmod 0777 "$scratch/nginx/front-cache"
sed -e 's#^\( *server \)[^ ]* service=[^ ]* resolve #\1127.0.0.1:9 #' -e '/^ *resolver /d' \
    -e "s#/var/cache/nginx/preview-loop-tier#$scratch/nginx/front-cache#" "$scratch/front.conf" > "$scratch/nginx/front.conf"
sed "s#include $scratch/nginx/preview-loop.conf;#include $scratch/nginx/front.conf;#" "$scratch/nginx/nginx.conf" > "$scratch/nginx/front-nginx.conf"
/usr/sbin/nginx -t -q -c "$scratch/nginx/front-nginx.conf" -p "$scratch/nginx" \
  || { echo "check-serve-deploy: nginx refuses the front's configuration in Docs/serve/kubernetes-tier.yaml" >&2; exit 1; }
echo "ok: the front's nginx configuration in Docs/serve/kubernetes-tier.yaml passes nginx -t (its servers fixed for the check)"
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
