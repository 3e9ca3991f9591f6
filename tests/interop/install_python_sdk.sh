#!/usr/bin/env bash
# Installs the Python SDK as docs/sdk.md says: the wheel built offline with Debian's python3
# (setuptools and wheel from Debian, no build isolation) into a scratch directory, then
# installed with --no-index into a fresh venv that sees Debian's python3-grpcio and
# python3-protobuf: the CTest fixture of the Python SDK tests. The build writes nothing into
# client/python (setup.py sends build/ and *.egg-info to a scratch directory), so parallel
# builds share no files. Usage: install_python_sdk.sh VENV_DIR REPO_ROOT
set -euo pipefail
venv=$1 root=$2
rm -rf "$venv"
/usr/bin/python3 -m venv --system-site-packages "$venv"
dist=$(mktemp -d)
trap 'rm -rf "$dist"' EXIT
/usr/bin/python3 -m pip wheel --no-build-isolation --no-deps --quiet -w "$dist" "$root/client/python"
"$venv/bin/pip" install --no-index --quiet "$dist"/deniable-*.whl
"$venv/bin/python" -c "import deniable, deniable.v1.report_service_pb2; print('installed', deniable.__version__)"
