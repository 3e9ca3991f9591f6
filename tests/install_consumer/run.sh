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
