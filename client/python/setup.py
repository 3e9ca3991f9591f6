"""The Deniable Python SDK: `pip install client/python` (offline: setuptools from Debian).

The protobuf modules (deniable/v1/*_pb2.py) are generated from the repository's proto/ at
build time, with grpc_tools.protoc when installed, else the `protoc` program (Debian's
protobuf-compiler). They are not committed. DENIABLE_PROTO_DIR overrides where proto/ is.
"""
import glob
import os
import shutil
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


def proto_dir():
    for candidate in (os.environ.get("DENIABLE_PROTO_DIR"), os.path.join(HERE, "proto"),
                      os.path.join(HERE, "..", "..", "proto")):
        if candidate and glob.glob(os.path.join(candidate, "deniable", "v1", "*.proto")):
            return os.path.abspath(candidate)
    sys.exit("deniable: cannot find proto/deniable/v1/*.proto (set DENIABLE_PROTO_DIR)")


def generate(out_dir):
    """Writes deniable/v1/*_pb2.py under out_dir from the .proto files."""
    src = proto_dir()
    protos = sorted(os.path.relpath(p, src)
                    for p in glob.glob(os.path.join(src, "deniable", "v1", "*.proto")))
    out_dir = os.path.abspath(out_dir)
    args = [f"-I{src}", f"--python_out={out_dir}"] + protos
    try:
        from grpc_tools import protoc  # noqa: F401  (optional: pip's grpcio-tools)
        command = [sys.executable, "-m", "grpc_tools.protoc"] + args
    except ImportError:
        protoc = shutil.which("protoc")
        if protoc is None:
            sys.exit("deniable: needs protoc (apt-get install protobuf-compiler) or grpcio-tools")
        command = [protoc] + args
    subprocess.run(command, check=True, cwd=src)
    init = os.path.join(out_dir, "deniable", "v1", "__init__.py")
    open(init, "a").close()


class BuildWithProtos(build_py):
    def run(self):
        super().run()
        generate(self.build_lib)


setup(
    name="deniable",
    version="0.1.0",
    description="Deniable SDK: randomized response on the device, delivery to the collector, "
                "and an analyst query client",
    license="Apache-2.0",
    python_requires=">=3.9",
    packages=["deniable"],
    install_requires=["grpcio>=1.51", "protobuf>=4.21"],
    extras_require={"pandas": ["pandas"]},
    cmdclass={"build_py": BuildWithProtos},
)
