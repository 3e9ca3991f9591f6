#!/usr/bin/env bash
# Installs the Python SDK as a user would (pip install client/python), offline, into a fresh
# venv that sees Debian's python3-grpcio and python3-protobuf: the CTest fixture of the Python
# SDK tests. Usage: install_python_sdk.sh VENV_DIR REPO_ROOT
set -euo pipefail
venv=$1 root=$2
rm -rf "$venv"
/usr/bin/python3 -m venv --system-site-packages "$venv"
# A private copy of the sources, so parallel builds never share client/python/build.
src=$(mktemp -d)
trap 'rm -rf "$src"' EXIT
cp -r "$root/client/python" "$src/python"
rm -rf "$src/python/build" "$src/python"/*.egg-info
DENIABLE_PROTO_DIR="$root/proto" "$venv/bin/pip" install --no-index --quiet "$src/python"
"$venv/bin/python" -c "import deniable, deniable.v1.report_service_pb2; print('installed', deniable.__version__)"
