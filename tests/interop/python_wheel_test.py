#!/usr/bin/env python3
"""The Python SDK packaged as docs/sdk.md says (issue 30), with Debian's python3:

1. The install block of docs/sdk.md's Python section, run as written (in a scratch directory
   that links client/ and proto/): the wheel built offline with --no-build-isolation, a clean
   venv (--system-site-packages: Debian's grpcio and protobuf), the wheel installed with
   --no-index and with no protoc on PATH.
2. The wheel holds the generated modules (deniable/v1/*_pb2.py and .pyi) and py.typed, and
   declares grpcio and protobuf; client/python is unchanged by the build (no build/, no
   *.egg-info, no generated code).
3. mypy (python3-mypy) finds no error in the installed package nor, with --strict, in the
   section's Python samples.
4. Every Python sample of the section runs: the development one-liner against a plaintext
   server ($DENIABLE_TARGET) ends with "reports counted: 1"; the production one against a TLS
   server with reporter and analyst tokens (--default_min_reports=1 so one report is served).

Usage: python_wheel_test.py REPO_ROOT SERVER_BINARY   (run with any python3 >= 3.9)
"""
import os
import re
import subprocess
import sys
import tempfile
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from checks import check  # noqa: E402
from components import absent  # noqa: E402
from test_server import start_server  # noqa: E402

DEBIAN_PYTHON = "/usr/bin/python3"


def python_section(root):
    text = open(os.path.join(root, "docs", "sdk.md")).read()
    start = text.index("### Python (`client/python`)")
    end = text.index("\n### ", start + 1)
    blocks = re.findall(r"```(\w+)\n(.*?)```", text[start:end], re.S)
    return [(lang, body) for lang, body in blocks if lang in ("sh", "python")]


def snapshot(directory):
    """Every path under directory but __pycache__ (tests run from the source write those)."""
    out = set()
    for base, dirs, files in os.walk(directory):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        out.update(os.path.relpath(os.path.join(base, n), directory) for n in dirs + files)
    return out


def run(command, **kwargs):
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    check(result.returncode == 0, f"{command} failed ({result.returncode}):\n{result.stdout}\n"
                                  f"{result.stderr}")
    return result.stdout


def make_tls(d):
    """A self-signed certificate for 127.0.0.1 (it is its own CA)."""
    run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
         "-keyout", os.path.join(d, "server.key"), "-out", os.path.join(d, "server.crt")])
    return os.path.join(d, "server.crt"), os.path.join(d, "server.key")


def main():
    root, server_bin = os.path.abspath(sys.argv[1]), sys.argv[2]
    for module in ("setuptools", "wheel", "venv"):
        if subprocess.run([DEBIAN_PYTHON, "-c", f"import {module}"],
                          capture_output=True).returncode != 0:
            absent(f"Debian's python3-{module}")
    if subprocess.run([DEBIAN_PYTHON, "-m", "mypy", "--version"],
                      capture_output=True).returncode != 0:
        absent("mypy (python3-mypy)")
    blocks = python_section(root)
    shell = [body for lang, body in blocks if lang == "sh"]
    samples = [body for lang, body in blocks if lang == "python"]
    check(len(shell) == 1 and len(samples) == 2, f"sdk.md Python section: {len(shell)} sh, "
                                                 f"{len(samples)} python blocks")
    package = os.path.join(root, "client", "python")
    before = snapshot(package)

    # 1. The documented install, as written, without protoc on PATH for the install itself.
    work = tempfile.mkdtemp(prefix="deniable_wheel_")
    for name in ("client", "proto"):
        os.symlink(os.path.join(root, name), os.path.join(work, name))
    build, install = shell[0].split("\n", 1)
    run(["bash", "-euo", "pipefail", "-c", build], cwd=work)
    env = dict(os.environ, PATH=os.path.join(work, "venv", "bin") + ":/usr/bin:/bin")
    no_protoc = os.path.join(work, "no_protoc_bin")
    os.mkdir(no_protoc)
    for tool in ("bash", "env", "cat", "mkdir", "rm", "uname"):
        if os.path.exists(f"/usr/bin/{tool}") or os.path.exists(f"/bin/{tool}"):
            os.symlink(f"/usr/bin/{tool}" if os.path.exists(f"/usr/bin/{tool}")
                       else f"/bin/{tool}", os.path.join(no_protoc, tool))
    os.symlink(DEBIAN_PYTHON, os.path.join(no_protoc, "python3"))
    env["PATH"] = os.path.join(work, "venv", "bin") + ":" + no_protoc
    out = run(["bash", "-euo", "pipefail", "-c", install], cwd=work, env=env)
    version = out.strip().splitlines()[-1]
    print(f"installed deniable {version} from the wheel, protoc not on PATH")

    # 2. What the wheel holds; the source tree untouched.
    wheels = [n for n in os.listdir(os.path.join(work, "dist")) if n.endswith(".whl")]
    check(wheels == [f"deniable-{version}-py3-none-any.whl"], wheels)
    with zipfile.ZipFile(os.path.join(work, "dist", wheels[0])) as wheel:
        names = set(wheel.namelist())
        metadata = wheel.read(f"deniable-{version}.dist-info/METADATA").decode()
    for name in ("deniable/py.typed", "deniable/numeric.py", "deniable/v1/__init__.py",
                 "deniable/v1/report_service_pb2.py", "deniable/v1/report_service_pb2.pyi",
                 "deniable/v1/query_service_pb2.py", "deniable/v1/admin_service_pb2.py"):
        check(name in names, f"{name} not in the wheel: {sorted(names)}")
    for requirement in ("Requires-Dist: grpcio (>=1.51)", "Requires-Dist: protobuf (>=4.21)"):
        check(requirement in metadata, metadata)
    after = snapshot(package)
    check(after == before, f"the build wrote into client/python: {sorted(after ^ before)}")
    print(f"wheel: {len(names)} files; client/python unchanged ({len(before)} paths)")

    # 3. mypy: the installed package, and the samples with --strict.
    venv_python = os.path.join(work, "venv", "bin", "python")
    config = os.path.join(package, "pyproject.toml")
    mypy = [DEBIAN_PYTHON, "-m", "mypy", "--config-file", config, "--python-executable",
            venv_python, "--cache-dir", os.path.join(work, "mypy_cache")]
    print(run(mypy + ["-p", "deniable"], cwd=work).strip())
    sample_files = []
    for i, body in enumerate(samples):
        path = os.path.join(work, f"sample_{i}.py")
        with open(path, "w") as f:
            f.write(body)
        sample_files.append(path)
    print(run(mypy + ["--strict"] + sample_files, cwd=work).strip())

    # 4. The samples run: development mode against plaintext, production against TLS.
    server, target = start_server(server_bin, os.path.join(work, "dev.db"),
                                  os.path.join(work, "dev.log"))
    try:
        sample_env = dict(os.environ, DENIABLE_TARGET=target)
        out = run([venv_python, sample_files[0]], cwd=work, env=sample_env)
        print(out.strip())
        check("report queued" in out and "already reported this period; nothing sent" in out,
              out)
        check(out.strip().endswith("reports counted: 1"), out)
    finally:
        server.kill()
        server.wait()
    cert, key = make_tls(work)
    tls_db = os.path.join(work, "tls.db")
    tokens = {role: run([server_bin, "tokens", "add", f"--role={role}", f"--db={tls_db}"]).strip()
              for role in ("reporter", "analyst")}
    server, target = start_server(server_bin, tls_db, os.path.join(work, "tls.log"),
                                  f"--tls_cert_file={cert}", f"--tls_key_file={key}",
                                  "--default_min_reports=1")
    try:
        sample_env = dict(os.environ, DENIABLE_TARGET=target, DENIABLE_TLS_CA_FILE=cert,
                          DENIABLE_TOKEN=tokens["reporter"], ANALYST_TOKEN=tokens["analyst"])
        out = run([venv_python, sample_files[1]], cwd=work, env=sample_env)
        print(out.strip())
        check("MetricLedger(reports_accepted=1" in out, out)
        check(re.search(r"^U ", out, re.M), f"no share of category U:\n{out}")
    finally:
        server.kill()
        server.wait()


if __name__ == "__main__":
    main()
