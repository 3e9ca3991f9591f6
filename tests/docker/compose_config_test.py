#!/usr/bin/env python3
"""The Compose files and the Dockerfile as docker-compose resolves them, without a daemon (issue 38):

- the named volumes keep their names (`deniable-data`, `deniable-pg`), not Compose's
  project-prefixed `docker_deniable-data`, so `docker run -v deniable-data:...` and Compose share
  the database (DENIABLE_VOLUME / DENIABLE_PG_VOLUME name others);
- the collectors' health checks run every 2 s at most (the first check comes one interval after
  the start: Docker 20.10 has no start_interval), with retries that keep at least 15 s of failed
  checks before "unhealthy"; the same for the Dockerfile's HEALTHCHECK.

Usage: compose_config_test.py REPO. Exit 77 (skipped) without docker-compose."""
import os
import re
import shutil
import subprocess
import sys

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from checks import check  # noqa: E402  (asserts that python -O keeps)

repo = sys.argv[1]
compose = shutil.which("docker-compose")
if compose is None:
    print("docker-compose not installed: skipped")
    sys.exit(77)


def seconds(text):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(ms|s|m)", str(text))
    check(m, f"not a duration: {text}")
    return float(m.group(1)) * {"ms": 0.001, "s": 1, "m": 60}[m.group(2)]


def config(name, env=None):
    out = subprocess.run(
        [compose, "-f", os.path.join(repo, "docker", name), "config"],
        env={**os.environ, "DENIABLE_DATA_DIR": os.path.join(repo, "tests", "data"), **(env or {})},
        check=True, capture_output=True, text=True).stdout
    return yaml.safe_load(out)


def check_health(where, interval, retries):
    check(interval <= 2, f"{where}: first health check after {interval} s (want <= 2 s)")
    check(interval * retries >= 15, f"{where}: unhealthy after {interval * retries} s of failures")


for name, volume, variable, collectors in [
        ("compose.yaml", "deniable-data", "DENIABLE_VOLUME", ["server"]),
        ("compose.postgres.yaml", "deniable-pg", "DENIABLE_PG_VOLUME", ["collector1", "collector2"])]:
    c = config(name)
    got = c["volumes"][volume].get("name")
    check(got == volume, f"docker/{name}: volume {volume} is named {got!r} (Compose: docker_{volume})")
    other = config(name, {variable: "ci-volume"})["volumes"][volume].get("name")
    check(other == "ci-volume", f"docker/{name}: {variable} does not name the volume: {other!r}")
    for service in collectors:
        h = c["services"][service]["healthcheck"]
        check_health(f"docker/{name} {service}", seconds(h["interval"]), int(h["retries"]))
    print(f"docker/{name}: volume {volume}; health checks every "
          f"{[c['services'][s]['healthcheck']['interval'] for s in collectors]}")

dockerfile = open(os.path.join(repo, "docker", "Dockerfile")).read()
m = re.search(r"^HEALTHCHECK (.*?)\\?$", dockerfile, re.M)
check(m, "docker/Dockerfile: no HEALTHCHECK")
flags = dict(re.findall(r"--([a-z-]+)=(\S+)", m.group(1)))
check_health("docker/Dockerfile HEALTHCHECK", seconds(flags["interval"]), int(flags["retries"]))
print(f"docker/Dockerfile: HEALTHCHECK {m.group(1).strip()}")
print("compose_config: ok")
