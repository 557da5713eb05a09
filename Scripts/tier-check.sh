#!/usr/bin/env bash
# The tier of Docs/serve.md, "Several servers", run for real on 127.0.0.1 (`make tier-check`; .ci/run):
# three `preview-loop serve` processes, each with its own copy of a few fixtures (`cp -p`, so the three
# give the same ETags), and Debian's nginx in front running Docs/serve/nginx-tier.conf itself (only the
# three server addresses, the listen line and the cache folder replaced). When the binary has the shared
# response cache (`serve --cache s3://BUCKET/PREFIX/`), a SeaweedFS store (Scripts/s3-store.sh) holds it
# and every server is given it; otherwise that part is skipped and said so. It checks:
#   - shared cache (when the binary has it): a thumbnail asked of server A, then of server B, is the
#     same bytes and ETag, and B answers it from the bucket (its renders unchanged, its shared hits +1);
#   - consistent hashing: each of 10 new URLs asked twice through a cache-less front on the same
#     upstream block and once through the caching front lands on one server, the one nginx's ring
#     (crc32, 160 points a server) names: one render per URL in the whole tier;
#   - failover under load: wrk through the front for 30 s over 21 warm and 60 cold thumbnail URLs (the
#     cold ones released 2 a second), one server killed with SIGKILL at 10 s; beside wrk a Python client
#     compares every 200 body with its reference. Every status is 200, 304 or 503 outside the failover
#     window (the kill's second and the next: a refused connection is retried on the next server at
#     once, one not accepted in proxy_connect_timeout, 1 s, too), and every 200 body is byte for byte
#     what `preview-loop thumb --at T --size W` writes for it. The dead server's URLs asked after the
#     kill are answered by the survivors (their renders from /metrics before and after are printed).
# Prints a summary table; exits 1 with a one-line reason on any failed check. Bounded: every wait has a
# timeout and a watchdog stops the whole run after 170 s. Everything it starts runs in its own process
# group, which the EXIT trap kills; its scratch folder is removed (KEEP_SCRATCH=1 keeps it).
# Installs nginx, wrk and curl with apt-get when missing. PREVIEW_LOOP_BIN names another binary.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
began=$SECONDS
BIN="${PREVIEW_LOOP_BIN:-$PWD/.build/release/preview-loop}"
[ -x "$BIN" ] || { echo "tier-check: build the release binary first (make release)" >&2; exit 1; }
need=()
[ -x /usr/sbin/nginx ] || need+=(nginx)
command -v wrk >/dev/null 2>&1 || need+=(wrk)
command -v curl >/dev/null 2>&1 || need+=(curl)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  timeout 300 $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive timeout 300 $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
  # Debian starts the packaged nginx on port 80; this check runs its own.
  $SUDO systemctl disable --now nginx >/dev/null 2>&1 || $SUDO service nginx stop >/dev/null 2>&1 || true
fi

scratch=$(mktemp -d /tmp/tier-check.XXXXXX)
# nginx's workers run as another user (nobody) when it starts as root: they must reach the cache.
chmod 0755 "$scratch"
groups=()          # process groups this script started (each leader's PID)
store=""           # the S3 store's folder, when started
cleanup() {
  local status=$? pid
  trap - INT TERM
  for pid in "${groups[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || true; done
  # A group is gone when none of its processes is alive (a leader not yet reaped is a zombie).
  for pid in "${groups[@]}"; do
    for _ in $(seq 30); do
      ps -eo pgid=,stat= | awk -v g="$pid" '$1 == g && $2 !~ /^Z/ {found=1} END {exit !found}' || break
      sleep 0.1
    done
    kill -KILL -- "-$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  [ -n "$store" ] && { timeout 20 Scripts/s3-store.sh stop "$store" >/dev/null 2>&1 || true; }
  if [ -n "${KEEP_SCRATCH:-}" ]; then echo "scratch kept: $scratch" >&2; else rm -rf "$scratch"; fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fail() { echo "tier-check: FAIL: $*" >&2; exit 1; }
# Starts a command in a process group of its own (setsid: a background child of a script is not a group
# leader, so setsid makes the new group without forking and $! is its leader).
spawn() { setsid "$@" & groups+=("$!"); }
# The whole run is bounded: past 170 s the watchdog stops it (the EXIT trap then cleans up).
spawn bash -c "sleep 170; echo 'tier-check: FAIL: over 170 s, stopped' >&2; kill -TERM $$"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
metric() { # PORT NAME: the sum of a metric's samples on that server (0 when absent)
  curl -sf --max-time 5 "http://127.0.0.1:$1/metrics" | awk -v name="$2" '$1 == name || index($1, name "{") == 1 {sum += $2} END {print sum + 0}'
}

# --- shared cache: does this binary take --cache s3://? ------------------------------------------------
# Detected from --cache's own help paragraph (--root already names s3:// for sources).
shared=no
if "$BIN" serve --help 2>&1 | awk '/^  --cache </{p=1; print; next} p && /^  --/{p=0} p' | grep -q 's3://'; then shared=yes; fi

# --- media, store, servers -------------------------------------------------------------------------------
fixtures=(landscape.mp4 rotated90.mp4 card.mp4)
names=(a b c)
for name in "${names[@]}"; do
  mkdir -p "$scratch/root-$name"
  for f in "${fixtures[@]}"; do cp -p "Fixtures/$f" "$scratch/root-$name/"; done
done
cache_args=()
if [ "$shared" = yes ]; then
  store="$scratch/s3"
  timeout 70 Scripts/s3-store.sh start "$store" > "$scratch/s3.env" || fail "the S3 store did not start"
  set -a; . "$scratch/s3.env"; set +a
  export AWS_REGION=us-east-1
  # The bucket is made by a first upload beside the cache's prefix.
  echo tier-check > "$scratch/marker"
  timeout 20 Scripts/s3-store.sh put "$store" s3://previews/marker "$scratch/marker" || fail "could not make the bucket"
  cache_args=(--cache s3://previews/tier/)
fi
ports=()
for name in "${names[@]}"; do
  spawn "$BIN" serve --root "$scratch/root-$name" --listen 127.0.0.1:0 --json --workers 1 \
    --access-log "$scratch/serve-$name.jsonl" "${cache_args[@]}" > "$scratch/serve-$name.json" 2> "$scratch/serve-$name.err"
  eval "pid_$name=\$!"
done
for name in "${names[@]}"; do
  for _ in $(seq 100); do [ -s "$scratch/serve-$name.json" ] && break; sleep 0.1; done
  [ -s "$scratch/serve-$name.json" ] || fail "server $name did not start: $(head -c 300 "$scratch/serve-$name.err")"
  ports+=("$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["port"])' "$scratch/serve-$name.json")")
done
port_a=${ports[0]}; port_b=${ports[1]}; port_c=${ports[2]}

# --- the URLs and their references from the CLI ------------------------------------------------------
# A thumbnail route's `time` and `width` are `thumb`'s --at and --size W (one side keeps the shape).
python3 - "$scratch" "${fixtures[@]}" <<'PY'
import sys
scratch, fixtures = sys.argv[1], sys.argv[2:]
durations = {"landscape.mp4": 4.0, "rotated90.mp4": 2.0, "card.mp4": 3.0}
def urls(count, width, offset):
    out = []
    for i in range(count):
        name = fixtures[i % len(fixtures)]
        step = i // len(fixtures)
        time = round((offset + step * 0.083) % (durations[name] - 0.2) + 0.05, 3)
        out.append((name, time, width))
    return out
lists = {"warm": urls(21, 160, 0.0), "cold": urls(60, 144, 0.031), "hash": urls(10, 200, 0.017), "shared": urls(1, 240, 1.5)}
with open(f"{scratch}/refs.tsv", "w") as refs:
    index = 0
    for kind, items in lists.items():
        with open(f"{scratch}/{kind}.urls", "w") as out:
            for name, time, width in items:
                url = f"/{name}/thumbnail.jpg?time={time:g}&width={width}"
                out.write(url + "\n")
                refs.write(f"{url}\t{name}\t{time:g}\t{width}\tref-{index}.jpg\n")
                index += 1
PY
mkdir "$scratch/refs"
cut -f2- "$scratch/refs.tsv" | timeout 90 xargs -P 2 -L 1 sh -c \
  '"$0" thumb "'"$scratch"'/root-a/$1" -o "'"$scratch"'/refs/$4" --at "$2" --size "$3" --quiet' "$BIN" \
  || fail "the CLI could not render the references"

# --- nginx: Docs/serve/nginx-tier.conf with this run's addresses -------------------------------------
front_port=$(free_port); plain_port=$(free_port)
mkdir -p "$scratch/nginx/cache"
chmod 0777 "$scratch/nginx" "$scratch/nginx/cache"
sed -e "s#server 10.0.0.11:8080 #server 127.0.0.1:$port_a #" -e "s#server 10.0.0.12:8080 #server 127.0.0.1:$port_b #" \
    -e "s#server 10.0.0.13:8080 #server 127.0.0.1:$port_c #" -e "s#listen 80;#listen 127.0.0.1:$front_port;#" \
    -e "s#/var/cache/nginx/preview-loop-tier#$scratch/nginx/cache#" Docs/serve/nginx-tier.conf > "$scratch/nginx/tier.conf"
for line in "server 127.0.0.1:$port_a " "server 127.0.0.1:$port_b " "server 127.0.0.1:$port_c " "listen 127.0.0.1:$front_port;" "$scratch/nginx/cache"; do
  grep -qF "$line" "$scratch/nginx/tier.conf" \
    || fail "Docs/serve/nginx-tier.conf no longer has the server, listen or cache lines this check rewrites"
done
# Beside the documented front, a front without nginx's cache on the same upstream block, so repeated
# requests reach the servers and show where the hash sends them; the log names each request's upstream.
cat > "$scratch/nginx/nginx.conf" <<CONF
worker_processes 2;
daemon off;
pid $scratch/nginx/nginx.pid;
error_log $scratch/nginx/error.log;
events { worker_connections 512; }
http {
  log_format tier '\$msec|\$server_port|\$status|\$upstream_addr|\$upstream_status|\$upstream_cache_status|\$request_uri';
  access_log $scratch/nginx/access.log tier;
  client_body_temp_path $scratch/nginx/body;
  proxy_temp_path $scratch/nginx/proxy;
  fastcgi_temp_path $scratch/nginx/fastcgi;
  uwsgi_temp_path $scratch/nginx/uwsgi;
  scgi_temp_path $scratch/nginx/scgi;
  include $scratch/nginx/tier.conf;
  server {
    listen 127.0.0.1:$plain_port;
    location / { proxy_pass http://preview_loop_tier; proxy_http_version 1.1; proxy_set_header Connection ""; }
  }
}
CONF
timeout 10 /usr/sbin/nginx -t -q -c "$scratch/nginx/nginx.conf" -p "$scratch/nginx" || fail "nginx refuses the tier's configuration"
spawn /usr/sbin/nginx -c "$scratch/nginx/nginx.conf" -p "$scratch/nginx"
front="http://127.0.0.1:$front_port"; plain="http://127.0.0.1:$plain_port"
for _ in $(seq 100); do curl -s -o /dev/null --max-time 1 "$front/" && break; sleep 0.1; done

# The ring nginx builds for `hash ... consistent` (ngx_http_upstream_hash_module): 160 points a server
# of weight 1, point k = crc32(HOST "\0" PORT, then the previous point's 4 bytes little-endian), sorted;
# a key goes to the first point at or after crc32(key), past points whose server is down or tried.
cat > "$scratch/ring.py" <<'PY'
import bisect, sys, zlib
def ring(servers):
    points = {}
    for server in servers:
        host, _, port = server.rpartition(":")
        base = zlib.crc32(host.encode() + b"\0" + port.encode())
        previous = 0
        for _ in range(160):
            point = zlib.crc32(previous.to_bytes(4, "little"), base)
            points.setdefault(point, server)
            previous = point
    return sorted(points.items())
def owner(points, key, alive):
    hashes = [p for p, _ in points]
    start = bisect.bisect_left(hashes, zlib.crc32(key.encode()))
    for step in range(20):
        server = points[(start + step) % len(points)][1]
        if server in alive:
            return server
    return None
if __name__ == "__main__":
    servers, dead = sys.argv[1].split(","), set(sys.argv[2].split(",")) - {""}
    points = ring(servers)
    for key in sys.stdin.read().split():
        print(key, owner(points, key, set(servers)), owner(points, key, set(servers) - dead))
PY
servers="127.0.0.1:$port_a,127.0.0.1:$port_b,127.0.0.1:$port_c"

declare -A results
# --- shared cache -----------------------------------------------------------------------------------------
if [ "$shared" = yes ]; then
  url=$(cat "$scratch/shared.urls")
  ref="$scratch/refs/$(awk -F'\t' -v u="$url" '$1 == u {print $5}' "$scratch/refs.tsv")"
  shared_metric=""
  code_a=$(curl -s --max-time 30 -o "$scratch/shared-a.jpg" -D "$scratch/shared-a.h" -w '%{http_code}' "http://127.0.0.1:$port_a$url")
  [ "$code_a" = 200 ] || fail "shared cache: server A answered $code_a"
  # A's upload may finish just after its answer: wait (at most 10 s) for an object under the prefix.
  for _ in $(seq 50); do
    listing=$(curl -s --max-time 2 --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
      "$AWS_ENDPOINT_URL/previews?list-type=2&prefix=tier/" || true)
    grep -q '<Key>tier/' <<<"$listing" && break; sleep 0.2
  done
  shared_metric=$(curl -sf --max-time 5 "http://127.0.0.1:$port_b/metrics" | awk '$1 ~ /^previewloop_[a-z_]*shared[a-z_]*hits_total/ {sub(/\{.*/, "", $1); print $1; exit}')
  [ -n "$shared_metric" ] || fail "shared cache: /metrics has no shared-cache hit counter"
  renders_b0=$(metric "$port_b" previewloop_renders_total); hits_b0=$(metric "$port_b" "$shared_metric")
  code_b=$(curl -s --max-time 30 -o "$scratch/shared-b.jpg" -D "$scratch/shared-b.h" -w '%{http_code}' "http://127.0.0.1:$port_b$url")
  renders_b1=$(metric "$port_b" previewloop_renders_total); hits_b1=$(metric "$port_b" "$shared_metric")
  etag_a=$(tr -d '\r' < "$scratch/shared-a.h" | awk 'tolower($1)=="etag:" {print $2}')
  etag_b=$(tr -d '\r' < "$scratch/shared-b.h" | awk 'tolower($1)=="etag:" {print $2}')
  [ "$code_b" = 200 ] || fail "shared cache: server B answered $code_b"
  cmp -s "$scratch/shared-a.jpg" "$scratch/shared-b.jpg" || fail "shared cache: A and B sent different bytes"
  cmp -s "$scratch/shared-a.jpg" "$ref" || fail "shared cache: the body differs from preview-loop thumb's"
  [ -n "$etag_a" ] && [ "$etag_a" = "$etag_b" ] || fail "shared cache: ETags differ ($etag_a, $etag_b)"
  [ "$renders_b1" = "$renders_b0" ] || fail "shared cache: B rendered ($renders_b0 -> $renders_b1 renders)"
  [ "$((hits_b1 - hits_b0))" = 1 ] || fail "shared cache: B's $shared_metric went $hits_b0 -> $hits_b1, not +1"
  results[shared]="ok: A then B: same bytes (= CLI) and ETag; B renders +0, $shared_metric +1"
else
  results[shared]="skipped: this binary's serve has no --cache s3:// (the shared response cache)"
fi

# --- consistent hashing -------------------------------------------------------------------------------------
renders_before=0; hits_before=0
for port in "${ports[@]}"; do
  renders_before=$((renders_before + $(metric "$port" previewloop_renders_total)))
  hits_before=$((hits_before + $(metric "$port" previewloop_cache_hits_total)))
done
: > "$scratch/hash.cache-status"
while read -r url; do
  ref="$scratch/refs/$(awk -F'\t' -v u="$url" '$1 == u {print $5}' "$scratch/refs.tsv")"
  for target in "$plain" "$plain" "$front" "$front"; do
    code=$(curl -s --max-time 30 -o "$scratch/hash.jpg" -D "$scratch/hash.h" -w '%{http_code}' "$target$url")
    [ "$code" = 200 ] || fail "consistent hashing: $target$url answered $code"
    cmp -s "$scratch/hash.jpg" "$ref" || fail "consistent hashing: $url differs from preview-loop thumb's"
    [ "$target" = "$front" ] && tr -d '\r' < "$scratch/hash.h" | awk 'tolower($1)=="x-cache-status:" {print $2}' >> "$scratch/hash.cache-status"
  done
done < "$scratch/hash.urls"
renders_after=0; hits_after=0
for port in "${ports[@]}"; do
  renders_after=$((renders_after + $(metric "$port" previewloop_renders_total)))
  hits_after=$((hits_after + $(metric "$port" previewloop_cache_hits_total)))
done
sleep 0.2
hash_report=$(python3 - "$scratch" "$servers" "$plain_port" "$front_port" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from ring import ring, owner
scratch, servers, plain_port, front_port = sys.argv[1], sys.argv[2].split(","), sys.argv[3], sys.argv[4]
points = ring(servers)
urls = open(f"{scratch}/hash.urls").read().split()
seen = {u: [] for u in urls}
for line in open(f"{scratch}/nginx/access.log"):
    parts = line.rstrip("\n").split("|")
    uri, upstream = parts[6], parts[3]
    if uri in seen and upstream != "-":
        seen[uri].append(upstream)
bad = [u for u in urls if len(seen[u]) != 3 or len(set(seen[u])) != 1]
predicted = sum(1 for u in urls if seen[u] and seen[u][0] == owner(points, u, set(servers)))
spread = {s: sum(1 for u in urls if seen[u] and seen[u][0] == s) for s in servers}
print(len(bad), predicted, " ".join(str(spread[s]) for s in servers))
PY
)
read -r hash_bad hash_predicted spread_a spread_b spread_c <<<"$hash_report"
statuses=$(sort "$scratch/hash.cache-status" | uniq -c | awk '{printf "%s %s, ", $1, $2}')
[ "$hash_bad" = 0 ] || fail "consistent hashing: $hash_bad of 10 URLs reached more than one server or not 3 times (nginx log)"
[ "$((renders_after - renders_before))" = 10 ] || fail "consistent hashing: 10 URLs made $((renders_after - renders_before)) renders in the tier, not 10"
[ "$((hits_after - hits_before))" = 20 ] || fail "consistent hashing: $((hits_after - hits_before)) memory hits, not 20 (2 a URL on its server)"
[ "$(grep -c HIT "$scratch/hash.cache-status")" = 10 ] || fail "consistent hashing: the caching front's second requests were not all HITs ($statuses)"
results[hash]="ok: 10 URLs x 3 upstream requests, each URL on one server (A/B/C: $spread_a/$spread_b/$spread_c URLs); renders +10, memory hits +20; front: ${statuses%, }; nginx's ring predicted $hash_predicted/10"
[ "$hash_predicted" = 10 ] || results[hash]+=" (MODEL MISMATCH: the report of dead-server keys below is approximate)"

# --- failover under load ------------------------------------------------------------------------------------
# Warm: the 21 warm URLs through the caching front once (each rendered once, on its owner).
while read -r url; do
  code=$(curl -s --max-time 30 -o /dev/null -w '%{http_code}' "$front$url")
  [ "$code" = 200 ] || fail "warm-up: $url answered $code"
done < "$scratch/warm.urls"
victim=b; victim_port=$port_b; victim_pid=$pid_b
cat > "$scratch/load.lua" <<'LUA'
-- wrk: each request picks a URL: every third the newest cold URL released (2 a second from the start),
-- the others any warm or released cold one. response() counts statuses per second since the start and
-- checks every 200 body against the set of reference bodies (the Python client checks URL by URL).
local threads = {}
function setup(thread)
  table.insert(threads, thread)
  thread:set("id", #threads)
end
function init(args)
  local list, refdir = args[1], args[2]
  start, rate = tonumber(args[3]), tonumber(args[4])
  warm, cold, known = {}, {}, {}
  for line in io.lines(list) do
    local url, kind, file = line:match("^(%S+)\t(%S+)\t(%S+)$")
    if kind == "warm" then table.insert(warm, url) else table.insert(cold, url) end
    local f = io.open(refdir .. "/" .. file, "rb"); known[f:read("*a")] = true; f:close()
  end
  counter, counts, unknown = 0, {}, 0
  math.randomseed(start + id)
end
function request()
  counter = counter + 1
  local released = math.min(#cold, (os.time() - start + 1) * rate)
  local url
  if counter % 3 == 0 then url = cold[released]
  else
    local pick = math.random(#warm + released)
    url = pick <= #warm and warm[pick] or cold[pick - #warm]
  end
  return wrk.format("GET", url)
end
function response(status, headers, body)
  local key = (os.time() - start) * 1000 + status
  counts[key] = (counts[key] or 0) + 1
  if status == 200 and not known[body] then unknown = unknown + 1 end
end
function done(summary, latency, requests)
  local totals, bad = {}, 0
  for _, thread in ipairs(threads) do
    for key, count in pairs(thread:get("counts")) do totals[key] = (totals[key] or 0) + count end
    bad = bad + thread:get("unknown")
  end
  for key, count in pairs(totals) do
    io.write(string.format("second %d status %d count %d\n", math.floor(key / 1000), key % 1000, count))
  end
  io.write(string.format("unknown_bodies %d\n", bad))
  io.write(string.format("errors connect %d read %d write %d timeout %d status %d\n", summary.errors.connect,
    summary.errors.read, summary.errors.write, summary.errors.timeout, summary.errors.status))
end
LUA
# The list for wrk: URL, kind, reference file.
python3 - "$scratch" <<'PY'
import sys
scratch = sys.argv[1]
refs = {l.split("\t")[0]: l.rstrip("\n").split("\t")[4] for l in open(f"{scratch}/refs.tsv")}
with open(f"{scratch}/load.tsv", "w") as out:
    for kind in ("warm", "cold"):
        for url in open(f"{scratch}/{kind}.urls").read().split():
            out.write(f"{url}\t{kind}\t{refs[url]}\n")
PY
cat > "$scratch/client.py" <<'PY'
# Beside wrk: one keep-alive client over the same schedule, each 200 body compared with its URL's reference.
import http.client, json, random, sys, time
scratch, port, start, rate, seconds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
rows = [l.rstrip("\n").split("\t") for l in open(f"{scratch}/load.tsv")]
refs = {url: open(f"{scratch}/refs/{file}", "rb").read() for url, _, file in rows}
warm = [url for url, kind, _ in rows if kind == "warm"]
cold = [url for url, kind, _ in rows if kind == "cold"]
random.seed(start)
results, asked, connection = [], set(), None
while time.time() < start + seconds:
    released = min(len(cold), (int(time.time()) - start + 1) * rate)
    fresh = [u for u in cold[:released] if u not in asked]
    url = fresh[0] if fresh else random.choice(warm + cold[:released])
    asked.add(url)
    began = time.time()
    try:
        if connection is None:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=40)
        connection.request("GET", url)
        response = connection.getresponse()
        body = response.read()
        status = response.status
        if response.getheader("Connection", "").lower() == "close":
            connection.close(); connection = None
    except (OSError, http.client.HTTPException) as error:
        status, body = f"error: {type(error).__name__}", b""
        connection = None
    results.append({"second": int(began) - start, "url": url, "status": status,
                    "same": status != 200 or body == refs[url]})
json.dump(results, open(f"{scratch}/client.json", "w"))
PY
snapshot() { # LABEL: each live server's renders
  local name port
  for name in "${names[@]}"; do
    port=$(eval echo "\$port_$name")
    if [ "$name" = "$victim" ] && [ "$1" = after ]; then echo "$name -"; else echo "$name $(metric "$port" previewloop_renders_total)"; fi
  done > "$scratch/renders-$1"
}
snapshot before
start=$(( $(date +%s) + 1 ))
while [ "$(date +%s)" -lt "$start" ]; do sleep 0.05; done
spawn timeout 45 wrk -t2 -c8 -d30s --timeout 40s -s "$scratch/load.lua" "$front" -- "$scratch/load.tsv" "$scratch/refs" "$start" 2 > "$scratch/wrk.out" 2> "$scratch/wrk.err"
wrk_group=$!
spawn timeout 45 python3 "$scratch/client.py" "$scratch" "$front_port" "$start" 2 30
client_group=$!
while [ "$(date +%s)" -lt $((start + 10)) ]; do sleep 0.05; done
snapshot at-kill
# Disowned first, so the shell prints no notice of its death.
disown "$victim_pid" 2>/dev/null || true
kill -KILL "$victim_pid"
kill_time=$(date +%s.%N)
wait "$wrk_group" || true
wait "$client_group" || true
snapshot after
grep -q '^unknown_bodies' "$scratch/wrk.out" || fail "wrk did not finish: $(tail -3 "$scratch/wrk.err" "$scratch/wrk.out" | tr '\n' ' ')"
[ -s "$scratch/client.json" ] || fail "the checking client did not finish"

# --- verdict -----------------------------------------------------------------------------------------------------
python3 - "$scratch" "$servers" "$victim_port" "$kill_time" "$start" > "$scratch/verdict" <<'PY'
import json, re, sys
sys.path.insert(0, sys.argv[1])
from ring import ring, owner
scratch, servers, victim_port, kill_time, start = sys.argv[1], sys.argv[2].split(","), sys.argv[3], float(sys.argv[4]), int(sys.argv[5])
victim = f"127.0.0.1:{victim_port}"
kill_second = int(kill_time) - start
window = {kill_second, kill_second + 1}      # the kill's second and the next (proxy_connect_timeout 1 s)
allowed = {200, 304, 503}
wrk = open(f"{scratch}/wrk.out").read()
counts = [(int(s), int(c), int(n)) for s, c, n in re.findall(r"second (-?\d+) status (\d+) count (\d+)", wrk)]
unknown = int(re.search(r"unknown_bodies (\d+)", wrk).group(1))
errors = dict((k, int(v)) for k, v in re.findall(r"(connect|read|write|timeout|status) (\d+)", re.search(r"errors .*", wrk).group(0)))
total = sum(n for _, _, n in counts)
by_status = {}
for _, c, n in counts: by_status[c] = by_status.get(c, 0) + n
bad_wrk = sum(n for s, c, n in counts if c not in allowed and s not in window)
in_window = sum(n for s, c, n in counts if c not in allowed and s in window)
client = json.load(open(f"{scratch}/client.json"))
client_status = {}
for r in client: client_status[str(r["status"])] = client_status.get(str(r["status"]), 0) + 1
bad_client = [r for r in client if r["status"] not in allowed and r["second"] not in window]
differ = [r for r in client if not r["same"]]
# Who served what after the kill, from nginx's log (requests that went upstream on the caching front).
points = ring(servers)
alive = set(servers) - {victim}
after = {}
for line in open(f"{scratch}/nginx/access.log"):
    parts = line.rstrip("\n").split("|")
    when, uri, upstreams, ustatus = float(parts[0]), parts[6], parts[3], parts[4]
    if upstreams == "-" or when < kill_time:
        continue
    served_by = upstreams.split(", ")[-1]
    if ustatus.split(", ")[-1] == "200":
        after.setdefault(uri, served_by)
dead_keys = {u: s for u, s in after.items() if owner(points, u, set(servers)) == victim}
moved_as_ring = sum(1 for u, s in dead_keys.items() if s == owner(points, u, alive))
per_survivor = {s: sum(1 for v in dead_keys.values() if v == s) for s in sorted(alive)}
print(json.dumps({"total": total, "by_status": by_status, "bad_wrk": bad_wrk, "in_window": in_window, "unknown": unknown,
    "errors": errors, "client": len(client), "client_status": client_status, "bad_client": len(bad_client),
    "differ": len(differ), "dead_keys": len(dead_keys), "moved_as_ring": moved_as_ring, "per_survivor": per_survivor,
    "kill_second": kill_second, "first_bad": (bad_client[:1] or [None])[0]}))
PY
verdict=$(cat "$scratch/verdict")
get() { python3 -c 'import json,sys; print(eval(sys.argv[2], json.loads(sys.argv[1])))' "$verdict" "$1"; }
read -r _ renders_a0 <<<"$(grep '^a ' "$scratch/renders-before")"; read -r _ renders_a1 <<<"$(grep '^a ' "$scratch/renders-at-kill")"; read -r _ renders_a2 <<<"$(grep '^a ' "$scratch/renders-after")"
read -r _ renders_b0 <<<"$(grep '^b ' "$scratch/renders-before")"; read -r _ renders_b1 <<<"$(grep '^b ' "$scratch/renders-at-kill")"
read -r _ renders_c0 <<<"$(grep '^c ' "$scratch/renders-before")"; read -r _ renders_c1 <<<"$(grep '^c ' "$scratch/renders-at-kill")"; read -r _ renders_c2 <<<"$(grep '^c ' "$scratch/renders-after")"

echo
echo "tier-check: 3 x serve (--workers 1$( [ "$shared" = yes ] && echo ', --cache s3://previews/tier/ on SeaweedFS')) behind nginx $(/usr/sbin/nginx -v 2>&1 | sed 's#.*/##') running Docs/serve/nginx-tier.conf"
printf '%-22s %s\n' "shared cache" "${results[shared]}"
printf '%-22s %s\n' "consistent hashing" "${results[hash]}"
printf '%-22s %s\n' "load (wrk -c8 30 s)" "$(get total) answers: $(get "', '.join(f'{n} x {c}' for c, n in sorted(by_status.items()))"); socket errors $(get "', '.join(f'{k} {v}' for k, v in errors.items() if k != 'status')"); 200 bodies not a reference: $(get unknown)"
printf '%-22s %s\n' "checking client" "$(get client) answers: $(get "', '.join(f'{n} x {c}' for c, n in sorted(client_status.items()))"); 200 bodies differing from preview-loop thumb's: $(get differ)"
printf '%-22s %s\n' "failover" "server $victim (:$victim_port) killed -9 at $(get kill_second) s; statuses other than 200/304/503 outside the window ($(get kill_second)-$(get kill_second+1) s): wrk $(get bad_wrk), client $(get bad_client); inside: $(get in_window)"
printf '%-22s %s\n' "dead server's keys" "$(get dead_keys) of its URLs asked after the kill, answered by the survivors ($(get "', '.join(f'{n} on :{s.split(\":\")[1]}' for s, n in per_survivor.items())"); $(get moved_as_ring) on the ring's next server)"
printf '%-22s %s\n' "renders (/metrics)" "before load / at kill / after: a $renders_a0/$renders_a1/$renders_a2, b $renders_b0/$renders_b1/killed, c $renders_c0/$renders_c1/$renders_c2"

[ "$(get bad_wrk)" = 0 ] || fail "wrk saw $(get bad_wrk) statuses other than 200/304/503 outside the failover window"
[ "$(get bad_client)" = 0 ] || fail "the client saw a status other than 200/304/503 outside the failover window: $(get first_bad)"
[ "$(get unknown)" = 0 ] || fail "wrk got $(get unknown) 200 bodies that are no reference's bytes"
[ "$(get differ)" = 0 ] || fail "$(get differ) 200 bodies differ from preview-loop thumb's for the same URL"
[ "$(get "errors['connect'] + errors['read'] + errors['write'] + errors['timeout']")" = 0 ] || fail "wrk had socket errors against nginx: $(get errors)"
[ "$(get dead_keys)" -gt 0 ] || fail "no URL of the dead server was asked after the kill: the failover was not exercised"
echo "tier-check: all checks passed in $((SECONDS - began)) s"
