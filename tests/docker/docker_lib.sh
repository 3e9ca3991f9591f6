# Helpers shared by the Docker CI scripts (tests/docker/run_docker_test.sh and
# tests/docker/run_compose_test.sh); sourced, not run. The caller defines REPO, WORK (scratch
# dir: dockerd's data root and logs), OUT (its output dir), DOCKER (the client), IMAGE, JOBS,
# TIMES=() and CURRENT_STEP="" (for step), and sets DPID="" (start_dockerd sets it when it
# starts a daemon the caller must stop).
# shellcheck shell=bash

log()  { printf '\n=== %s\n' "$*"; }
fail() { printf '\nFAIL: %s\n' "$*" >&2; exit 1; }

# step NAME CMD...: runs one step and records how long it took in TIMES.
step() {
  local name=$1; shift
  local t0=$SECONDS
  CURRENT_STEP=$name
  log "$name"
  "$@"
  CURRENT_STEP=""
  TIMES+=("$(printf '%-46s %5d s' "$name" $((SECONDS - t0)))")
}

# PostgreSQL 15 and nginx from Debian in one image, for the postgres and balancer services of
# docker/compose.postgres.yaml in CI (tests/docker/compose-deps.Dockerfile).
DEPS_IMAGE=${DENIABLE_COMPOSE_DEPS_IMAGE:-deniable-compose-deps:ci}

install_tools() {
  local need=()
  [ -x /usr/bin/docker ] && [ -x /usr/sbin/dockerd ] || need+=(docker.io)
  command -v debootstrap >/dev/null || need+=(debootstrap)
  command -v docker-compose >/dev/null || need+=(docker-compose)  # validates docker/compose.yaml
  if [ ${#need[@]} -eq 0 ]; then echo "docker.io, debootstrap, docker-compose already installed"; return; fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -o DPkg::Lock::Timeout=600 "${need[@]}" \
    || { apt-get update -o DPkg::Lock::Timeout=600 \
         && apt-get install -y -o DPkg::Lock::Timeout=600 "${need[@]}"; }
}

start_dockerd() {
  if $DOCKER info >/dev/null 2>&1; then
    echo "a Docker daemon already answers: using it (it is left running)"
    return
  fi
  mkdir -p "$WORK/docker-data"
  dockerd --data-root "$WORK/docker-data" --pidfile "$WORK/dockerd.pid" >"$WORK/dockerd.log" 2>&1 &
  DPID=$!
  local i
  for i in $(seq 60); do
    $DOCKER info >/dev/null 2>&1 && { echo "dockerd up (pid $DPID, data root $WORK/docker-data)"; return; }
    kill -0 "$DPID" 2>/dev/null || break
    sleep 1
  done
  tail -n 30 "$WORK/dockerd.log" >&2
  fail "dockerd did not come up"
}

# The mirror and sources the host's apt uses (deb822 or one-line format).
debian_mirror() {
  local m=""
  if [ -r /etc/apt/sources.list.d/debian.sources ]; then
    m=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources)
  elif [ -r /etc/apt/sources.list ]; then
    m=$(awk '$1 == "deb" && $3 == "bookworm" {print $2; exit}' /etc/apt/sources.list)
  fi
  echo "${m:-http://deb.debian.org/debian}"
}

# No registry is reachable: make debian:bookworm with debootstrap, and debian:bookworm-slim
# from it without documentation (like the official slim image), if they are missing.
build_base_images() {
  local rootfs=$WORK/rootfs
  if $DOCKER image inspect debian:bookworm >/dev/null 2>&1; then
    echo "debian:bookworm present"
  else
    rm -rf "$rootfs"
    debootstrap --variant=minbase bookworm "$rootfs" "$(debian_mirror)" >"$WORK/debootstrap.log" 2>&1 \
      || { tail -n 30 "$WORK/debootstrap.log" >&2; fail "debootstrap failed"; }
    if [ -r /etc/apt/sources.list.d/debian.sources ]; then
      rm -f "$rootfs/etc/apt/sources.list"
      cp /etc/apt/sources.list.d/debian.sources "$rootfs/etc/apt/sources.list.d/"
    fi
    chroot "$rootfs" apt-get clean
    rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin
    tar -C "$rootfs" -c . | $DOCKER import --change 'CMD ["bash"]' - debian:bookworm
    rm -rf "$rootfs"
  fi
  if $DOCKER image inspect debian:bookworm-slim >/dev/null 2>&1; then
    echo "debian:bookworm-slim present"
  else
    local cid
    rm -rf "$rootfs"; mkdir -p "$rootfs"
    cid=$($DOCKER create debian:bookworm)
    $DOCKER export "$cid" | tar -C "$rootfs" -x
    $DOCKER rm "$cid" >/dev/null
    rm -f "$rootfs/.dockerenv"
    find "$rootfs/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
    find "$rootfs/usr/share/doc" -mindepth 1 -type d -empty -delete
    rm -rf "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* "$rootfs"/usr/share/lintian \
           "$rootfs"/usr/share/groff/* "$rootfs"/var/cache/debconf/*-old "$rootfs"/var/log/*.log
    find "$rootfs/usr/share/locale" -mindepth 1 -maxdepth 1 -not -name locale.alias -exec rm -rf {} +
    printf '%s\n' \
      'path-exclude /usr/share/doc/*' 'path-include /usr/share/doc/*/copyright' \
      'path-exclude /usr/share/man/*' 'path-exclude /usr/share/info/*' \
      'path-exclude /usr/share/locale/*' 'path-include /usr/share/locale/locale.alias' \
      'path-exclude /usr/share/lintian/*' 'path-exclude /usr/share/groff/*' \
      >"$rootfs/etc/dpkg/dpkg.cfg.d/docker-slim"
    echo 'Acquire::Languages "none";' >"$rootfs/etc/apt/apt.conf.d/docker-no-languages"
    tar -C "$rootfs" -c . | $DOCKER import --change 'CMD ["bash"]' - debian:bookworm-slim
    rm -rf "$rootfs"
  fi
  $DOCKER image ls debian
}

build_image() {
  # docker/build.sh: the Dockerfile with the OCI labels' build args (version from CMake).
  BUILT_REVISION=$(git -C "$REPO" rev-parse HEAD)  # the label must name this commit
  # SRC_DIR: compile at this checkout's path, as the host build does, so that the objects in a
  # .ccache-seed/ (tests/docker/prebuild.sh) are hits.
  if ! DOCKER=$DOCKER DENIABLE_BUILD_JOBS="$JOBS" "$REPO/docker/build.sh" --progress=plain \
       --build-arg SRC_DIR="$REPO" -t "$IMAGE" >"$OUT/build.log" 2>&1; then
    tail -n 80 "$OUT/build.log" >&2
    fail "docker build failed (full log: $OUT/build.log)"
  fi
  grep -A40 -- '--- runtime packages' "$OUT/build.log" | grep -E '^#[0-9]+ [0-9.]+ ' | head -n 40 || true
  local bytes
  bytes=$($DOCKER image inspect -f '{{.Size}}' "$IMAGE")
  IMAGE_SIZE="$((bytes / 1000000)) MB ($bytes bytes)"
  echo "image size: $IMAGE_SIZE"
  $DOCKER history --format '{{.Size}}\t{{.CreatedBy}}' "$IMAGE" | cut -c1-150
}


# The compose deps image (Docker's layer cache keeps it between runs).
build_deps_image() {
  $DOCKER build --progress=plain -t "$DEPS_IMAGE" - <"$REPO/tests/docker/compose-deps.Dockerfile" \
    >"$OUT/deps-build.log" 2>&1 || { tail -n 40 "$OUT/deps-build.log" >&2; fail "building $DEPS_IMAGE failed"; }
  echo "$DEPS_IMAGE: $(($($DOCKER image inspect -f '{{.Size}}' "$DEPS_IMAGE") / 1000000)) MB"
}

# Sets CLI to the host's deniable CLI: $DENIABLE_CLI, else the build tree's, else the one in
# $IMAGE copied to $OUT; fails when it cannot run here (a missing shared library).
pick_cli() {
  if [ -n "${DENIABLE_CLI:-}" ]; then
    CLI=$DENIABLE_CLI
  elif [ -x "$REPO/build/tools/deniable" ]; then
    CLI=$REPO/build/tools/deniable
  else
    local cid
    cid=$($DOCKER create "$IMAGE")
    $DOCKER cp "$cid:/usr/local/bin/deniable" "$OUT/deniable"
    $DOCKER rm "$cid" >/dev/null
    CLI=$OUT/deniable
  fi
  [ -x "$CLI" ] || fail "no CLI at $CLI"
  echo "host CLI: $CLI"
  if ldd "$CLI" | grep -F 'not found'; then fail "the host CLI misses shared libraries"; fi
}
