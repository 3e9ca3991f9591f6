#!/usr/bin/env python3
"""House check (issue 37): server/storage/ keeps one room per backend.

Usage: storage_layering_test.py SOURCE_DIR

The layout (docs/storage.md, "Layout"):
  server/storage/            the Storage interface and what the backends share, the SQLite
                             backend (sqlite_*), OpenBackend (backend.h) and the conformance suite
  server/storage/postgres/   the PostgreSQL backend (libpq) and the SQLite-to-PostgreSQL migration
  server/storage/memory/     the in-memory backend for tests
  server/storage/testing/    test support (a real PostgreSQL 15 for tests)

Fails, naming the file or the include chain, when
  - a PostgreSQL source (postgres_*, sqlite_to_postgres.*) or memory_storage.cc lies outside its
    folder, or server/storage/memory_storage.h (kept for old include lines) does more than
    forward to memory/memory_storage.h;
  - a non-test source of server/storage/ outside postgres/ (but OpenBackend's backend.{h,cc},
    which names every backend) reaches a header of postgres/ or <libpq-fe.h> through the
    repository's headers (tests, *_test.cc, may exercise several backends);
  - a source of memory/ reaches a SQLite or PostgreSQL header (sqlite_*, postgres/, <sqlite3.h>,
    <libpq-fe.h>), or a source of postgres/ reaches memory/;
  - an include line anywhere in server/, tools/, bench/ or tests/ names a "server/storage/..."
    header that does not exist (a path left behind by a move; the benches and fuzzers are not in
    every build, so the compiler does not always see them).
Exits 0 when the layout holds, 1 otherwise.
"""

import os
import re
import sys

INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)
STORAGE = 'server/storage/'
# OpenBackend names every backend by design.
ALL_BACKENDS = {STORAGE + 'backend.h', STORAGE + 'backend.cc'}
FORWARD = STORAGE + 'memory_storage.h'


def sources(root, top):
    found = []
    for dirpath, _, files in os.walk(os.path.join(root, top)):
        for name in sorted(files):
            if name.endswith(('.h', '.cc')):
                found.append(os.path.relpath(os.path.join(dirpath, name), root))
    return sorted(found)


def includes(root, path):
    with open(os.path.join(root, path), encoding='utf-8') as f:
        return INCLUDE_RE.findall(f.read())


def reach(root, start, forbidden):
    """Failures: the include chains from `start` to a header `forbidden` names."""
    failures = []
    stack = [(start, (start,))]
    visited = set()
    while stack:
        path, chain = stack.pop()
        if path in visited:
            continue
        visited.add(path)
        for _, header in includes(root, path):
            why = forbidden(header)
            if why:
                failures.append(f'{" -> ".join(chain + (header,))}: {why}')
            elif header.startswith('server/') and os.path.isfile(os.path.join(root, header)):
                stack.append((header, chain + (header,)))
    return failures


def postgres_header(header):
    if header.startswith(STORAGE + 'postgres/'):
        return 'the PostgreSQL backend (server/storage/postgres/)'
    if header == 'libpq-fe.h':
        return 'libpq'
    return None


def memory_forbidden(header):
    if os.path.basename(header).startswith('sqlite_') or header == 'sqlite3.h':
        return 'the SQLite backend'
    return postgres_header(header)


def memory_header(header):
    if header.startswith(STORAGE + 'memory/') or header == FORWARD:
        return 'the memory backend (server/storage/memory/)'
    return None


def misplaced(path):
    folder, name = os.path.split(path)
    if name.startswith('postgres_') or name.startswith('sqlite_to_postgres.'):
        if folder != STORAGE + 'postgres':
            return 'a PostgreSQL source outside server/storage/postgres/'
    if name.startswith('memory_storage.') and folder != STORAGE + 'memory' and path != FORWARD:
        return 'a memory-backend source outside server/storage/memory/'
    return None


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else '.'
    storage = sources(root, STORAGE)
    if not storage:
        print(f'storage_layering: no sources under {os.path.join(root, STORAGE)}', file=sys.stderr)
        return 1
    failures = []
    for path in storage:
        why = misplaced(path)
        if why:
            failures.append(f'{path}: {why}')
    if FORWARD in storage:
        named = [header for _, header in includes(root, FORWARD)]
        if named != [STORAGE + 'memory/memory_storage.h']:
            failures.append(f'{FORWARD}: includes {named}, not only '
                            f'{STORAGE}memory/memory_storage.h')
    checked = 0
    for path in storage:
        if path.startswith(STORAGE + 'postgres/'):
            failures += reach(root, path, memory_header)
        elif path.startswith(STORAGE + 'memory/'):
            failures += reach(root, path, memory_forbidden)
        elif path not in ALL_BACKENDS and not path.endswith('_test.cc'):
            failures += reach(root, path, postgres_header)
        checked += 1
    for top in ('server', 'tools', 'bench', 'tests'):
        for path in sources(root, top):
            for _, header in includes(root, path):
                if header.startswith(STORAGE) and not os.path.isfile(os.path.join(root, header)):
                    failures.append(f'{path}: includes "{header}", which does not exist')
    if failures:
        print('storage_layering: server/storage/ breaks its layout:', file=sys.stderr)
        for failure in sorted(set(failures)):
            print('  ' + failure, file=sys.stderr)
        print('See docs/storage.md, "Layout".', file=sys.stderr)
        return 1
    print(f'storage_layering: {checked} files of server/storage/ in their rooms, '
          f'every "server/storage/..." include resolves')
    return 0


if __name__ == '__main__':
    sys.exit(main())
