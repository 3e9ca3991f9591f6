"""Helpers of the SDK interop tests: the collector with its HTTP listener and CORS, a static
web server for the browser SDK's test page, headless Chromium, and the server's counts."""
import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from test_server import start_server  # noqa: E402
from checks import check  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
NODE = shutil.which("node") or "/usr/bin/node"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def end_headers(self):
        self.send_header("Cache-Control", "no-store")
        super().end_headers()


def serve_directory(directory):
    """Serves `directory` on 127.0.0.1:0 in a thread; returns (server, "http://127.0.0.1:P")."""
    handler = functools.partial(_QuietHandler, directory=directory)
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}"


def start_collector(server_bin, work, *flags, name="server"):
    """deniable-server with gRPC and HTTP on free ports; returns (process, target, http_base)."""
    log = os.path.join(work, f"{name}.log")
    server, target = start_server(server_bin, os.path.join(work, "server.db"), log,
                                  "--http_listen=127.0.0.1:0", *flags)
    m = re.search(r"http_port=(\d+)", open(log).read())
    check(m, "no http_port in the log")
    return server, target, f"http://127.0.0.1:{m.group(1)}"


def stop(server):
    server.terminate()
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()


def cli_json(cli_bin, target, *args):
    out = subprocess.run([cli_bin, f"--target={target}", *args, "--json"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise AssertionError(f"deniable {' '.join(args)}: {out.stderr}")
    return json.loads(out.stdout)


def counts_by_label(cli_bin, target, metric, label="lang"):
    """{label value: n} from the server."""
    try:
        p = cli_json(cli_bin, target, "prevalence", f"--metric={metric}", f"--group_by={label}")
    except AssertionError as e:
        if "has 0 reports" in str(e):
            return {"n": "0"}, {}
        raise
    groups = p.get("groups", [])
    out = {}
    for g in groups:
        value = g.get("group") or g.get("group_value") or g.get("groupValue") or ""
        value = value.split("=", 1)[-1]
        out[value] = int(g["n"])
    return p, out


def have_chromium():
    return os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)


def browser(work):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
                 f"--user-data-dir={os.path.join(work, 'profile')}"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


def run_page(driver, url, timeout=60):
    """Loads url and waits for the page's result (title "done" or "failed"); returns its JSON."""
    driver.get(url)
    deadline = time.time() + timeout
    while time.time() < deadline:
        if driver.title in ("done", "failed"):
            result = json.loads(driver.find_element("id", "result").text)
            if driver.title == "failed":
                logs = []
                try:
                    logs = driver.get_log("browser")
                except Exception:
                    pass
                raise AssertionError(f"page failed: {result} {logs}")
            return result
        time.sleep(0.05)
    raise AssertionError(f"page did not finish in {timeout} s: {url}")
