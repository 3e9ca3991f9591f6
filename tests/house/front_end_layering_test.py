#!/usr/bin/env python3
"""House check (issue 39): the HTTP front end includes nothing of the gRPC one.

Usage: front_end_layering_test.py SOURCE_DIR

Follows the includes of every server/http/*.{h,cc} (dashboard included) through the repository's
own headers ("server/...", "deniable/..." under common/ and proto/ are not followed: the
generated *.grpc.pb.h is caught by name) and fails, naming the chain, when one reaches
  - a header of server/service/ (the gRPC front end), or
  - a gRPC C++ header: <grpcpp/...>, <grpc++/...>, "*.grpc.pb.h".
What both front ends share lives outside both (server/core/collector_core.h and the like).
Exits 0 when the layering holds, 1 otherwise.
"""

import os
import re
import sys

INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def forbidden(header):
    if header.startswith('server/service/'):
        return 'the gRPC front end (server/service/)'
    if header.startswith(('grpcpp/', 'grpc++/')) or header.endswith('.grpc.pb.h'):
        return 'a gRPC C++ header'
    return None


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else '.'
    http = os.path.join(root, 'server', 'http')
    starts = []
    for dirpath, _, files in os.walk(http):
        for name in sorted(files):
            if name.endswith(('.h', '.cc')):
                starts.append(os.path.relpath(os.path.join(dirpath, name), root))
    if not starts:
        print(f'front_end_layering: no sources under {http}', file=sys.stderr)
        return 1
    failures = []
    seen = {}
    for start in sorted(starts):
        stack = [(start, (start,))]
        visited = set()
        while stack:
            path, chain = stack.pop()
            if path in visited:
                continue
            visited.add(path)
            with open(os.path.join(root, path), encoding='utf-8') as f:
                text = f.read()
            for _, header in INCLUDE_RE.findall(text):
                why = forbidden(header)
                if why:
                    failures.append(f'{" -> ".join(chain + (header,))}: {why}')
                    continue
                if header.startswith('server/') and os.path.isfile(os.path.join(root, header)):
                    stack.append((header, chain + (header,)))
        seen[start] = len(visited)
    if failures:
        print('front_end_layering: server/http reaches the gRPC front end:', file=sys.stderr)
        for failure in sorted(set(failures)):
            print('  ' + failure, file=sys.stderr)
        print('Move what both front ends share out of server/service (see docs/architecture.md, '
              '"One core under the front ends").', file=sys.stderr)
        return 1
    print(f'front_end_layering: {len(starts)} files of server/http, '
          f'{sum(seen.values())} headers followed, none of server/service or gRPC C++')
    return 0


if __name__ == '__main__':
    sys.exit(main())
