#!/usr/bin/env bash
# CI step for the Docker deployment (issue 7): build docker/Dockerfile for real and check it.
#
#   tests/docker/run_docker_test.sh [CHILE_CSV]
#
# Steps: install docker.io/debootstrap if missing, start dockerd (data root under a scratch
# dir) unless one already answers, build debian:bookworm(-slim) with debootstrap if missing,
# build the image, run it on a named volume with the port on 127.0.0.1, wait for health,
# replay the Chile survey with the CLI from the host, query the prevalence, `docker restart`,
# query again (same n and counts), replace the container on the same volume, query again,
# stop it (SIGTERM must end it cleanly). Also: the OCI labels (version = the server's --version
# = CMake's project version), both compose files valid with healthchecks and limits, and the
# limits present on a container docker-compose creates. Any failed check exits non-zero.
#
# Environment (all optional):
#   DENIABLE_CHILE_CSV     the survey CSV (default: $REPO/tests/data/chile-plebiscite-1988.csv, in the repository;
#                          the first argument wins over it)
#   DENIABLE_DOCKER_WORK   scratch dir for dockerd's data root and logs (default /tmp/deniable-docker-ci;
#                          kept between runs so the base image and the apt layers stay cached)
#   DENIABLE_DOCKER_PORT   host port published on 127.0.0.1 (default 15051)
#   DENIABLE_IMAGE         image tag to build (default deniable-server:ci)
#   DENIABLE_CLI           CLI to use on the host (default $REPO/build/tools/deniable if it exists,
#                          else the CLI copied out of the image just built)
#   DENIABLE_BUILD_JOBS    compile jobs inside the image build (default 2)
set -Eeuo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CSV=${1:-${DENIABLE_CHILE_CSV:-$REPO/tests/data/chile-plebiscite-1988.csv}}
WORK=${DENIABLE_DOCKER_WORK:-/tmp/deniable-docker-ci}
PORT=${DENIABLE_DOCKER_PORT:-15051}
HTTP_PORT=${DENIABLE_DOCKER_HTTP_PORT:-15080}
IMAGE=${DENIABLE_IMAGE:-deniable-server:ci}
JOBS=${DENIABLE_BUILD_JOBS:-2}
TARGET=127.0.0.1:$PORT
METRIC=chile_vote_yes
NAME=deniable-ci-$$
VOLUME=deniable-ci-data-$$
DOCKER=/usr/bin/docker          # Debian's client: BuildKit works with it (see docs/DOCKER-HERE.md)
export DOCKER_BUILDKIT=1

mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
OUT=$WORK/out
rm -rf "$OUT"; mkdir -p "$OUT"

T_START=$SECONDS
TIMES=()
DPID=""
IMAGE_SIZE="?"
CURRENT_STEP=""

# log, fail, step, install_tools, start_dockerd, build_base_images, build_image: shared with
# tests/docker/run_compose_test.sh.
# shellcheck source=tests/docker/docker_lib.sh
. "$REPO/tests/docker/docker_lib.sh"

summary() {
  printf '\n--- Docker CI step: seconds per step\n'
  local t; for t in "${TIMES[@]}"; do printf '  %s\n' "$t"; done
  [ -z "$CURRENT_STEP" ] || printf '  %-46s %s\n' "$CURRENT_STEP" "FAILED"
  printf '  %-46s %5d s\n' "total" $((SECONDS - T_START))
  printf '  image %s: %s\n' "$IMAGE" "$IMAGE_SIZE"
}

cleanup() {
  local rc=$?
  set +e
  if [ "$rc" -ne 0 ] && [ -x "$DOCKER" ] && $DOCKER inspect "$NAME" >/dev/null 2>&1; then
    printf '\n--- container logs (%s)\n' "$NAME" >&2
    $DOCKER logs --tail 80 "$NAME" >&2 2>&1
  fi
  if [ -x "$DOCKER" ] && $DOCKER info >/dev/null 2>&1; then
    $DOCKER rm -f "$NAME" "$NAME-2" >/dev/null 2>&1
    $DOCKER volume rm -f "$VOLUME" >/dev/null 2>&1
  fi
  if [ -n "$DPID" ]; then
    kill "$DPID" 2>/dev/null
    for _ in $(seq 30); do kill -0 "$DPID" 2>/dev/null || break; sleep 1; done
    kill -9 "$DPID" 2>/dev/null
    wait "$DPID" 2>/dev/null
  fi
  summary
  if [ "$rc" -eq 0 ]; then echo "Docker CI step: PASS"; else echo "Docker CI step: FAIL (exit $rc)" >&2; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[ "$(id -u)" -eq 0 ] || fail "run as root (dockerd and debootstrap need it)"
[ -r "$CSV" ] || fail "Chile CSV not found: $CSV (pass it as the first argument or DENIABLE_CHILE_CSV)"


check_image_config() {
  local user uid vol port hc
  user=$($DOCKER image inspect -f '{{.Config.User}}' "$IMAGE")
  uid=$($DOCKER run --rm --entrypoint id "$IMAGE" -u)
  vol=$($DOCKER image inspect -f '{{range $k, $v := .Config.Volumes}}{{$k}} {{end}}' "$IMAGE")
  port=$($DOCKER image inspect -f '{{range $k, $v := .Config.ExposedPorts}}{{$k}} {{end}}' "$IMAGE")
  hc=$($DOCKER image inspect -f '{{if .Config.Healthcheck}}{{json .Config.Healthcheck.Test}}{{end}}' "$IMAGE")
  echo "user=$user uid=$uid volumes=$vol ports=$port healthcheck=$hc"
  [ -n "$user" ] && [ "$uid" != 0 ] || fail "the image runs as root"
  [[ " $vol " == *" /var/lib/deniable "* ]] || fail "no VOLUME /var/lib/deniable"
  [[ " $port " == *" 50051/tcp "* ]] || fail "port 50051 not exposed"
  [[ " $port " == *" 8080/tcp "* ]] || fail "port 8080 (HTTP) not exposed"
  $DOCKER image inspect -f '{{range .Config.Env}}{{println .}}{{end}}' "$IMAGE" \
    | grep -qx 'DENIABLE_HTTP_LISTEN=0.0.0.0:8080' || fail "the image does not serve HTTP by default"
  [ -n "$hc" ] || fail "no HEALTHCHECK"
  $DOCKER run --rm --entrypoint sh "$IMAGE" -c \
    'test -w /var/lib/deniable && ls -ld /var/lib/deniable' || fail "/var/lib/deniable not writable by the image user"
}

# OCI labels: all seven present; version equals what the image's server prints for --version and
# CMake's project(VERSION); revision is the commit checked out when the build started.
check_labels() {
  local key value version cmake_version revision
  for key in version revision created source licenses title description; do
    value=$($DOCKER image inspect -f "{{index .Config.Labels \"org.opencontainers.image.$key\"}}" "$IMAGE")
    printf '  org.opencontainers.image.%-12s %s\n' "$key" "$value"
    [ -n "$value" ] || fail "label org.opencontainers.image.$key missing"
  done
  value=$($DOCKER image inspect -f '{{index .Config.Labels "org.opencontainers.image.version"}}' "$IMAGE")
  version=$($DOCKER run --rm "$IMAGE" --version | awk '{print $2}')
  cmake_version=$(sed -n 's/^project(deniable VERSION \([^ )]*\).*/\1/p' "$REPO/CMakeLists.txt")
  echo "label version=$value, deniable-server --version: $version, CMakeLists.txt: $cmake_version"
  [ "$value" = "$version" ] || fail "label version $value differs from deniable-server --version $version"
  [ "$value" = "$cmake_version" ] || fail "label version $value differs from CMakeLists.txt $cmake_version"
  revision=$($DOCKER image inspect -f '{{index .Config.Labels "org.opencontainers.image.revision"}}' "$IMAGE")
  [ "${revision%-dirty}" = "$BUILT_REVISION" ] || fail "label revision $revision is not $BUILT_REVISION (HEAD when the build started)"
  $DOCKER image inspect -f '{{index .Config.Labels "org.opencontainers.image.created"}}' "$IMAGE" \
    | grep -qE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$' || fail "label created is not RFC 3339 UTC"
}


start_container() {
  # $1: container name. The ports are published on loopback only. The image's HEALTHCHECK command
  # runs as built; only its interval is shortened (10 s -> 2 s) so CI does not wait 10 s per start.
  # No DENIABLE_HTTP_LISTEN: the image serves HTTP (dashboard, /metrics) on 8080 by default.
  $DOCKER run -d --name "$1" -v "$VOLUME:/var/lib/deniable" -p "127.0.0.1:$PORT:50051" \
    -p "127.0.0.1:$HTTP_PORT:8080" \
    --health-interval=2s --stop-timeout=20 "$IMAGE" >/dev/null
}

# Wait until Docker's HEALTHCHECK says healthy and the host CLI gets SERVING through the port.
wait_healthy() {
  local name=$1 i status=""
  for i in $(seq 120); do
    status=$($DOCKER inspect -f '{{.State.Status}} {{.State.Health.Status}}' "$name")
    case $status in
      "running healthy") break ;;
      running*) ;;
      *) fail "container $name is $status" ;;
    esac
    sleep 1
  done
  [ "$status" = "running healthy" ] || fail "container $name not healthy after 120 s ($status)"
  echo "docker: $name is $status after ~${i} s"
  # docker-proxy resets connections made before the server listens: retry.
  for i in $(seq 30); do
    if "$CLI" health --target="$TARGET" >"$OUT/health.txt" 2>&1; then
      echo "host CLI: health SERVING via $TARGET ($(tr '\n' ' ' <"$OUT/health.txt"))"
      return
    fi
    sleep 1
  done
  cat "$OUT/health.txt" >&2
  fail "deniable health --target=$TARGET did not succeed"
}

create_and_replay() {
  if ! "$CLI" create-metric --target="$TARGET" --name="$METRIC" --design=two_coin \
       --description="1988 Chilean plebiscite: would vote yes (CI replay)" >"$OUT/create.txt" 2>&1; then
    if grep -qi 'already' "$OUT/create.txt"; then
      echo "metric $METRIC already exists"
    else
      cat "$OUT/create.txt" >&2; fail "create-metric failed"
    fi
  fi
  cat "$OUT/create.txt"
  if ! "$CLI" replay --target="$TARGET" --metric="$METRIC" --csv="$CSV" --column=vote --yes=Y \
       >"$OUT/replay.txt" 2>&1; then
    cat "$OUT/replay.txt" >&2; fail "replay failed"
  fi
  tail -n 20 "$OUT/replay.txt"
}

# json_field FILE FIELD: a scalar of the proto3 JSON (int64 fields are quoted strings).
json_field() {
  grep -oE "\"$2\"[[:space:]]*:[[:space:]]*\"?[-+0-9.eE]+\"?" "$1" | head -n 1 \
    | sed -E 's/^[^:]*:[[:space:]]*"?//; s/"$//'
}

# query LABEL: prevalence as JSON into $OUT/prevalence-LABEL.json; sets N and YES.
query() {
  local f=$OUT/prevalence-$1.json
  "$CLI" prevalence --target="$TARGET" --metric="$METRIC" --json >"$f" 2>"$OUT/prevalence-$1.err" \
    || { cat "$OUT/prevalence-$1.err" "$f" >&2; fail "prevalence query ($1) failed"; }
  cat "$f"; echo
  N=$(json_field "$f" n); YES=$(json_field "$f" yesCount)
  N=${N:-0}; YES=${YES:-0}   # proto3 JSON omits zero values
  echo "[$1] n=$N yesCount=$YES estimateUnbiased=$(json_field "$f" estimateUnbiased)" \
       "ci=[$(json_field "$f" ciLower), $(json_field "$f" ciUpper)]"
}

first_query() {
  query before
  N0=$N; YES0=$YES
  local rows
  rows=$(($(grep -c . "$CSV") - 1))
  echo "CSV data rows: $rows"
  [ "$N0" -gt 0 ] || fail "no reports acknowledged (n=$N0)"
  [ "$N0" -le "$rows" ] || fail "n=$N0 exceeds the $rows rows of the CSV"
  [ "$N0" -eq "$rows" ] || echo "note: n=$N0 differs from the $rows CSV rows (rows skipped by replay?)"
}

# The HTTP listener: /metrics counts the replayed reports, the dashboard page and the JSON API.
http_checks() {
  local base=http://127.0.0.1:$HTTP_PORT
  curl -fsS "$base/metrics" >"$OUT/metrics.txt" || fail "GET /metrics failed"
  grep -q '^deniable_build_info{version=' "$OUT/metrics.txt" || fail "/metrics lacks build info"
  grep -q '^deniable_commit_seconds_count' "$OUT/metrics.txt" || fail "/metrics lacks commit histogram"
  # To a file first: with pipefail, `curl | grep -q` fails when grep stops reading early (curl 23).
  curl -fsS "$base/" >"$OUT/dashboard.html" || fail "GET / failed"
  grep -q '<title>Deniable dashboard</title>' "$OUT/dashboard.html" || fail "GET / is not the dashboard"
  curl -fsS "$base/chart.min.js" >/dev/null || fail "GET /chart.min.js failed"
  curl -fsS -H 'Content-Type: application/json' "$base/v1/QueryService/GetPrevalence" -d "{\"metric\":\"$METRIC\"}" >"$OUT/http.json" \
    || fail "POST /v1/QueryService/GetPrevalence failed"
  # int64 counts are JSON numbers over HTTP (docs/http.md).
  python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["n"] == int(sys.argv[2])' \
    "$OUT/http.json" "$N0" || fail "HTTP prevalence n differs from gRPC n=$N0"
  echo "HTTP: /metrics, dashboard and JSON prevalence (n=$N0) OK"
}

same_counts() {
  query "$1"
  [ "$N" = "$N0" ] && [ "$YES" = "$YES0" ] \
    || fail "after $1: n=$N yesCount=$YES, expected n=$N0 yesCount=$YES0"
  echo "after $1: same n=$N and yesCount=$YES"
}

start_first() {
  start_container "$NAME"
  wait_healthy "$NAME"
}

restart_container() {
  local t0=$SECONDS
  $DOCKER restart -t 20 "$NAME" >/dev/null
  local dt=$((SECONDS - t0))
  echo "docker restart took ${dt} s"
  # Without a SIGTERM handler PID 1 ignores the signal and Docker waits out the 20 s timeout.
  [ "$dt" -lt 20 ] || fail "the server did not stop on SIGTERM within 20 s"
  wait_healthy "$NAME"
}

replace_container() {
  # A new container on the same named volume: the data lives on the volume, not in the container.
  $DOCKER rm -f "$NAME" >/dev/null
  start_container "$NAME-2"
  NAME=$NAME-2
  wait_healthy "$NAME"
  $DOCKER run --rm -v "$VOLUME:/data:ro" --entrypoint ls "$IMAGE" -ln /data
}

stop_container() {
  local t0=$SECONDS code
  $DOCKER stop -t 20 "$NAME" >/dev/null
  code=$($DOCKER inspect -f '{{.State.ExitCode}}' "$NAME")
  echo "docker stop took $((SECONDS - t0)) s, exit code $code"
  $DOCKER logs --tail 5 "$NAME" 2>&1 | sed 's/^/  log: /'
  [ "$code" != 137 ] || fail "the server was killed (exit 137): SIGTERM not handled"
  [ "$code" = 0 ] || fail "the server exited with $code after SIGTERM"
}

# Both compose files are valid, and every long-running service has a healthcheck and memory,
# CPU and process limits in the configuration docker-compose resolves.
check_compose() {
  if ! command -v docker-compose >/dev/null; then
    echo "docker-compose not installed: compose files not validated"
    return
  fi
  local f
  for f in compose.yaml compose.postgres.yaml; do
    DENIABLE_DATA_DIR=$(dirname "$CSV") docker-compose -f "$REPO/docker/$f" config >"$OUT/$f" \
      || fail "docker/$f is not valid"
    python3 - "$OUT/$f" <<'PY' || fail "docker/$f: a service lacks a healthcheck or limits"
import sys, yaml
services = yaml.safe_load(open(sys.argv[1]))["services"]
for name, s in services.items():
    if "demo" in s.get("profiles", []):
        continue
    missing = [k for k in ("healthcheck", "mem_limit", "cpus", "pids_limit") if k not in s]
    assert not missing and not s["healthcheck"].get("disable"), f"{name}: missing {missing}"
    if name in ("server", "collector1", "collector2"):
        # The dashboard and /metrics by default, published on loopback only.
        env = s.get("environment", {})
        assert env.get("DENIABLE_HTTP_LISTEN") == "0.0.0.0:8080", f"{name}: no HTTP listener"
        def host_and_target(p):  # "127.0.0.1:8080:8080/tcp" (docker-compose 1.29) or long form
            if isinstance(p, dict):
                return p.get("host_ip"), int(p["target"])
            parts = str(p).split("/")[0].split(":")
            return (parts[0] if len(parts) == 3 else None), int(parts[-1])
        http = [host_and_target(p) for p in s.get("ports", []) if host_and_target(p)[1] == 8080]
        assert http and all(ip == "127.0.0.1" for ip, _ in http), \
            f"{name}: HTTP port not published on 127.0.0.1: {s.get('ports')}"
    print(f"  {name}: mem_limit={s['mem_limit']} cpus={s['cpus']} pids_limit={s['pids_limit']}"
          f" healthcheck={s['healthcheck']['test']}")
PY
    echo "docker/$f is valid"
  done
}

# The limits take effect: a container created by docker-compose from compose.yaml carries them.
check_compose_limits() {
  command -v docker-compose >/dev/null || { echo "docker-compose not installed"; return; }
  local project=deniable-ci-$$ cid mem cpus pids
  DENIABLE_IMAGE=$IMAGE DENIABLE_PORT=$((PORT + 1)) DENIABLE_HTTP_PORT=$((HTTP_PORT + 1)) \
    DENIABLE_VOLUME="$project-data" \
    docker-compose -p "$project" -f "$REPO/docker/compose.yaml" up --no-start --no-build server \
    >"$OUT/compose-create.log" 2>&1 || { cat "$OUT/compose-create.log" >&2; fail "docker-compose create failed"; }
  cid=$($DOCKER ps -aq --filter "label=com.docker.compose.project=$project")
  read -r mem cpus pids < <($DOCKER inspect -f '{{.HostConfig.Memory}} {{.HostConfig.NanoCpus}} {{.HostConfig.PidsLimit}}' "$cid")
  DENIABLE_IMAGE=$IMAGE DENIABLE_VOLUME="$project-data" \
    docker-compose -p "$project" -f "$REPO/docker/compose.yaml" down -v \
    >/dev/null 2>&1 || true
  echo "compose server container: Memory=$mem NanoCpus=$cpus PidsLimit=$pids"
  [ "$mem" = $((1024 * 1024 * 1024)) ] && [ "$cpus" = 2000000000 ] && [ "$pids" = 512 ] \
    || fail "the compose limits did not reach the container"
}

step "install docker.io and debootstrap"        install_tools
step "start dockerd"                            start_dockerd
step "base images (debootstrap if missing)"     build_base_images
step "docker build $IMAGE"                      build_image
step "image config (non-root, volume, port)"    check_image_config
step "OCI labels (version = --version)"         check_labels
step "validate docker/compose*.yaml"            check_compose
step "pick the host CLI"                        pick_cli
$DOCKER volume create "$VOLUME" >/dev/null
step "run container, wait for health"           start_first
step "create metric, replay Chile survey"       create_and_replay
step "query prevalence"                         first_query
step "HTTP /metrics, dashboard, JSON API"       http_checks
step "docker restart, wait for health"          restart_container
step "query after restart"                      same_counts restart
step "new container on the same volume"         replace_container
step "query in the new container"               same_counts new-container
step "docker stop (SIGTERM)"                    stop_container
step "compose limits reach the container"       check_compose_limits
