#!/usr/bin/env bash
# Installs Debian's clang-14 and its sanitizer and libFuzzer runtime (libclang-rt-14-dev) when
# missing: what the fuzzing (tests/fuzz/run_fuzz.sh) and sanitizer (tests/sanitize/
# run_sanitizers.sh) builds need. tools/install-deps.sh --ci installs them too; this lets either
# script run alone. Needs root (or sudo) only when something is missing.
set -euo pipefail
for p in clang-14 libclang-rt-14-dev; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    sudo=; [ "$(id -u)" -eq 0 ] || sudo=sudo
    $sudo apt-get update
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -o DPkg::Lock::Timeout=600 \
      clang-14 libclang-rt-14-dev
    break
  fi
done
