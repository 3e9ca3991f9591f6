"""A real PostgreSQL 15 for process tests, in a temporary directory, torn down after.

    with TestPostgres() as pg:          # raises SkipTest when PostgreSQL is not installed
        uri = pg.new_database()         # "postgresql://postgres@127.0.0.1:PORT/t0"
        pg.sql("t0", "SELECT count(*) FROM reports")

Debian's /usr/lib/postgresql/15/bin/initdb and pg_ctl, run as the user "postgres" (runuser) when
the test runs as root (PostgreSQL refuses root); trust authentication; a free port on 127.0.0.1
and the unix socket in the temporary directory; fsync off (a crash of the server loses nothing
committed; only power loss would). The C++ twin is server/storage/testing/test_postgres.h.
"""
import os
import shutil
import socket
import subprocess
import tempfile

from components import required

BIN = "/usr/lib/postgresql/15/bin"
NOT_INSTALLED = ("PostgreSQL 15 is not installed (/usr/lib/postgresql/15/bin/initdb is missing; "
                 "apt-get install postgresql-15): skipping")


def installed():
    return os.access(os.path.join(BIN, "initdb"), os.X_OK)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SkipTest(Exception):
    pass


class TestPostgres:
    def __init__(self):
        if not installed():
            if required():  # CI installs PostgreSQL: its absence there is a failure
                raise RuntimeError(NOT_INSTALLED.replace(
                    "skipping", "DENIABLE_REQUIRE_COMPONENTS is set, so this fails"))
            raise SkipTest(NOT_INSTALLED)
        self.dir = tempfile.mkdtemp(prefix="deniable-pg-")
        self.port = _free_port()
        self._next = 0
        self._as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if os.geteuid() == 0:
            shutil.chown(self.dir, "postgres", "postgres")
        self._run([f"{BIN}/initdb", "-D", f"{self.dir}/data", "-U", "postgres", "--auth=trust",
                   "--locale=C.UTF-8", "--encoding=UTF8", "--no-sync"])
        self.start()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _run(self, argv, **kw):
        return subprocess.run(self._as_user + argv, check=True, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, **kw)

    def start(self):
        self._run([f"{BIN}/pg_ctl", "-D", f"{self.dir}/data", "-l", f"{self.dir}/server.log", "-w",
                   "-o", f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 "
                         "-c fsync=off -c full_page_writes=off -c max_connections=200",
                   "start"])

    def stop(self, mode="fast"):
        self._run([f"{BIN}/pg_ctl", "-D", f"{self.dir}/data", "-w", "-m", mode, "stop"])

    def uri(self, db):
        return f"postgresql://postgres@127.0.0.1:{self.port}/{db}"

    def new_database(self):
        db = f"t{self._next}"
        self._next += 1
        self._run([f"{BIN}/createdb", "-h", self.dir, "-p", str(self.port), "-U", "postgres", db])
        return self.uri(db)

    def sql(self, db, query):
        """Runs `query` with psql; returns its unaligned, tuples-only output."""
        return self._run(["psql", "-h", self.dir, "-p", str(self.port), "-U", "postgres", "-d", db,
                          "-XAtq", "-v", "ON_ERROR_STOP=1", "-c", query]).stdout.strip()

    def close(self):
        try:
            self.stop("immediate")
        except subprocess.CalledProcessError:
            pass
        shutil.rmtree(self.dir, ignore_errors=True)
