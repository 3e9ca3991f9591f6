#!/usr/bin/env bash
# Installs the SDK from BUILD_DIR into a temporary prefix, then configures, builds and runs the
# consumer project against that prefix only (find_package(deniable) + deniable::client).
# The C++ consumer's CMakeLists.txt is README.md's ```cmake block, exactly as written (no
# CMAKE_CXX_STANDARD: the installed targets must carry C++20); docs/sdk.md must show the same block.
# Usage: run.sh BUILD_DIR CONSUMER_SOURCE_DIR REPO_SOURCE_DIR
set -euo pipefail
build=$1 source=$2 repo=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake_block() {  # the first ```cmake block of $1
  awk '/^```cmake$/ { inside = 1; next } inside && /^```$/ { exit } inside { print }' "$1"
}
mkdir "$work/app"
cmake_block "$repo/README.md" >"$work/app/CMakeLists.txt"
grep -q 'target_link_libraries(app deniable::client)' "$work/app/CMakeLists.txt" ||
  { echo "README.md: no \`\`\`cmake block linking deniable::client" >&2; exit 1; }
if ! cmake_block "$repo/docs/sdk.md" | diff -u "$work/app/CMakeLists.txt" - >&2; then
  echo "docs/sdk.md: its \`\`\`cmake block differs from README.md's" >&2
  exit 1
fi
cp "$source/main.cc" "$work/app/"
cmake --install "$build" --prefix "$work/prefix" >"$work/install.log"
test -f "$work/prefix/include/deniable/client/reporter.h"
test -f "$work/prefix/include/deniable/v1/report_service.pb.h"
test -f "$work/prefix/share/deniable/proto/deniable/v1/report_service.proto"
ls "$work"/prefix/lib*/cmake/deniable/deniableConfig.cmake >/dev/null
cmake -S "$work/app" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/prefix" >"$work/configure.log" || { cat "$work/configure.log"; exit 1; }
cmake --build "$work/build" -j2
"$work/build/app" "$work/device.db"

# The C API, both ways a C project finds it: CMake (find_package(deniable-c) + deniable::c) and
# pkg-config (deniable-c.pc); each program runs against the installed libdeniable_c alone.
ls "$work"/prefix/lib*/cmake/deniable-c/deniable-cConfig.cmake >/dev/null
pc_dir=$(dirname "$(ls "$work"/prefix/lib*/pkgconfig/deniable-c.pc)")
lib_dir=$(dirname "$pc_dir")
cmake -S "$source/c" -B "$work/build-c" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/prefix" >"$work/configure-c.log" || { cat "$work/configure-c.log"; exit 1; }
cmake --build "$work/build-c" -j2
LD_LIBRARY_PATH=$lib_dir "$work/build-c/app_c" "$work/device-c.db"
# shellcheck disable=SC2046  # pkg-config prints several flags
cc -std=c11 -Wall -Werror -o "$work/app_pc" "$source/c/main.c" \
  $(PKG_CONFIG_PATH=$pc_dir pkg-config --cflags --libs deniable-c)
LD_LIBRARY_PATH=$lib_dir "$work/app_pc" "$work/device-pc.db"
