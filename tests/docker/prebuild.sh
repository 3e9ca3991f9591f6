#!/usr/bin/env bash
# Builds the images of the Docker CI steps ahead of them, so that their build overlaps the
# steps before (.ci/run starts it in the background right after the packages are installed):
#
#   tests/docker/prebuild.sh            start dockerd at nice 19 unless one answers, then build
#                                       debian:bookworm(-slim) if missing, deniable-server:ci
#                                       (docker/build.sh) and deniable-compose-deps:ci
#   tests/docker/prebuild.sh --stop     stop the dockerd it started (by the pid it recorded)
#
# Everything a build runs is a child of dockerd, so at nice 19 the image builds take only the
# CPU the host's build, tests, soak and fuzzing leave idle (ctest and the soak wait a lot,
# libFuzzer uses one core). run_docker_test.sh then rebuilds the image from Docker's cache in
# seconds (only its labels change) and run_compose_test.sh finds both images; they leave a
# daemon that already answers running. Output: $WORK/prebuild-out/.
set -Eeuo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
WORK=${DENIABLE_DOCKER_WORK:-/tmp/deniable-docker-ci}
IMAGE=${DENIABLE_IMAGE:-deniable-server:ci}
JOBS=${DENIABLE_BUILD_JOBS:-2}
DOCKER=/usr/bin/docker
export DOCKER_BUILDKIT=1
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
OUT=$WORK/prebuild-out
PIDFILE=$WORK/prebuild-dockerd.pid

if [ "${1:-}" = --stop ]; then
  [ -s "$PIDFILE" ] || exit 0
  pid=$(cat "$PIDFILE")
  rm -f "$PIDFILE"
  # Only that process, and only if it is still a dockerd (not a reused pid).
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = dockerd ] || exit 0
  kill "$pid" 2>/dev/null || exit 0
  for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || exit 0; sleep 1; done
  kill -9 "$pid" 2>/dev/null || true
  exit 0
fi

rm -rf "$OUT"; mkdir -p "$OUT"
renice -n 19 -p $$ >/dev/null  # this script, debootstrap and a dockerd started below
# shellcheck source=tests/docker/docker_lib.sh
. "$REPO/tests/docker/docker_lib.sh"
# After the library: its failures are this script's own.
fail() { printf 'prebuild: FAIL: %s\n' "$*" >&2; exit 1; }
if ! $DOCKER info >/dev/null 2>&1; then
  mkdir -p "$WORK/docker-data"
  dockerd --data-root "$WORK/docker-data" --pidfile "$WORK/dockerd.pid" \
    >"$WORK/dockerd.log" 2>&1 &
  echo $! >"$PIDFILE"
  for _ in $(seq 60); do $DOCKER info >/dev/null 2>&1 && break; sleep 1; done
  $DOCKER info >/dev/null 2>&1 || { tail -n 30 "$WORK/dockerd.log" >&2; fail "dockerd did not come up"; }
  echo "prebuild: dockerd up at nice 19 (pid $(cat "$PIDFILE"))"
fi
t0=$SECONDS
build_base_images >"$OUT/base.log" 2>&1 || { tail -n 30 "$OUT/base.log" >&2; fail "base images"; }
echo "prebuild: base images in $((SECONDS - t0)) s"
# The compose deps image beside the collector image: it mostly waits for Debian's mirror.
t0=$SECONDS
build_deps_image >"$OUT/deps.txt" 2>&1 &
deps_pid=$!
# The collector image's toolchain stage (Debian's compilers and libraries) now; its compile
# once the host build is done (below).
DOCKER=$DOCKER "$REPO/docker/build.sh" --progress=plain --target toolchain -t deniable-toolchain:ci \
  >"$OUT/toolchain.log" 2>&1 || { tail -n 40 "$OUT/toolchain.log" >&2; fail "toolchain stage"; }
echo "prebuild: toolchain stage in $((SECONDS - t0)) s"
# DENIABLE_BUILT_FILE (set by .ci/run): the file tools/test.sh creates when the host build is
# done. Its ccache then holds every object the image compiles, with the same flags and paths
# (docker/Dockerfile, SRC_DIR), and is copied into the build context as .ccache-seed/, so the
# image's compile is mostly cache hits instead of a third compile of the server.
if [ -n "${DENIABLE_BUILT_FILE:-}" ]; then
  t1=$SECONDS
  while [ ! -e "$DENIABLE_BUILT_FILE" ]; do sleep 2; done
  echo "prebuild: waited $((SECONDS - t1)) s for the host build"
  cache=$(ccache -k cache_dir 2>/dev/null || true)
  if [ -n "$cache" ] && [ -d "$cache" ]; then
    rm -rf "$REPO/.ccache-seed"
    cp -a "$cache" "$REPO/.ccache-seed"
    echo "prebuild: ccache seed $(du -sm "$REPO/.ccache-seed" | cut -f1) MB from $cache"
  fi
fi
t1=$SECONDS
build_image >"$OUT/image.txt" 2>&1 || { cat "$OUT/image.txt" >&2; fail "collector image"; }
echo "prebuild: $IMAGE in $((SECONDS - t1)) s"
grep -E 'cache hit|cache miss|Hits:|Misses:' "$OUT/build.log" | head -n 6 || true
wait "$deps_pid" || { cat "$OUT/deps.txt" >&2; fail "compose deps image"; }
echo "prebuild: $(tail -n 1 "$OUT/deps.txt"), both in $((SECONDS - t0)) s"
