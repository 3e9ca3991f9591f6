#!/usr/bin/env bash
# Installs the Debian 12 packages Deniable builds, tests and runs with. Idempotent: does nothing
# when they are all present. Needs root (or sudo).
#   --ci  also what the other CI steps need (.ci/run passes it), in the same apt-get run: the
#         Docker engine and client, docker-compose and debootstrap (tests/docker/: the base image
#         is made locally, no registry is reached), clang-14 and its sanitizer and libFuzzer
#         runtime (tests/fuzz/run_fuzz.sh).
set -euo pipefail
ci=0
for arg in "$@"; do
  case $arg in
    --ci) ci=1 ;;
    *) echo "install-deps.sh: unknown argument $arg (only --ci)" >&2; exit 2 ;;
  esac
done
packages=(
  build-essential cmake ninja-build ccache pkg-config git python3 sqlite3
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libabsl-dev
  libsqlite3-dev libssl-dev libboost-dev libspdlog-dev libcsv-dev
  libgtest-dev libgmock-dev libbenchmark-dev clang-format
  openssl python3-grpcio python3-protobuf python3-venv python3-pip
  libmicrohttpd-dev libgnutls28-dev  # the HTTP listener and its TLS
  libcpp-httplib-dev  # bench/http_latency_bench's HTTP client
  libcurl4-openssl-dev  # the alert webhook (server/alerts/webhook.cc)
  prometheus-cpp-dev libjs-chart.js chromium chromium-driver python3-selenium curl
  libpq-dev postgresql-15
  libplplot-dev  # series --plot (PLplot: svg and pdf drivers)
  python3-yaml python3-jsonschema  # tests/kubernetes: the example manifest's schema check
  python3-setuptools python3-wheel python3-mypy  # the Python SDK wheel (built offline) and its type check
  python3-pandas  # the Python SDK's to_dataframe (its UTC index tested in python_sdk_unit)
  openjdk-17-jdk-headless libjsr305-java  # the JVM SDK (client/java): javac, jni.h, nullability annotations
  kotlin  # kotlinc: the JVM SDK's Kotlin sample (CTest kotlin_sample)
)
[ "$ci" = 0 ] || packages+=(docker.io docker-compose debootstrap clang-14 libclang-rt-14-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# CI: every package at the mirror's current version, the compilers included, even those already
# installed: the image (docker/Dockerfile) installs the same packages from the same mirror, so its
# compile commands and headers are the host build's, and its compile is served by the host's
# ccache (docs/ci.md, "The image compiles from the host build's ccache").
[ "$ci" = 0 ] || missing=("${packages[@]}" gcc-12 g++-12 cpp-12 libstdc++-12-dev)
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=
[ "$(id -u)" -eq 0 ] || sudo=sudo
echo "installing: ${missing[*]}"
$sudo apt-get update
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -o DPkg::Lock::Timeout=600 "${missing[@]}"
