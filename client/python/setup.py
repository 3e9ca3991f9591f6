"""The one build step pyproject.toml cannot declare: the protobuf modules.

deniable/v1/*_pb2.py (and .pyi type stubs) are generated from the repository's proto/ when
the wheel is built, with Debian's `protoc` (protobuf-compiler), and land in the wheel: the
wheel installs without protoc. They are not committed. DENIABLE_PROTO_DIR overrides where
proto/ is (default: client/python/proto, then ../../proto). PROTOC overrides the compiler.

Nothing is written into the source tree: build/ and deniable.egg-info go to a scratch
directory removed at exit (a setuptools build otherwise leaves both next to this file).
"""
import atexit
import glob
import os
import shutil
import subprocess
import sys
import tempfile

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


def proto_dir():
    for candidate in (os.environ.get("DENIABLE_PROTO_DIR"), os.path.join(HERE, "proto"),
                      os.path.join(HERE, "..", "..", "proto")):
        if candidate and glob.glob(os.path.join(candidate, "deniable", "v1", "*.proto")):
            return os.path.abspath(candidate)
    sys.exit("deniable: cannot find proto/deniable/v1/*.proto (set DENIABLE_PROTO_DIR to the "
             "repository's proto/ directory)")


def generate(out_dir):
    """Writes deniable/v1/*_pb2.py and *_pb2.pyi under out_dir from the .proto files."""
    src = proto_dir()
    protos = sorted(os.path.relpath(p, src)
                    for p in glob.glob(os.path.join(src, "deniable", "v1", "*.proto")))
    out_dir = os.path.abspath(out_dir)
    protoc = os.environ.get("PROTOC") or shutil.which("protoc")
    if protoc is None:
        sys.exit("deniable: building the wheel needs protoc (apt-get install protobuf-compiler);"
                 " installing a built wheel does not")
    subprocess.run([protoc, f"-I{src}", f"--python_out={out_dir}", f"--pyi_out={out_dir}"]
                   + protos, check=True, cwd=src)
    open(os.path.join(out_dir, "deniable", "v1", "__init__.py"), "a").close()


class BuildWithProtos(build_py):
    def run(self):
        super().run()
        generate(self.build_lib)


scratch = tempfile.mkdtemp(prefix="deniable-setup-")
atexit.register(shutil.rmtree, scratch, True)

setup(cmdclass={"build_py": BuildWithProtos},
      options={"build": {"build_base": os.path.join(scratch, "build")},
               "egg_info": {"egg_base": scratch}})
