"""Starting the real deniable-server for Python tests (port 0, the port read from its log)."""
import os
import re
import subprocess
import time

# How long a server may take to print its start line. Generous: under a loaded CI machine a
# collector opening (and migrating) PostgreSQL took over 10 s; the wait ends at the line.
START_DEADLINE_SECONDS = 60


def start_server(server_bin, db_path, log_path, *flags):
    """Starts deniable-server on 127.0.0.1:0; returns (process, "127.0.0.1:PORT")."""
    log = open(log_path, "w+")
    server = subprocess.Popen([server_bin, "--listen=127.0.0.1:0", f"--db={db_path}", *flags],
                              stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + START_DEADLINE_SECONDS
    while time.monotonic() < deadline:
        log.seek(0)
        m = re.search(r"event=start .* port=(\d+) ", log.read())
        if m:
            return server, f"127.0.0.1:{m.group(1)}"
        if server.poll() is not None:
            break
        time.sleep(0.02)
    server.kill()
    log.seek(0)
    raise AssertionError("server did not start:\n" + log.read())


def start_collector(server_bin, db, log_path, *flags):
    """Starts deniable-server with gRPC and HTTP/JSON on 127.0.0.1:0 over `db` (a SQLite path or a
    postgresql:// URI); returns (process, "127.0.0.1:GRPC_PORT", "http://127.0.0.1:HTTP_PORT")."""
    log = open(log_path, "w+")
    proc = subprocess.Popen([server_bin, "--listen=127.0.0.1:0", "--http_listen=127.0.0.1:0",
                             f"--db={db}", *flags], stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + START_DEADLINE_SECONDS
    while time.monotonic() < deadline:
        log.seek(0)
        m = re.search(r"event=start .* port=(\d+) .* http_port=(\d+) ", log.read())
        if m:
            return proc, f"127.0.0.1:{m.group(1)}", f"http://127.0.0.1:{m.group(2)}"
        if proc.poll() is not None:
            break
        time.sleep(0.02)
    proc.kill()
    log.seek(0)
    raise AssertionError("collector did not start:\n" + log.read())
