#!/usr/bin/env bash
# Installs the SDK from BUILD_DIR into a temporary prefix, then configures, builds and runs the
# consumer project against that prefix only (find_package(deniable) + deniable::client).
# Usage: run.sh BUILD_DIR CONSUMER_SOURCE_DIR
set -euo pipefail
build=$1 source=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >"$work/install.log"
test -f "$work/prefix/include/deniable/client/reporter.h"
test -f "$work/prefix/include/deniable/v1/report_service.pb.h"
test -f "$work/prefix/share/deniable/proto/deniable/v1/report_service.proto"
ls "$work"/prefix/lib*/cmake/deniable/deniableConfig.cmake >/dev/null
cmake -S "$source" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
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
