#!/usr/bin/env python3
"""The Swift package's module map (client/swift/Sources/DeniableC/module.modulemap) checked
without a Swift toolchain: clang builds module DeniableC from it (the header compiles as the
module map says, as a [system] module), then compiles client/swift/Tests/module_map_check.c,
which imports the module, links libdeniable_c (the map's `link`) and runs it.

Usage: swift_module_map_test.py CLANG REPO LIBDENIABLE_C_DIR   (CLANG "" or missing: absent)
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from checks import check  # noqa: E402
from components import absent  # noqa: E402


def run(*args):
    out = subprocess.run(list(args), capture_output=True, text=True)
    check(out.returncode == 0, (args, out.stdout, out.stderr))
    return out.stdout


def main():
    clang, repo, libdir = sys.argv[1:4]
    if not clang or not os.path.exists(clang):
        absent("clang (Debian: clang-14, installed by tools/install-deps.sh --ci)")
    modulemap = os.path.join(repo, "client", "swift", "Sources", "DeniableC", "module.modulemap")
    include = os.path.join(repo, "client", "include")
    work = tempfile.mkdtemp(prefix="deniable_swift_")
    try:
        cache = f"-fmodules-cache-path={os.path.join(work, 'cache')}"
        # 1. The module alone: every header it names compiles, warnings as errors.
        run(clang, "-fmodules", cache, "-fmodule-name=DeniableC", "-Xclang", "-emit-module",
            "-x", "c", modulemap, f"-I{include}", "-Wall", "-Werror", "-c",
            "-o", os.path.join(work, "DeniableC.pcm"))
        # 2. A program importing it, linked as `link "deniable_c"` says.
        program = os.path.join(work, "check")
        run(clang, "-std=c11", "-fmodules", cache, f"-fmodule-map-file={modulemap}",
            f"-I{include}", "-Wall", "-Wextra", "-Werror",
            os.path.join(repo, "client", "swift", "Tests", "module_map_check.c"),
            f"-L{libdir}", "-ldeniable_c", f"-Wl,-rpath,{libdir}", "-o", program)
        out = run(program)
        check(out.startswith("INVALID_ARGUMENT: target"), out)
        print("swift_module_map: module DeniableC builds, imports, links; " + out.strip())
    finally:
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
