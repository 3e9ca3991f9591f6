#!/usr/bin/env bash
# The test command: installs what is missing, builds everything (warnings are errors) and runs
# the whole test suite with CTest. Build tree: build/ (override with DENIABLE_BUILD_DIR).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${DENIABLE_BUILD_DIR:-$root/build}
bash "$root/tools/install-deps.sh"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDENIABLE_WERROR=ON
cmake --build "$build" -j"$(nproc)"
ctest --test-dir "$build" -j"$(nproc)" --output-on-failure
