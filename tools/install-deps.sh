#!/usr/bin/env bash
# Installs the Debian 12 packages Deniable builds, tests and runs with. Idempotent: does nothing
# when they are all present. Needs root (or sudo).
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config git python3 sqlite3
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libabsl-dev
  libsqlite3-dev libssl-dev libboost-dev libspdlog-dev libcsv-dev
  libgtest-dev libgmock-dev libbenchmark-dev clang-format
  openssl python3-grpcio python3-protobuf python3-venv python3-pip
  libcpp-httplib-dev prometheus-cpp-dev libjs-chart.js chromium chromium-driver python3-selenium curl
  libpq-dev postgresql-15
  libplplot-dev  # series --plot (PLplot: svg and pdf drivers)
  python3-yaml python3-jsonschema  # tests/kubernetes: the example manifest's schema check
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=
[ "$(id -u)" -eq 0 ] || sudo=sudo
echo "installing: ${missing[*]}"
$sudo apt-get update
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -o DPkg::Lock::Timeout=600 "${missing[@]}"
