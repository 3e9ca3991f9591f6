"""Starting the real deniable-server for Python tests (port 0, the port read from its log)."""
import os
import re
import subprocess
import time

# How long a server may take to print its start line. Generous: under a loaded CI machine a
# collector opening (and migrating) PostgreSQL took over 10 s; the wait ends at the line.
START_DEADLINE_SECONDS = 60


def _child_log(log_path):
    """The server's stdout: the file emptied, then opened for appending (O_APPEND). The child
    shares this open file's offset; with "w+" the reads below moved it, and a line the server
    wrote just after a seek(0) overwrote the start of the file (its start line lost: "server
    did not start", seen in CI). With O_APPEND every write goes to the end whatever the offset,
    and the reads use a file of their own."""
    open(log_path, "w").close()
    return open(log_path, "a")


def _read(log_path):
    with open(log_path) as f:
        return f.read()


def start_server(server_bin, db_path, log_path, *flags):
    """Starts deniable-server on 127.0.0.1:0; returns (process, "127.0.0.1:PORT")."""
    log = _child_log(log_path)
    server = subprocess.Popen([server_bin, "--listen=127.0.0.1:0", f"--db={db_path}", *flags],
                              stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + START_DEADLINE_SECONDS
    while time.monotonic() < deadline:
        m = re.search(r"event=start .* port=(\d+) ", _read(log_path))
        if m:
            return server, f"127.0.0.1:{m.group(1)}"
        if server.poll() is not None:
            break
        time.sleep(0.02)
    server.kill()
    raise AssertionError("server did not start:\n" + _read(log_path))


def start_collector(server_bin, db, log_path, *flags):
    """Starts deniable-server with gRPC and HTTP/JSON on 127.0.0.1:0 over `db` (a SQLite path or a
    postgresql:// URI); returns (process, "127.0.0.1:GRPC_PORT", "http://127.0.0.1:HTTP_PORT")."""
    log = _child_log(log_path)
    proc = subprocess.Popen([server_bin, "--listen=127.0.0.1:0", "--http_listen=127.0.0.1:0",
                             f"--db={db}", *flags], stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + START_DEADLINE_SECONDS
    while time.monotonic() < deadline:
        m = re.search(r"event=start .* port=(\d+) .* http_port=(\d+) ", _read(log_path))
        if m:
            return proc, f"127.0.0.1:{m.group(1)}", f"http://127.0.0.1:{m.group(2)}"
        if proc.poll() is not None:
            break
        time.sleep(0.02)
    proc.kill()
    raise AssertionError("collector did not start:\n" + _read(log_path))
