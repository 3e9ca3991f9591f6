#!/usr/bin/env bash
# CI step for docker/compose.postgres.yaml (issue 12, "Deployment"): PostgreSQL, two collectors
# and nginx balancing gRPC between them, brought up for real and checked for exact counts while
# a collector dies.
#
#   tests/docker/run_compose_test.sh [CHILE_CSV]
#
# Steps: start dockerd unless one answers (as run_docker_test.sh, same data root, so the images
# are shared); reuse the collector image run_docker_test.sh built (same tag) when it was built
# from this commit, else build it; build deniable-compose-deps:ci (Debian's postgresql-15 and
# nginx, tests/docker/compose-deps.Dockerfile; from Docker's cache when tests/docker/prebuild.sh
# or an earlier run built it) for the postgres and balancer services; `docker-compose up` under a project name of its own on a free
# port; wait until all four services are healthy and a health check passes through nginx;
# replay the Chile survey through nginx (2532 devices, one report each); check n = 2532, that
# both collectors stored reports (nginx's log and the per-collector count shards), and that in
# PostgreSQL the stored reports equal the counts; SIGKILL collector2 (`docker-compose kill`);
# replay the survey again through nginx into a second metric: it must succeed (no
# DEADLINE_EXCEEDED or UNAVAILABLE), its n must be 2532 and the first metric's n and yes count
# unchanged, reports again equal to counts in PostgreSQL; start collector2 again, wait for it
# and check that nginx routes to it again. The project (containers, network, volume) is removed
# on every exit. Any failed check exits non-zero.
#
# Environment (all optional):
#   DENIABLE_CHILE_CSV     the survey CSV (default $REPO/tests/data/chile-plebiscite-1988.csv;
#                          the first argument wins)
#   DENIABLE_DOCKER_WORK   scratch dir for dockerd's data root and logs (default
#                          /tmp/deniable-docker-ci, shared with run_docker_test.sh)
#   DENIABLE_IMAGE         collector image (default deniable-server:ci, run_docker_test.sh's tag)
#   DENIABLE_CLI           CLI on the host (default $REPO/build/tools/deniable if it exists,
#                          else the one in the image)
#   DENIABLE_COMPOSE_PORT  host port of the balancer on 127.0.0.1 (default: a free port)
#   DENIABLE_BUILD_JOBS    compile jobs if the image must be built (default 2)
#   DENIABLE_COMPOSE_DEPS_IMAGE  tag of the PostgreSQL + nginx image (default deniable-compose-deps:ci)
set -Eeuo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CSV=${1:-${DENIABLE_CHILE_CSV:-$REPO/tests/data/chile-plebiscite-1988.csv}}
WORK=${DENIABLE_DOCKER_WORK:-/tmp/deniable-docker-ci}
IMAGE=${DENIABLE_IMAGE:-deniable-server:ci}
JOBS=${DENIABLE_BUILD_JOBS:-2}
COMPOSE_FILE=$REPO/docker/compose.postgres.yaml
PROJECT=deniable-compose-ci-$$
METRIC1=chile_vote_yes
METRIC2=chile_vote_yes_after_kill
DOCKER=/usr/bin/docker
export DOCKER_BUILDKIT=1

mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
OUT=$WORK/compose-out-$$
mkdir -p "$OUT"

T_START=$SECONDS
TIMES=()
DPID=""
CURRENT_STEP=""
UP=0

# shellcheck source=tests/docker/docker_lib.sh
. "$REPO/tests/docker/docker_lib.sh"

compose() {
  DENIABLE_IMAGE=$IMAGE DENIABLE_PORT=$PORT PGPASSWORD=$PGPASSWORD_CI \
    DENIABLE_HTTP_PORT=$HTTP_PORT DENIABLE_HTTP_PORT2=$HTTP_PORT2 \
    DENIABLE_POSTGRES_IMAGE=$DEPS_IMAGE DENIABLE_BALANCER_IMAGE=$DEPS_IMAGE \
    DENIABLE_PG_VOLUME="$PROJECT-pg" \
    docker-compose -p "$PROJECT" -f "$COMPOSE_FILE" "$@"
}

cleanup() {
  local rc=$?
  set +e
  if [ "$UP" = 1 ]; then
    if [ "$rc" -ne 0 ]; then
      printf '\n--- service logs (last 40 lines each)\n' >&2
      compose ps >&2
      local s
      for s in postgres collector1 collector2 balancer; do
        compose logs --no-color --tail 25 "$s" >&2 2>&1
      done
    fi
    compose down -v --remove-orphans -t 10 >"$OUT/down.log" 2>&1 \
      || { cat "$OUT/down.log" >&2; echo "docker-compose down failed" >&2; }
  fi
  if [ -n "$DPID" ]; then
    kill "$DPID" 2>/dev/null
    for _ in $(seq 30); do kill -0 "$DPID" 2>/dev/null || break; sleep 1; done
    kill -9 "$DPID" 2>/dev/null
    wait "$DPID" 2>/dev/null
  fi
  printf '\n--- compose CI step: seconds per step\n'
  local t; for t in "${TIMES[@]}"; do printf '  %s\n' "$t"; done
  [ -z "$CURRENT_STEP" ] || printf '  %-46s %s\n' "$CURRENT_STEP" "FAILED"
  printf '  %-46s %5d s\n' "total" $((SECONDS - T_START))
  if [ "$rc" -eq 0 ]; then
    rm -rf "$OUT"
    echo "compose CI step: PASS"
  else
    echo "compose CI step: FAIL (exit $rc; outputs in $OUT)" >&2
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[ "$(id -u)" -eq 0 ] || fail "run as root (dockerd needs it)"
[ -r "$CSV" ] || fail "Chile CSV not found: $CSV"
ROWS=$(($(grep -c . "$CSV") - 1))
PORT=${DENIABLE_COMPOSE_PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
TARGET=127.0.0.1:$PORT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
HTTP_PORT=$(free_port)    # collector1's HTTP listener (dashboard, /metrics), on loopback
HTTP_PORT2=$(free_port)   # collector2's
PGPASSWORD_CI=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')


# ---------------------------------------------------------------------------------------
# The image run_docker_test.sh built, when its revision label names this commit; else build it
# (docker's layer cache makes that quick when only the label differs).
image_ready() {
  local want revision
  want=$(git -C "$REPO" rev-parse HEAD)
  if [ -n "${DENIABLE_IMAGE:-}" ] && $DOCKER image inspect "$IMAGE" >/dev/null 2>&1; then
    echo "using $IMAGE as given (DENIABLE_IMAGE)"
    return
  fi
  revision=$($DOCKER image inspect -f '{{index .Config.Labels "org.opencontainers.image.revision"}}' \
               "$IMAGE" 2>/dev/null || true)
  if [ "$revision" = "$want" ]; then
    echo "reusing $IMAGE (built from $revision by run_docker_test.sh)"
    return
  fi
  echo "$IMAGE ${revision:+is from $revision, not $want}${revision:-is absent}: building it"
  build_base_images
  build_image
}

deps_image() { build_deps_image; }

pick_compose_cli() {
  pick_cli
  echo "balancer on $TARGET, project $PROJECT"
}

compose_up() {
  UP=1
  compose up -d --no-build >"$OUT/up.log" 2>&1 || { cat "$OUT/up.log" >&2; fail "docker-compose up failed"; }
  cat "$OUT/up.log"
  local s
  for s in postgres collector1 collector2 balancer; do CID[$s]=$(compose ps -q "$s"); done
}

# Container ids, read once after `up` (docker-compose takes a second or two per call).
declare -A CID=()
container() { echo "${CID[$1]:-$(compose ps -q "$1")}"; }

# wait_healthy SERVICE...: each service's container running and healthy (at most 300 s).
wait_healthy() {
  local s status i
  for s in "$@"; do
    for i in $(seq 300); do
      status=$($DOCKER inspect -f '{{.State.Status}} {{.State.Health.Status}}' "$(container "$s")")
      [ "$status" = "running healthy" ] && break
      case $status in running*|restarting*) ;; *) fail "$s is $status" ;; esac
      sleep 1
    done
    [ "$status" = "running healthy" ] || fail "$s not healthy after 300 s ($status)"
    echo "$s: $status ($((SECONDS - T_START)) s since the start)"
  done
}

# A health check through nginx (docker-proxy resets connections until nginx listens: retry).
wait_balancer() {
  local i
  for i in $(seq 60); do
    "$CLI" health --target="$TARGET" >"$OUT/health.txt" 2>&1 && { echo "through nginx: $(cat "$OUT/health.txt")"; return; }
    sleep 1
  done
  cat "$OUT/health.txt" >&2
  fail "deniable health through nginx ($TARGET) did not succeed"
}

start_all() {
  compose_up
  wait_healthy postgres collector1 collector2 balancer
  wait_balancer
  # Each collector serves the dashboard and its own /metrics by default (loopback-published).
  local port
  for port in "$HTTP_PORT" "$HTTP_PORT2"; do
    curl -fsS --retry 10 --retry-connrefused --retry-delay 1 "http://127.0.0.1:$port/metrics" >"$OUT/metrics-$port.txt" \
      || fail "GET /metrics on 127.0.0.1:$port failed"
    grep -q '^deniable_build_info{version=' "$OUT/metrics-$port.txt" \
      || fail "/metrics on 127.0.0.1:$port lacks build info"
    curl -fsS "http://127.0.0.1:$port/" >"$OUT/dashboard-$port.html" || fail "GET / on $port failed"
    grep -q '<title>Deniable dashboard</title>' "$OUT/dashboard-$port.html" \
      || fail "GET / on 127.0.0.1:$port is not the dashboard"
  done
  echo "HTTP: dashboard and /metrics on 127.0.0.1:$HTTP_PORT and :$HTTP_PORT2"
}

# replay METRIC LABEL: create the two-coin metric and replay the survey through nginx; the
# replay must succeed as a whole (exit 0: every report acknowledged, none rejected).
replay() {
  "$CLI" create-metric --target="$TARGET" --name="$1" --design=two_coin \
    --description="1988 Chilean plebiscite: would vote yes (compose CI)" >"$OUT/create-$2.txt" 2>&1 \
    || { cat "$OUT/create-$2.txt" >&2; fail "create-metric $1 failed"; }
  local t0=$SECONDS
  if ! "$CLI" replay --target="$TARGET" --metric="$1" --csv="$CSV" --column=vote --yes=Y \
       >"$OUT/replay-$2.txt" 2>&1; then
    cat "$OUT/replay-$2.txt" >&2
    fail "replay of $1 through nginx ($2) failed"
  fi
  grep -E '^(reports \(n\)|"yes" bits|prevalence|95 % interval)' "$OUT/replay-$2.txt"
  echo "replay ($2): $ROWS devices in $((SECONDS - t0)) s"
}

json_field() {
  grep -oE "\"$2\"[[:space:]]*:[[:space:]]*\"?[-+0-9.eE]+\"?" "$1" | head -n 1 \
    | sed -E 's/^[^:]*:[[:space:]]*"?//; s/"$//'
}

# prevalence METRIC LABEL: sets N and YES from the collector's answer through nginx.
prevalence() {
  local f=$OUT/prevalence-$2.json
  "$CLI" prevalence --target="$TARGET" --metric="$1" --json >"$f" 2>"$OUT/prevalence-$2.err" \
    || { cat "$OUT/prevalence-$2.err" "$f" >&2; fail "prevalence of $1 ($2) failed"; }
  N=$(json_field "$f" n); YES=$(json_field "$f" yesCount)
  N=${N:-0}; YES=${YES:-0}
  echo "[$2] $1: n=$N yesCount=$YES"
}

psql_value() {
  $DOCKER exec "$(container postgres)" runuser -u postgres -- \
    psql -d deniable -XAt -v ON_ERROR_STOP=1 -c "$1"
}

# In PostgreSQL: stored reports = counted reports (n and yes), and the number of count shards
# (one per collector process that stored reports of the metric). Sets DB_SHARDS.
check_database() {
  local row stored stored_yes counted counted_yes
  row=$(psql_value "SELECT (SELECT count(*) FROM reports r WHERE r.metric_id = m.id),
                           (SELECT count(*) FILTER (WHERE bit) FROM reports r WHERE r.metric_id = m.id),
                           (SELECT coalesce(sum(n), 0) FROM counts c WHERE c.metric_id = m.id),
                           (SELECT coalesce(sum(counter0), 0) FROM counts c WHERE c.metric_id = m.id),
                           (SELECT count(DISTINCT shard) FROM counts c WHERE c.metric_id = m.id)
                    FROM metrics m WHERE m.name = '$1'")
  IFS='|' read -r stored stored_yes counted counted_yes DB_SHARDS <<<"$row"
  echo "PostgreSQL, $1: reports stored $stored (yes $stored_yes), counted $counted (yes $counted_yes), count shards $DB_SHARDS"
  [ "$stored" = "$ROWS" ] || fail "$1: $stored reports stored, $ROWS sent"
  [ "$counted" = "$stored" ] && [ "$counted_yes" = "$stored_yes" ] \
    || fail "$1: counts ($counted, yes $counted_yes) differ from the stored reports ($stored, yes $stored_yes)"
}

# Now, in nanoseconds: `docker logs --since` compares it with the time the daemon read each line.
# A whole second is too coarse: the first replay's last calls, answered by collector2 just before
# the kill, fall in the second of the kill and were counted as answered after it (CI, stop 35).
now_rfc3339() {
  date -u +%Y-%m-%dT%H:%M:%S.%NZ
}

# nginx's access log: the collector addresses that answered SubmitReports with gRPC status 0
# since the given time (docker-compose logs --since needs docker-compose 1.29).
answered_by() {
  $DOCKER logs --since "$1" "$(container balancer)" 2>/dev/null \
    | grep -E 'SubmitReports.* grpc_status=0 ' \
    | sed -nE 's/.* upstream=([^ ]*, )?([0-9.]+:[0-9]+) .*/\2/p' | sort | uniq -c
}

address_of() {
  $DOCKER inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$(container "$1")"
}

first_replay() {
  SINCE1=$(now_rfc3339)
  replay "$METRIC1" first
}

check_first() {
  prevalence "$METRIC1" first
  [ "$N" = "$ROWS" ] || fail "$METRIC1: n=$N after replaying $ROWS devices"
  N1=$N; YES1=$YES
  check_database "$METRIC1"
  [ "$DB_SHARDS" -ge 2 ] || fail "$METRIC1: only $DB_SHARDS count shard(s): nginx did not spread the calls over both collectors"
  C1=$(address_of collector1); C2=$(address_of collector2)
  echo "collector1 $C1, collector2 $C2; SubmitReports answered (calls, collector):"
  answered_by "$SINCE1" | tee "$OUT/answered-first.txt"
  grep -q " $C1:50051\$" "$OUT/answered-first.txt" && grep -q " $C2:50051\$" "$OUT/answered-first.txt" \
    || fail "nginx did not route SubmitReports to both collectors"
}

kill_collector2() {
  compose kill collector2 2>&1
  local status
  status=$($DOCKER inspect -f '{{.State.Status}} exit={{.State.ExitCode}}' "$(container collector2)")
  echo "collector2: $status"
  [ "$status" = "exited exit=137" ] || fail "collector2 is '$status' after SIGKILL, expected exited with 137"
}

second_replay() {
  SINCE2=$(now_rfc3339)
  replay "$METRIC2" after-kill
}

check_second() {
  prevalence "$METRIC2" after-kill
  [ "$N" = "$ROWS" ] || fail "$METRIC2: n=$N after replaying $ROWS devices with collector2 dead"
  prevalence "$METRIC1" first-again
  [ "$N" = "$N1" ] && [ "$YES" = "$YES1" ] \
    || fail "$METRIC1 changed while collector2 was dead: n=$N yesCount=$YES, was n=$N1 yesCount=$YES1"
  check_database "$METRIC2"
  check_database "$METRIC1"
  echo "SubmitReports answered after the kill (calls, collector):"
  answered_by "$SINCE2" | tee "$OUT/answered-second.txt"
  grep -q " $C1:50051\$" "$OUT/answered-second.txt" \
    || fail "nginx's log shows no SubmitReports answered by collector1 since $SINCE2"
  if grep -q " $C2:50051\$" "$OUT/answered-second.txt"; then
    echo "nginx's lines for them:"
    $DOCKER logs --timestamps --since "$SINCE2" "$(container balancer)" 2>/dev/null \
      | grep -E "SubmitReports.* upstream=([^ ]*, )?$C2:50051 .*grpc_status=0 " | head -n 20
    fail "a call was answered by the dead collector2 (killed before $SINCE2)"
  fi
}

restart_collector2() {
  compose start collector2 2>&1
  wait_healthy collector2
  [ "$(address_of collector2)" = "$C2" ] || echo "note: collector2's address changed to $(address_of collector2)"
}

# Once nginx's fail_timeout (10 s) has passed, calls reach collector2 again.
routed_again() {
  local since i
  since=$(now_rfc3339)
  for i in $(seq 40); do
    "$CLI" prevalence --target="$TARGET" --metric="$METRIC1" --json >"$OUT/prevalence-restarted.json" \
      2>"$OUT/prevalence-restarted.err" || { cat "$OUT/prevalence-restarted.err" >&2; fail "prevalence after the restart failed"; }
    [ "$(json_field "$OUT/prevalence-restarted.json" n)" = "$N1" ] || fail "$METRIC1: n changed after the restart"
    if $DOCKER logs --since "$since" "$(container balancer)" 2>/dev/null \
         | grep -E "GetPrevalence.* upstream=([^ ]*, )?$C2:50051 .*grpc_status=0 " >/dev/null; then
      echo "nginx routes to collector2 again after $i queries; $METRIC1 still n=$N1"
      return
    fi
    sleep 0.5
  done
  fail "no call reached the restarted collector2 within 40 queries"
}

step "install docker.io, docker-compose"        install_tools
step "start dockerd"                            start_dockerd
step "collector image $IMAGE"                   image_ready
step "PostgreSQL and nginx image $DEPS_IMAGE"   deps_image
step "pick the host CLI"                        pick_compose_cli
step "compose up, wait for health"              start_all
step "replay Chile survey through nginx"        first_replay
step "n exact, both collectors used"            check_first
step "kill collector2 (SIGKILL)"                kill_collector2
step "replay again through nginx"               second_replay
step "n exact, nothing lost or doubled"         check_second
step "start collector2 again"                   restart_collector2
step "nginx routes to collector2 again"         routed_again
