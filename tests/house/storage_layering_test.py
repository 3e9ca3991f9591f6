#!/usr/bin/env python3
"""House check (issue 37): server/storage/ keeps one room per backend.

Usage: storage_layering_test.py SOURCE_DIR

The layout (docs/storage.md, "Layout"):
  server/storage/            the Storage interface and what the backends share, OpenBackend
                             (backend.h) and the conformance suite
  server/storage/sqlite/     the SQLite backend (sqlite_*, recent_hours, moved_ids_filter,
                             database_lock) and its tests
  server/storage/postgres/   the PostgreSQL backend (libpq) and the SQLite-to-PostgreSQL migration
  server/storage/memory/     the in-memory backend for tests
  server/storage/testing/    test support (a real PostgreSQL 15 for tests)

Fails, naming the file or the include chain, when
  - a PostgreSQL source (postgres_*, sqlite_to_postgres.*), a SQLite source (sqlite_*,
    recent_hours*, moved_ids_filter*, database_lock*) or memory_storage.cc lies outside its
    folder, or server/storage/memory_storage.h (kept for old include lines) does more than
    forward to memory/memory_storage.h;
  - a source of server/ outside server/storage/sqlite/ includes a header of sqlite/, but
    OpenBackend's backend.{h,cc}, postgres/sqlite_to_postgres.{h,cc} (migrate reads SQLite),
    server/main.cc and tests (*_test.cc; tools/, bench/ and tests/ may include it too);
  - a non-test source of server/storage/ outside sqlite/ and postgres/ (but backend.{h,cc})
    reaches a header of sqlite/ through the repository's headers (what the backends share
    does not depend on the SQLite backend);
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
SQLITE = STORAGE + 'sqlite/'
# What may include a header of sqlite/ from outside it (besides tests, tools/, bench/, tests/).
SQLITE_USERS = ALL_BACKENDS | {
    STORAGE + 'postgres/sqlite_to_postgres.h',
    STORAGE + 'postgres/sqlite_to_postgres.cc',
    'server/main.cc',
}
SQLITE_PREFIXES = ('sqlite_', 'recent_hours', 'moved_ids_filter', 'database_lock')


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


def sqlite_header(header):
    if header.startswith(SQLITE):
        return 'the SQLite backend (server/storage/sqlite/)'
    if header == 'sqlite3.h':
        return 'SQLite (<sqlite3.h>)'
    return None


def memory_forbidden(header):
    return sqlite_header(header) or postgres_header(header)


def shared_forbidden(header):
    if header.startswith(SQLITE):
        return 'the SQLite backend (server/storage/sqlite/)'
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
    elif name.startswith(SQLITE_PREFIXES) and folder != STORAGE + 'sqlite':
        return 'a SQLite source outside server/storage/sqlite/'
    if name.startswith('memory_storage.') and folder != STORAGE + 'memory' and path != FORWARD:
        return 'a memory-backend source outside server/storage/memory/'
    return None


def is_test(path):
    return path.endswith('_test.cc')


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
        elif path.startswith(SQLITE):
            if not is_test(path):
                failures += reach(root, path, postgres_header)
        elif path not in ALL_BACKENDS and not is_test(path):
            failures += reach(root, path, shared_forbidden)
        checked += 1
    for path in sources(root, 'server'):
        if path.startswith(SQLITE) or path in SQLITE_USERS or is_test(path):
            continue
        for _, header in includes(root, path):
            if header.startswith(SQLITE):
                failures.append(f'{path}: includes "{header}" (the SQLite backend); only '
                                f'server/storage/sqlite/, backend.{{h,cc}}, '
                                f'postgres/sqlite_to_postgres.*, server/main.cc and tests may')
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
          f'sqlite/ included only by its users, every "server/storage/..." include resolves')
    return 0


if __name__ == '__main__':
    sys.exit(main())
