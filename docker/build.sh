#!/usr/bin/env bash
# Builds docker/Dockerfile with its OCI labels filled in from the checkout:
#
#   docker/build.sh [docker build options...]      e.g. docker/build.sh -t deniable-server:0.1.0
#
#   version   CMake's project(VERSION) in CMakeLists.txt (the one place the version lives; the
#             image build checks that the server it compiled reports the same)
#   revision  `git rev-parse HEAD`, with "-dirty" when the work tree has uncommitted changes
#   created   now in UTC (RFC 3339), or SOURCE_DATE_EPOCH when set (reproducible builds)
#   source    DENIABLE_SOURCE_URL, else the git remote "origin", else "unknown"
#
# Environment: DOCKER (the docker client, default `docker`), DENIABLE_BUILD_JOBS (compile jobs
# inside the build, default 2).
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DOCKER=${DOCKER:-docker}

version=$(sed -n 's/^project(deniable VERSION \([0-9][0-9A-Za-z.+-]*\).*/\1/p' "$REPO/CMakeLists.txt")
[ -n "$version" ] || { echo "docker/build.sh: no project(deniable VERSION ...) in CMakeLists.txt" >&2; exit 1; }
revision=unknown
if git -C "$REPO" rev-parse --git-dir >/dev/null 2>&1; then
  revision=$(git -C "$REPO" rev-parse HEAD)
  [ -z "$(git -C "$REPO" status --porcelain --untracked-files=no)" ] || revision="$revision-dirty"
fi
if [ -n "${SOURCE_DATE_EPOCH:-}" ]; then
  created=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
else
  created=$(date -u +%Y-%m-%dT%H:%M:%SZ)
fi
source=${DENIABLE_SOURCE_URL:-$(git -C "$REPO" config --get remote.origin.url 2>/dev/null || echo unknown)}

exec "$DOCKER" build \
  --build-arg VERSION="$version" --build-arg REVISION="$revision" \
  --build-arg CREATED="$created" --build-arg SOURCE="$source" \
  --build-arg BUILD_JOBS="${DENIABLE_BUILD_JOBS:-2}" \
  -f "$REPO/docker/Dockerfile" "$@" "$REPO"
