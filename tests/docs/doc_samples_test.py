#!/usr/bin/env python3
"""Every code sample of README.md and docs/sdk.md compiled or run (CTest doc_samples; issue 30).

Each fenced block is checked by its language:
  cpp     compiled and linked against an installed tree (`cmake --install` into a scratch prefix,
          find_package(deniable), deniable::client), as an app outside the repository would.
  c       compiled and linked with the installed deniable-c.pc (pkg-config), as docs/sdk.md says.
  cmake   the block configured and built as an app's CMakeLists.txt against that prefix.
  python  byte-compiled; a block marked `<!-- sample: run -->` also run against a real plaintext
          server started here ($DENIABLE_TARGET), with the Python SDK's venv.
  js      `node --check` as an ES module (top-level await, imports).
  java    compiled with javac against the JVM SDK's jar; kotlin with kotlinc when present.
  sh      `bash -n`, and every `deniable` and `deniable-server` command in it checked against
          the binaries' --help: the command exists, each --flag is one of its flags.
A C or C++ block without a main() is a fragment: its #include, `namespace x = ...;` and `using`
lines go to file scope and the rest into a block inside main(), after the names the fragments
share (GIVEN_CPP, GIVEN_C: token, answer, reporter, ...), so a sample that uses another name, or
calls an API wrongly, fails. The program is linked, never run (it would need a collector).

A block not meant to be checked (an output excerpt, a directory listing) carries the marker
`<!-- sample: not-code -->` on the line before its fence; those are counted. Any other block
that does not pass, or has a language this test does not know, fails the test.

Usage: doc_samples_test.py REPO BUILD_DIR SERVER_BINARY CLI_BINARY VENV_PYTHON [JAVA_JAR]
(VENV_PYTHON: a python with the deniable package installed; JAVA_JAR: deniable.jar, when built.)
"""
import os
import py_compile
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from checks import check  # noqa: E402
from components import required  # noqa: E402
from test_server import start_server  # noqa: E402

DOCS = ("README.md", "docs/sdk.md")
MARKER = re.compile(r"^<!--\s*sample:\s*([a-z-]+)\s*-->$")
FENCE = re.compile(r"^(\s*)```\s*([A-Za-z0-9_+-]*)\s*$")
LANGUAGES = {"cpp": "cpp", "c++": "cpp", "c": "c", "cmake": "cmake", "python": "python",
             "py": "python", "js": "js", "javascript": "js", "java": "java", "kotlin": "kotlin",
             "sh": "sh", "bash": "sh", "shell": "sh"}

GIVEN_CPP = """\
  [[maybe_unused]] std::string token = "token", data_dir = "/tmp", category_name = "Y";
  [[maybe_unused]] std::string report_id;
  [[maybe_unused]] bool answer = true;
  [[maybe_unused]] double elapsed_ms = 1.0;
  [[maybe_unused]] std::unique_ptr<deniable::client::Reporter> reporter;
  [[maybe_unused]] absl::StatusOr<std::unique_ptr<deniable::client::DeviceStore>> store;
"""
PRELUDE_CPP = """\
#include <memory>
#include <string>

#include "deniable/client/device_store.h"
#include "deniable/client/grpc_transport.h"
#include "deniable/client/reporter.h"
namespace dc = deniable::client;
"""
GIVEN_C = '  const char* token = "token";\n  (void)token;\n'
PRELUDE_C = '#include <stdio.h>\n\n#include "deniable/client/deniable_c.h"\n'


class Block:
    def __init__(self, doc, line, lang, marker, body):
        self.doc, self.line, self.lang, self.marker, self.body = doc, line, lang, marker, body
        self.name = f"{doc}:{line}"


def blocks(repo):
    """Every fenced block of DOCS, with its language and the marker on the line before it."""
    out = []
    for doc in DOCS:
        lines = open(os.path.join(repo, doc)).read().split("\n")
        i = 0
        while i < len(lines):
            m = FENCE.match(lines[i])
            if not m:
                i += 1
                continue
            start, indent, lang = i, m.group(1), m.group(2).lower()
            j = i + 1
            while j < len(lines) and lines[j].strip() != "```":
                j += 1
            check(j < len(lines), f"{doc}:{start + 1}: the block is not closed")
            body = "\n".join(line[len(indent):] if line.startswith(indent) else line
                             for line in lines[start + 1:j]) + "\n"
            k = start - 1
            while k >= 0 and lines[k].strip() == "":
                k -= 1
            mark = MARKER.match(lines[k].strip()) if k >= 0 else None
            out.append(Block(doc, start + 1, lang, mark.group(1) if mark else None, body))
            i = j + 1
    return out


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kw)


def as_program(body, prelude, given, main):
    """A whole program as it is; a fragment wrapped in `main` after the prelude and the givens."""
    if re.search(r"\bint\s+main\s*\(", body):
        return body
    top, rest = [], []
    for line in body.split("\n"):
        at_top = (line.startswith("#include") or re.match(r"namespace \w+ = [\w:]+;", line)
                  or line.startswith("using "))
        (top if at_top and not rest else rest).append(line)
    inner = "\n".join("    " + line for line in rest)
    return (prelude + "\n".join(top) + f"\n\n{main} {{\n" + given + "  {\n" + inner +
            "\n  }\n  return 0;\n}\n")


class Checker:
    def __init__(self, repo, build, server, cli, venv_python, java_jar, work):
        self.repo, self.build, self.server, self.cli = repo, build, server, cli
        self.venv_python, self.java_jar, self.work = venv_python, java_jar, work
        self.failures, self.passed, self.not_code, self.unchecked = [], [], [], []
        self._prefix = None

    def fail(self, block, why):
        self.failures.append(f"{block.name} ({block.lang or 'no language'}): {why}")

    def prefix(self):
        """The installed tree (once)."""
        if self._prefix is None:
            self._prefix = os.path.join(self.work, "prefix")
            r = run(["cmake", "--install", self.build, "--prefix", self._prefix])
            check(r.returncode == 0, f"cmake --install failed:\n{r.stdout}{r.stderr}")
        return self._prefix

    # --- C++ and CMake: one project against the installed prefix, each sample its own target.
    def cpp(self, samples, cmake_blocks):
        if not samples and not cmake_blocks:
            return
        src = os.path.join(self.work, "cpp")
        os.makedirs(src)
        # No CMAKE_CXX_STANDARD: deniable::client carries its C++20 requirement (issue 38).
        lists = ["cmake_minimum_required(VERSION 3.20)", "project(doc_samples CXX)",
                 "find_package(deniable REQUIRED)"]
        targets = {}
        for n, block in enumerate(samples):
            name = f"sample_{n}"
            with open(os.path.join(src, name + ".cc"), "w") as f:
                f.write(as_program(block.body, PRELUDE_CPP, GIVEN_CPP, "int main()"))
            lists += [f"add_executable({name} {name}.cc)",
                      f"target_link_libraries({name} PRIVATE deniable::client)",
                      f"target_compile_options({name} PRIVATE -Wno-unused-result)"]
            targets[name] = block
        with open(os.path.join(src, "CMakeLists.txt"), "w") as f:
            f.write("\n".join(lists) + "\n")
        out = os.path.join(self.work, "cpp-build")
        r = run(["cmake", "-S", src, "-B", out, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                 f"-DCMAKE_PREFIX_PATH={self.prefix()}"])
        if r.returncode != 0:
            for block in samples:
                self.fail(block, f"configure failed:\n{r.stdout}{r.stderr}")
        else:
            r = run(["cmake", "--build", out, "-j2", "--", "-k", "0"])
            for name, block in targets.items():
                if os.path.exists(os.path.join(out, name)):
                    self.passed.append(block)
                else:
                    errors = "\n".join(line for line in r.stdout.split("\n")
                                       if f"{name}.cc" in line or "error" in line)
                    self.fail(block, f"does not compile or link:\n{errors}")
        for n, block in enumerate(cmake_blocks):  # an app's CMakeLists.txt: `app` from main.cc
            app = os.path.join(self.work, f"cmake_{n}")
            os.makedirs(app)
            with open(os.path.join(app, "main.cc"), "w") as f:
                f.write('#include "deniable/client/reporter.h"\n'
                        "int main() { return deniable::client::ReporterOptions{}.rpc_timeout > "
                        "absl::ZeroDuration() ? 0 : 1; }\n")
            with open(os.path.join(app, "CMakeLists.txt"), "w") as f:
                # A whole CMakeLists.txt (it has its project()) as written; a fragment after
                # the lines it assumes. Neither gets a CMAKE_CXX_STANDARD (issue 38).
                if re.search(r"^project\(", block.body, re.M):
                    f.write(block.body)
                else:
                    f.write("cmake_minimum_required(VERSION 3.20)\nproject(app CXX)\n"
                            "add_executable(app main.cc)\n" + block.body)
            r = run(["cmake", "-S", app, "-B", app + "/build", "-G", "Ninja",
                     f"-DCMAKE_PREFIX_PATH={self.prefix()}"])
            if r.returncode == 0:
                r = run(["cmake", "--build", app + "/build"])
            if r.returncode == 0:
                self.passed.append(block)
            else:
                self.fail(block, f"the app does not configure or build:\n{r.stdout}{r.stderr}")

    # --- C: pkg-config, as docs/sdk.md shows.
    def c(self, block, n):
        pc = [os.path.join(base, "pkgconfig") for base, dirs, _ in os.walk(self.prefix())
              if "pkgconfig" in dirs]
        path = os.path.join(self.work, f"c_{n}.c")
        with open(path, "w") as f:
            f.write(as_program(block.body, PRELUDE_C, GIVEN_C, "int main(void)"))
        flags = run(["pkg-config", "--cflags", "--libs", "deniable-c"],
                    env=dict(os.environ, PKG_CONFIG_PATH=":".join(pc)))
        check(flags.returncode == 0, f"pkg-config deniable-c: {flags.stderr}")
        r = run(["cc", "-std=c11", "-Wall", "-o", path[:-2], path, *flags.stdout.split()])
        if r.returncode == 0 and "warning" not in r.stderr:
            self.passed.append(block)
        else:
            self.fail(block, f"does not compile cleanly:\n{r.stderr}")

    # --- Python: byte-compiled; `run` samples against a real plaintext server.
    def python(self, block, n):
        path = os.path.join(self.work, f"py_{n}.py")
        with open(path, "w") as f:
            f.write(block.body)
        try:
            py_compile.compile(path, doraise=True)
        except py_compile.PyCompileError as e:
            self.fail(block, f"does not compile: {e}")
            return
        if block.marker == "run":
            d = os.path.join(self.work, f"py_{n}_run")
            os.makedirs(d)
            server, target = start_server(self.server, os.path.join(d, "s.db"),
                                          os.path.join(d, "s.log"))
            try:
                r = run([self.venv_python, path], cwd=d, env=dict(os.environ,
                                                                  DENIABLE_TARGET=target))
            finally:
                server.terminate()
                server.wait(timeout=30)
            if r.returncode != 0:
                self.fail(block, f"run against {target}: exit {r.returncode}\n{r.stdout}{r.stderr}")
                return
            print(f"{block.name}: ran: {r.stdout.strip()}")
        self.passed.append(block)

    # --- JavaScript: parsed as an ES module.
    def js(self, block, n):
        node = shutil.which("node")
        if node is None:
            # Like the JS SDK's own tests, which CMake adds only when node is found (CI has it;
            # tools/install-deps.sh does not install it): not a CI failure.
            self.unchecked.append((block, "node is absent", False))
            return
        path = os.path.join(self.work, f"js_{n}.mjs")
        with open(path, "w") as f:
            f.write(block.body)
        r = run([node, "--check", path])
        if r.returncode == 0:
            self.passed.append(block)
        else:
            self.fail(block, f"node --check:\n{r.stderr}")

    # --- Java / Kotlin: compiled against the JVM SDK's jar.
    def jvm(self, block, n):
        tool = shutil.which("javac" if block.lang == "java" else "kotlinc")
        if tool is None or not self.java_jar:
            self.unchecked.append((block, "javac/kotlinc or the JVM SDK's jar is absent", True))
            return
        d = os.path.join(self.work, f"jvm_{n}")
        os.makedirs(d)
        if block.lang == "java":
            cls = re.search(r"public\s+(?:final\s+)?class\s+(\w+)", block.body)
            path = os.path.join(d, (cls.group(1) if cls else "Sample") + ".java")
            cmd = [tool, "-Xlint:all", "-cp", self.java_jar, "-d", d, path]
        else:
            path = os.path.join(d, "Sample.kt")
            cmd = [tool, "-Xjsr305=strict", "-cp", self.java_jar, "-d", d, path]
        with open(path, "w") as f:
            f.write(block.body)
        r = run(cmd)
        if r.returncode == 0:
            self.passed.append(block)
        else:
            self.fail(block, f"{os.path.basename(tool)}:\n{r.stdout}{r.stderr}")

    # --- Shell: syntax, and the deniable commands and flags it uses.
    def help_flags(self, binary, command=None):
        if binary == "deniable-server":
            text = run([self.server, "--helpfull"]).stdout
            return None, set(re.findall(r"^\s+--(\w+) \(", text, re.M))
        text = run([self.cli, "--help"] if command is None else [self.cli, command, "--help"])
        return text.stdout, set(re.findall(r"^\s+--(\w+) \(", text.stdout, re.M))

    def sh(self, block):
        r = run(["bash", "-n"], input=block.body)
        if r.returncode != 0:
            self.fail(block, f"bash -n: {r.stderr}")
            return
        top_help, common = self.help_flags("deniable")
        commands = set(re.findall(r"^  ([a-z-]+) ", top_help.split("\nconnection")[0], re.M))
        _, server_flags = self.help_flags("deniable-server")
        problems = []
        for line in block.body.replace("\\\n", " ").split("\n"):
            for words in commands_in(line):
                program = os.path.basename(words[0])
                flags = [w.strip("[]").split("=")[0][2:] for w in words[1:]
                         if w.strip("[]").startswith("--")]
                if program == "deniable":
                    rest = [w for w in words[1:] if not w.startswith("-")]
                    if not rest or rest[0] not in commands:
                        problems.append(f"`{' '.join(words)}`: no deniable command {rest[:1]}")
                        continue
                    _, own = self.help_flags("deniable", rest[0])
                    known = own | common | {"help", "version"}
                elif program == "deniable-server":
                    known = server_flags | {"help", "version", "helpfull"}
                else:
                    continue
                problems += [f"`{program} ... --{f}`: not a flag of it" for f in flags
                             if f not in known and not (f.startswith("no") and f[2:] in known)]
        if problems:
            self.fail(block, "; ".join(problems))
        else:
            self.passed.append(block)


def commands_in(line):
    """The simple commands of one shell line as word lists (env assignments and keywords
    dropped); [] when shlex cannot split it."""
    try:
        lex = shlex.shlex(line, posix=True, punctuation_chars=True)
        lex.whitespace_split = True
        lex.commenters = "#"
        tokens = list(lex)
    except ValueError:
        return []
    out, words = [], []
    for t in tokens + [";"]:
        if t in (";", "&&", "||", "|", "&", "(", ")") or set(t) <= set("<>&|;()"):
            if words:
                out.append(words)
            words = []
        elif not words and (t in ("until", "do", "done", "if", "then", "while", "!", "time")
                            or re.match(r"^[A-Z_][A-Z0-9_]*=", t)):
            continue
        else:
            words.append(t)
    return out


def main():
    repo, build, server, cli, venv_python = (os.path.abspath(a) for a in sys.argv[1:6])
    java_jar = os.path.abspath(sys.argv[6]) if len(sys.argv) > 6 and sys.argv[6] else ""
    if java_jar and not os.path.exists(java_jar):
        java_jar = ""
    work = tempfile.mkdtemp(prefix="deniable_doc_samples_")
    checker = Checker(repo, build, server, cli, venv_python, java_jar, work)
    try:
        all_blocks = blocks(repo)
        cpp, cmake = [], []
        for n, block in enumerate(all_blocks):
            lang = LANGUAGES.get(block.lang)
            if block.marker == "not-code":
                checker.not_code.append(block)
            elif block.marker not in (None, "run"):
                checker.fail(block, f"unknown marker <!-- sample: {block.marker} -->")
            elif lang is None:
                checker.fail(block, "a block of no checked language: give it one, or mark it "
                                    "<!-- sample: not-code --> if it is not code")
            elif lang == "cpp":
                cpp.append(block)
            elif lang == "cmake":
                cmake.append(block)
            elif lang == "c":
                checker.c(block, n)
            elif lang == "python":
                checker.python(block, n)
            elif lang == "js":
                checker.js(block, n)
            elif lang in ("java", "kotlin"):
                checker.jvm(block, n)
            elif lang == "sh":
                checker.sh(block)
        checker.cpp(cpp, cmake)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for block in checker.passed:
        print(f"ok          {block.name} {block.lang}")
    for block in checker.not_code:
        print(f"not code    {block.name} {block.lang or '(no language)'}")
    for block, why, _ in checker.unchecked:
        print(f"unchecked   {block.name} {block.lang}: {why}")
    print(f"{len(all_blocks)} blocks: {len(checker.passed)} checked, {len(checker.not_code)} "
          f"marked not-code, {len(checker.unchecked)} unchecked, {len(checker.failures)} failed")
    check(len(checker.passed) + len(checker.not_code) + len(checker.unchecked) +
          len(checker.failures) == len(all_blocks), "every block accounted for")
    check(not (any(ci for _, _, ci in checker.unchecked) and required()),
          "the JDK, kotlinc or the JVM SDK (tools/install-deps.sh installs them) is absent and "
          "DENIABLE_REQUIRE_COMPONENTS is set")
    check(not checker.failures, "\n\n".join(checker.failures))


if __name__ == "__main__":
    main()
