#!/usr/bin/env python3
"""Soak: SDK devices report through the real deniable-server while it is SIGKILLed and restarted,
its disk fills and frees, and its reporter token is revoked and replaced. At the end the server
must count exactly the distinct reports the devices made: none lost, none counted twice.

Usage (as root, for the size-limited tmpfs; otherwise the disk-full episodes are skipped with a
warning):
  tests/soak/run_soak.py SERVER_BINARY CLI_BINARY SOAK_DEVICE_BINARY [SECONDS] [DEVICES]

Setup: TLS with a throw-away CA (openssl), tokens on (--token_reload_seconds=1). The server's
database lives on a 48 MiB tmpfs. Each device (soak_device) has its own SQLite device store and
reads its bearer token from a file every 100 ms; a rotation revokes the old token first (the
devices get UNAUTHENTICATED and must keep their reports), then writes a new one to the file.
Bounded: SECONDS (default 60) of faults, then at most 90 s of draining.
"""
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import stored_reports  # noqa: E402
from checks import check  # noqa: E402


def log(msg):
    print(f"soak: {msg}", flush=True)


def start_server(server_bin, db, log_path, certs, port):
    out = open(log_path, "a")
    proc = subprocess.Popen([server_bin, f"--listen=127.0.0.1:{port}", f"--db={db}",
                             f"--tls_cert_file={certs}/server.crt",
                             f"--tls_key_file={certs}/server.key", "--token_reload_seconds=1"],
                            stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with open(log_path) as f:
            starts = re.findall(r"event=start .* port=(\d+) ", f.read())
        if proc.poll() is not None:
            if port != 0:  # the port may still be held for a moment after a kill: retry
                time.sleep(0.2)
                out2 = open(log_path, "a")
                proc = subprocess.Popen(proc.args, stdout=out2, stderr=subprocess.STDOUT)
                continue
            raise AssertionError("server exited at start; see " + log_path)
        if len(starts) > start_server.seen:
            start_server.seen = len(starts)
            return proc, int(starts[-1])
        time.sleep(0.02)
    raise AssertionError("server did not start; see " + log_path)


start_server.seen = 0


def tokens(server_bin, db, *args):
    for _ in range(50):  # the database may be briefly busy or its disk full
        r = subprocess.run([server_bin, "tokens", *args, f"--db={db}"], capture_output=True,
                           text=True)
        if r.returncode == 0:
            return r.stdout.strip()
        time.sleep(0.1)
    raise AssertionError(f"tokens {args}: {r.stderr}")


def write_token(path, token):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(token)
    os.replace(tmp, path)


def make_certs(d):
    def run(*cmd):
        subprocess.run(cmd, cwd=d, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
        "/CN=deniable-soak-ca", "-keyout", "ca.key", "-out", "ca.crt")
    run("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-keyout",
        "server.key", "-out", "server.csr")
    with open(os.path.join(d, "san.ext"), "w") as f:
        f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    run("openssl", "x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
        "-CAcreateserial", "-days", "1", "-extfile", "san.ext", "-out", "server.crt")


def fill_disk(directory):
    """Writes a file until the filesystem is full; returns its path."""
    path = os.path.join(directory, "filler")
    chunk = b"\0" * (1 << 20)
    # Unbuffered: a buffered file's close() would flush its rest into the full disk and raise
    # ENOSPC outside the loop (a failure of the soak itself, seen in CI).
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        while True:
            os.write(fd, chunk)
    except OSError:
        pass
    finally:
        os.close(fd)
    return path


def main():
    server_bin, cli_bin, device_bin = sys.argv[1:4]
    seconds = float(sys.argv[4]) if len(sys.argv) > 4 else 60
    n_devices = int(sys.argv[5]) if len(sys.argv) > 5 else 3
    rng = random.Random(20261123)  # fixed seed: the fault schedule is reproducible
    work = tempfile.mkdtemp(prefix="deniable_soak_")
    disk = os.path.join(work, "disk")
    os.mkdir(disk)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", disk],
                             capture_output=True).returncode == 0
    if not mounted:
        log("WARNING: cannot mount a tmpfs (not root?): the disk-full episodes are skipped")
    db = os.path.join(disk, "server.db")
    server_log = os.path.join(work, "server.log")
    certs = os.path.join(work, "certs")
    os.mkdir(certs)
    make_certs(certs)
    figures = {"kills": 0, "disk_full": 0, "rotations": 0}
    server = None
    devices = []
    try:
        reporter_token = tokens(server_bin, db, "add", "--role=reporter", "--label=soak-1")
        analyst = tokens(server_bin, db, "add", "--role=analyst", "--label=soak-analyst")
        token_file = os.path.join(work, "token")
        write_token(token_file, reporter_token)
        token_id = 1
        server, port = start_server(server_bin, db, server_log, certs, 0)
        target = f"127.0.0.1:{port}"
        env = dict(os.environ, DENIABLE_TOKEN=analyst)
        subprocess.run([cli_bin, f"--target={target}", f"--tls_ca_file={certs}/ca.crt",
                        "create-metric", "--name=soak_m", "--design=two_coin"], check=True,
                       env=env, stdout=subprocess.DEVNULL)

        # Each device reports about every 5 ms for the whole fault phase.
        count = int(seconds * 1000 / 5)
        for d in range(n_devices):
            out = open(os.path.join(work, f"device{d}.out"), "w")
            err = open(os.path.join(work, f"device{d}.err"), "w")
            devices.append(subprocess.Popen(
                [device_bin, f"127.0.0.1:{port}", f"{certs}/ca.crt", token_file,
                 os.path.join(work, f"device{d}.db"), "soak_m", str(count), "5", "90"],
                stdout=out, stderr=err))

        start = time.monotonic()
        episode = 0
        while time.monotonic() - start < seconds - 3:
            time.sleep(rng.uniform(1.0, 3.0))
            kind = ["kill", "disk", "token"][episode % 3]
            episode += 1
            if kind == "kill":
                server.send_signal(signal.SIGKILL)
                server.wait()
                time.sleep(rng.uniform(0.1, 1.0))
                server, _ = start_server(server_bin, db, server_log, certs, port)
                figures["kills"] += 1
                log(f"t={time.monotonic() - start:.1f}s SIGKILL + restart")
            elif kind == "disk" and mounted:
                filler = fill_disk(disk)
                time.sleep(rng.uniform(1.0, 2.0))
                os.unlink(filler)
                figures["disk_full"] += 1
                log(f"t={time.monotonic() - start:.1f}s disk full, then freed")
            elif kind == "token":
                # Revoke first: the devices get UNAUTHENTICATED for a while and must keep their
                # reports; then the new token goes to the file they read.
                tokens(server_bin, db, "revoke", f"--id={token_id}")
                time.sleep(2.5)
                new = tokens(server_bin, db, "add", "--role=reporter",
                             f"--label=soak-{figures['rotations'] + 2}")
                listed = tokens(server_bin, db, "list")
                token_id = max(int(line.split()[0]) for line in listed.splitlines()
                               if line.split() and line.split()[0].isdigit())
                write_token(token_file, new)
                figures["rotations"] += 1
                log(f"t={time.monotonic() - start:.1f}s token {token_id} replaces the revoked one")

        made_ids = []
        totals = {}
        for d, p in enumerate(devices):
            p.wait(timeout=200)
            with open(os.path.join(work, f"device{d}.out")) as f:
                lines = f.read().split("\n")
            summary = [l for l in lines if l.startswith("made=")]
            check(p.returncode == 0 and summary, (
                f"device {d} exit {p.returncode}, "
                f"{'after' if summary else 'before'} printing its figures "
                f"({len(lines) - 1} lines of output): "
                + open(os.path.join(work, f"device{d}.err")).read()[-2000:]))
            for k, v in re.findall(r"(\w+)=(\d+)", summary[0]):
                totals[k] = totals.get(k, 0) + int(v)
            made_ids += [l for l in lines if l and not l.startswith("made=")]
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
        server = None

        con = stored_reports.connect(db)
        stored = [r[0].lower() for r in con.execute("SELECT hex(report_id) FROM stored_reports")]
        counted = con.execute("SELECT coalesce(sum(n), 0) FROM counts").fetchone()[0]
        con.close()
        made = set(made_ids)
        dropped = {k: totals.get(k, 0) for k in
                   ("dropped_rejected", "dropped_queue_full", "dropped_too_old")}
        print(f"soak figures: devices={n_devices} seconds={seconds:.0f} reports_made={len(made_ids)} "
              f"distinct={len(made)} delivered={totals.get('acknowledged', 0)} "
              f"stored={len(stored)} counted={counted} duplicates_answered={totals.get('duplicates', 0)} "
              f"dropped={sum(dropped.values())} ({', '.join(f'{k}={v}' for k, v in dropped.items())}) "
              f"send_attempts={totals.get('send_attempts', 0)} failed_attempts={totals.get('failed_attempts', 0)} "
              f"kills={figures['kills']} disk_full_episodes={figures['disk_full']} "
              f"token_rotations={figures['rotations']}", flush=True)
        check(len(made) == len(made_ids), "a report id was made twice")
        check(len(made_ids) > 0)
        check(sum(dropped.values()) == 0, "no drop is allowed by the contract in this soak")
        check(len(stored) == len(set(stored)), "a report is stored twice")
        check(set(stored) == made, (f"lost {len(made - set(stored))}, "
                                     f"unknown {len(set(stored) - made)}"))
        check(counted == len(made), f"server counts {counted}, devices made {len(made)}")
        check(figures["kills"] > 0 and figures["rotations"] > 0)
        log("OK: the server counts exactly the distinct reports the devices made")
    finally:
        for p in devices:
            if p.poll() is None:
                p.kill()
        if server is not None:
            server.kill()
            server.wait()
        if mounted:
            subprocess.run(["umount", disk])
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
