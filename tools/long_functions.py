#!/usr/bin/env python3
"""Lists the C++ functions longer than a threshold (issue 39's house cleaning).

Usage:
  tools/long_functions.py [--max-lines N] [--tests] [--count] PATH...

Each PATH is a .cc/.h file or a directory searched for them; tests (*_test.cc and files under a
directory named tests/) are left out unless --tests is given. A function's length is the number
of lines from its opening brace to its closing brace, both included. Prints one line per
function over --max-lines (default 100), longest first:

  LINES  FILE:LINE  NAME

then "N of M functions over K lines". Exits 0 (a report, not a check); --count prints only the
summary line.

The scanner is a heuristic, not a parser: it drops comments, string and character literals and
preprocessor lines, then takes a brace at namespace, class or file scope whose header ends with a
parameter list (optionally followed by const, noexcept, override, a trailing return type or a
constructor's initializer list) as a function body. Lambdas and blocks inside a function count as
part of it.
"""

import argparse
import os
import re
import sys

SCOPE_RE = re.compile(r'\b(namespace|class|struct|union|enum)\b|\bextern\s*$')
NAME_RE = re.compile(r'((?:[A-Za-z_~][A-Za-z_0-9]*\s*::\s*)*(?:operator\s*[^\s(]+|~?[A-Za-z_][A-Za-z_0-9]*))\s*$')
QUALIFIERS_RE = re.compile(
    r'^((const|noexcept|override|final|mutable|volatile|&&?|ABSL_[A-Z_]+\([^)]*\))\s*)*(->.*)?$')
NOT_FUNCTIONS = {'if', 'for', 'while', 'switch', 'catch', 'return', 'sizeof', 'decltype'}


def strip_code(text):
    """Blanks comments, literals and preprocessor lines, keeping every newline."""
    out = []
    i, n = 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start and c == '#' or (at_line_start and c in ' \t' and
                                          text[i:].lstrip(' \t').startswith('#')):
            # A preprocessor line, with its continuations.
            while i < n:
                if text[i] == '\\' and i + 1 < n and text[i + 1] == '\n':
                    out.append('\n')
                    i += 2
                    continue
                if text[i] == '\n':
                    break
                i += 1
            continue
        at_line_start = False
        if c == '\n':
            out.append(c)
            at_line_start = True
            i += 1
        elif text.startswith('//', i):
            while i < n and text[i] != '\n':
                i += 1
        elif text.startswith('/*', i):
            end = text.find('*/', i + 2)
            end = n if end < 0 else end + 2
            out.append('\n' * text.count('\n', i, end))
            i = end
        elif c == 'R' and text.startswith('"', i + 1) and (i == 0 or not text[i - 1].isalnum()):
            m = re.match(r'R"([^(]*)\(', text[i:])
            if m:
                close = ')' + m.group(1) + '"'
                end = text.find(close, i)
                end = n if end < 0 else end + len(close)
                out.append('""' + '\n' * text.count('\n', i, end))
                i = end
            else:
                out.append(c)
                i += 1
        elif c in '"\'':
            if c == "'" and i > 0 and text[i - 1].isalnum():  # a digit separator: 1'000
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return ''.join(out)


def function_name(header):
    """The function's name if `header` (the code before a '{') ends a function's signature."""
    h = ' '.join(header.split())
    if not h or SCOPE_RE.search(h) and not h.rstrip().endswith(')'):
        return None
    if '=' in h.replace('==', '').replace('!=', '').replace('<=', '').replace('>=', '') and \
            not re.search(r'\boperator\s*=', h) and not re.search(r'=\s*(default|delete)', h):
        # `x = {` or a lambda assigned at namespace scope: not a function definition here.
        if not re.search(r'\)\s*(const\s*)?(noexcept\s*)?(override\s*)?(final\s*)?$', h) or \
                re.search(r'=\s*\[', h):
            return None
    # The parameter list: the first group at parenthesis depth 0 followed only by qualifiers, a
    # trailing return type or an initializer list (so macro calls before it are skipped).
    depth = 0
    for k, ch in enumerate(h):
        if ch == '(':
            if depth == 0:
                close = matching_paren(h, k)
                if close < 0:
                    return None
                rest = h[close + 1:].strip()
                m = NAME_RE.search(h[:k])
                if m and (QUALIFIERS_RE.match(rest) or re.match(r'^:(?!:)', rest)):
                    name = re.sub(r'\s+', '', m.group(1))
                    if name in NOT_FUNCTIONS:
                        return None
                    if re.match(r'^[A-Z][A-Z0-9_]*$', name):  # a macro: TEST_F(Suite, Name)
                        return name + h[k:close + 1].replace(' ', '')
                    return name
            depth += 1
        elif ch == ')':
            depth -= 1
    return None


def matching_paren(text, open_index):
    depth = 0
    for k in range(open_index, len(text)):
        if text[k] == '(':
            depth += 1
        elif text[k] == ')':
            depth -= 1
            if depth == 0:
                return k
    return -1


def functions(path):
    """Yields (name, first line, lines) for each function defined in `path`."""
    with open(path, encoding='utf-8', errors='replace') as f:
        code = strip_code(f.read())
    stack = []  # per open brace: ('scope'|'function'|'block', name, line)
    header_start = 0
    line = 1
    for i, ch in enumerate(code):
        if ch == '\n':
            line += 1
        elif ch == '{':
            in_function = any(kind != 'scope' for kind, _, _ in stack)
            if in_function:
                stack.append(('block', None, line))
            else:
                header = code[header_start:i]
                name = function_name(header)
                stack.append(('function', name, line) if name else ('scope', None, line))
            header_start = i + 1
        elif ch == '}':
            if stack:
                kind, name, start = stack.pop()
                if kind == 'function':
                    yield name, start, line - start + 1
            header_start = i + 1
        elif ch == ';':
            if not any(kind != 'scope' for kind, _, _ in stack):
                header_start = i + 1


def source_files(paths, tests):
    for p in paths:
        if os.path.isfile(p):
            yield p
            continue
        for root, dirs, files in os.walk(p):
            dirs[:] = sorted(d for d in dirs if d not in ('build', '.git', 'node_modules') and
                             (tests or d not in ('tests', 'testing')))
            for name in sorted(files):
                if not name.endswith(('.cc', '.h')):
                    continue
                if not tests and (name.endswith('_test.cc') or name.endswith('_test_util.h')):
                    continue
                yield os.path.join(root, name)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('paths', nargs='+')
    parser.add_argument('--max-lines', type=int, default=100)
    parser.add_argument('--tests', action='store_true', help='include tests')
    parser.add_argument('--count', action='store_true', help='print only the summary')
    parser.add_argument('--exclude', action='append', default=[],
                        help='a path prefix to leave out (repeatable)')
    args = parser.parse_args()
    found = []
    total = 0
    for path in source_files(args.paths, args.tests):
        if any(os.path.normpath(path).startswith(os.path.normpath(e)) for e in args.exclude):
            continue
        for name, start, lines in functions(path):
            total += 1
            if lines > args.max_lines:
                found.append((lines, path, start, name))
    found.sort(key=lambda f: (-f[0], f[1], f[2]))
    if not args.count:
        for lines, path, start, name in found:
            print(f'{lines:5d}  {path}:{start}  {name}')
    print(f'{len(found)} of {total} functions over {args.max_lines} lines')
    return 0


if __name__ == '__main__':
    sys.exit(main())
