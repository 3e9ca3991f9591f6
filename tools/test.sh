#!/usr/bin/env bash
# The test command: installs what is missing, builds everything (warnings are errors) and runs
# the whole test suite with CTest. Build tree: build/ (override with DENIABLE_BUILD_DIR).
# DENIABLE_BUILD_BENCH=OFF leaves out the benchmark programs no test runs (CI does; default ON).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${DENIABLE_BUILD_DIR:-$root/build}
bash "$root/tools/install-deps.sh"
# -O2 without debug info, in both this script and tools/demo.sh (they share build/): on the
# 2-core CI machines a build without ccache takes about 7 min this way and about twice that
# with -g (gRPC and protobuf headers make the debug info large). Configure your own build tree
# with -DCMAKE_BUILD_TYPE=RelWithDebInfo (the default) to debug.
# ccache (installed by install-deps.sh) keeps every object a later build can reuse: a second
# build of an unchanged tree takes seconds (docs/ci.md).
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" -DDENIABLE_WERROR=ON \
  -DDENIABLE_BUILD_BENCH="${DENIABLE_BUILD_BENCH:-ON}" "${launcher[@]}"
# The locale is part of ccache's key (compilers translate their messages): the build runs with
# LANG=C.UTF-8 and no LC_* override, as docker/Dockerfile's compile does, so that the image's
# compile finds this build's objects (docs/ci.md).
env -u LC_ALL -u LC_CTYPE -u LC_MESSAGES LANG=C.UTF-8 cmake --build "$build" -j"$(nproc)"
# DENIABLE_BUILT_FILE: a file to create once the build is done (.ci/run: its image build then
# takes its objects from this build's ccache, tests/docker/prebuild.sh).
[ -z "${DENIABLE_BUILT_FILE:-}" ] || touch "$DENIABLE_BUILT_FILE"
# Three test jobs per core: most tests wait on servers, browsers and timeouts. The CPU-heavy
# ones count as two jobs and the longest start first (cmake/DeniableTestSchedule.cmake).
ctest --test-dir "$build" -j"${DENIABLE_CTEST_JOBS:-$(( $(nproc) * 3 ))}" --output-on-failure
