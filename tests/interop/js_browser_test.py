#!/usr/bin/env python3
"""The JavaScript SDK in headless Chromium against the real deniable-server: a page served from
another origin (a Python static server; the collector allows it with --http_cors_origins) makes
10 devices (one IndexedDB database each) report without sending; the server has nothing yet;
the page is reloaded, finds every report still queued, sends them; the server counts each once.

Usage: js_browser_test.py SERVER_BINARY CLI_BINARY   (exits 77, skipped, without chromium)
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from components import absent  # noqa: E402
from interop_lib import (REPO, browser, counts_by_label, have_chromium, run_page,  # noqa: E402
                         serve_directory, start_collector, stop)
from checks import check  # noqa: E402

DEVICES = 10


def main():
    server_bin, cli_bin = sys.argv[1:3]
    if not have_chromium():
        absent("chromium or chromedriver")
    work = tempfile.mkdtemp(prefix="deniable_js_browser_")
    pages, origin = serve_directory(os.path.join(REPO, "client", "js"))
    server, target, base = start_collector(server_bin, work, f"--http_cors_origins={origin}")
    driver = None
    try:
        subprocess.run([cli_bin, f"--target={target}", "create-metric", "--name=web_m",
                        "--design=two_coin", "--min_reports=1"], check=True, capture_output=True)
        driver = browser(work)
        page = f"{origin}/e2e_page/index.html?collector={base}&metric=web_m&devices={DEVICES}"
        queued = run_page(driver, page + "&phase=queue")
        check(queued == {"phase": "queue", "devices": DEVICES, "pending": DEVICES,
                          "acknowledged": 0, "ids": DEVICES, "repeated": DEVICES}, queued)
        _, counts = counts_by_label(cli_bin, target, "web_m")
        check(counts == {}, counts)  # nothing sent before the reload

        driver.refresh()  # the same page again; its IndexedDB databases survive
        sent = run_page(driver, page + "&phase=send")
        check(sent["pending"] == DEVICES and sent["acknowledged"] == DEVICES, sent)
        p, counts = counts_by_label(cli_bin, target, "web_m")
        check(counts == {"browser": DEVICES}, counts)

        # A page from an origin the collector does not allow is refused by the browser.
        other = f"http://localhost:{origin.rsplit(':', 1)[1]}"
        refused = run_page(driver, f"{other}/e2e_page/index.html?collector={base}"
                                   "&metric=web_m&devices=1&phase=simulate")
        raise AssertionError(f"a page from another origin reported: {refused}")
    except AssertionError as e:
        if "page failed" not in str(e) or "UNAVAILABLE" not in str(e):
            raise
        _, counts = counts_by_label(cli_bin, target, "web_m")
        check(counts == {"browser": DEVICES}, counts)
        print(f"browser: {DEVICES} reports queued in IndexedDB, survived a reload, counted once; "
              "a page from an origin not allowed was refused (CORS)")
    finally:
        if driver is not None:
            driver.quit()
        pages.shutdown()
        stop(server)
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
