#!/usr/bin/python3
"""The dashboard uses its width (issue 38) in headless Chromium.

Starts the real deniable-server with the dashboard fixture's metrics (tests/http/
dashboard_fixture.py, with its numeric metrics: the 1988 Chile survey's age and income), then
opens the categorical `chile_vote` and the histogram at 1366x900 and at 390x844 and checks:
  - every cell of the shares / histogram table and of the breakdown table ends inside its
    scrolling box and inside the window (nothing hides behind an inner scroll);
  - at 1366 px these tables fit their box (scrollWidth <= clientWidth) and the page uses the
    width (the main column is wider than 1100 px);
  - at 390 px the estimate of a row comes before its raw count;
  - the breakdown's y axis holds every drawn interval (categorical, histogram and mean).
Saves a screenshot of each view to SHOTS/PREFIX-<metric>-<width>.png before checking, and
SHOTS/PREFIX-dashboard.png (the yes/no metric's daily series at 1366 px: docs/dashboard.png).
Exits 77 (CTest: skipped) only if chromium is absent.

Usage: dashboard_layout_test.py SERVER_BINARY CLI_BINARY CSV SHOTS [PREFIX]
"""
import base64
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from components import absent  # noqa: E402
from dashboard_fixture import (CHROMEDRIVER, CHROMIUM, chart, hooked_browser,  # noqa: E402
                               panel_state, set_viewport, start_with_metrics)
from checks import CheckFailed, check  # noqa: E402

# metric -> (the table of its answer's shares, the column of the unbiased estimate); column 1
# holds a raw count.
VIEWS = {"chile_vote": ("shares-table", 2), "chile_income_histogram": ("histogram-table", 3)}

# For each non-empty cell of the table: [right edge, the scrolling box's visible right edge,
# the window's width, left edge, the box's left edge]; and the table's [scrollWidth, clientWidth]
# of its box.
CELLS = r"""
const table = document.getElementById(arguments[0]), wrap = table.closest(".table-wrap");
const box = wrap.getBoundingClientRect();
const cells = [...table.querySelectorAll("tbody td")].filter((td) => td.textContent.trim());
return { cells: cells.map((td) => {
           const r = td.getBoundingClientRect();
           return [td.textContent, r.right, box.left + wrap.clientWidth, innerWidth, r.left,
                   box.left]; }),
         fit: [wrap.scrollWidth, wrap.clientWidth],
         main: document.querySelector("main").getBoundingClientRect().width };
"""


def check_table(driver, table, width):
    got = driver.execute_script(CELLS, table)
    check(got["cells"], (table, "no cells"))
    for text, right, box_right, inner, left, box_left in got["cells"]:
        check(right <= box_right + 0.5 and right <= inner + 0.5 and left >= box_left - 0.5,
              (table, width, text, right, box_right, inner, left, box_left))
    if width >= 1366:
        check(got["fit"][0] <= got["fit"][1], (table, width, got["fit"]))
        check(got["main"] > 1100, (width, got["main"]))


def check_order(driver, table, estimate, width):
    """On a phone (stacked rows) a row's unbiased estimate comes before its raw count."""
    if width >= 600:
        return
    tops = driver.execute_script(
        "const c = document.querySelector(`#${arguments[0]} tbody tr`).cells;"
        "return [c[1].getBoundingClientRect().top, c[arguments[1]].getBoundingClientRect().top]",
        table, estimate)
    check(tops[1] < tops[0], (table, "estimate after the count", tops))


def check_axis(driver, scale):
    """The breakdown's y axis holds every drawn interval: its maximum is at least the largest
    upper end in the breakdown's table (times `scale`: 100 for shares), its minimum at most the
    smallest lower end."""
    y = chart(driver, "groups-chart", "[c.scales.y.min, c.scales.y.max]")
    ends = driver.execute_script(
        "const tds = [...document.querySelectorAll('#groups-table td[data-upper]')];"
        "return [Math.min(...tds.map((td) => +td.dataset.lower)),"
        " Math.max(...tds.map((td) => +td.dataset.upper))]")
    check(y[0] <= ends[0] * scale and y[1] >= ends[1] * scale, ("axis", y, ends, scale))


def main():
    server_bin, cli_bin, csv, shots = sys.argv[1:5]
    prefix = sys.argv[5] if len(sys.argv) > 5 else "after"
    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        absent("chromium or chromedriver")
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    os.makedirs(shots, exist_ok=True)
    work = tempfile.mkdtemp(prefix="deniable_dashboard_layout_")
    server, base = start_with_metrics(server_bin, cli_bin, csv, work, numeric=True)
    driver = None
    try:
        driver = hooked_browser(work, 1366, 900)
        wait = WebDriverWait(driver, 30)
        failures = []
        for width, height in ((1366, 900), (390, 844)):
            set_viewport(driver, width, height)
            for metric, (table, estimate) in VIEWS.items():
                driver.get("about:blank")
                driver.get(f"{base}/#metric={metric}")
                wait.until(lambda d: all(panel_state(d, p) == "ready"
                                         for p in ("prevalence", "groups", "series")))
                wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, f"#{table} tbody tr"))
                shot = driver.execute_cdp_cmd("Page.captureScreenshot", {
                    "format": "png", "captureBeyondViewport": True})  # the whole page
                with open(os.path.join(shots, f"{prefix}-{metric}-{width}.png"), "wb") as f:
                    f.write(base64.b64decode(shot["data"]))
                scale = 100 if metric == "chile_vote" else 1  # shares in percent
                for name, step in (
                        ("table", lambda: check_table(driver, table, width)),
                        ("breakdown", lambda: check_table(driver, "groups-table", width)),
                        ("order", lambda: check_order(driver, table, estimate, width)),
                        ("axis", lambda: check_axis(driver, scale))):
                    try:
                        step()
                    except CheckFailed as e:
                        failures.append((metric, width, name, str(e)))
        # The age's breakdown (one_bit_mean: the mean by region, whiskers its interval).
        driver.get("about:blank")
        driver.get(f"{base}/#metric=chile_age")
        wait.until(lambda d: panel_state(d, "groups") == "ready")
        try:
            check_axis(driver, 1)
        except CheckFailed as e:
            failures.append(("chile_age", 390, "axis", str(e)))
        # The docs' picture (docs/dashboard.png): the yes/no metric's daily series over 28 days.
        set_viewport(driver, 1366, 1900)
        driver.get("about:blank")
        driver.get(f"{base}/#metric=chile_vote_yes&bucket=DAY")
        wait.until(lambda d: all(panel_state(d, p) == "ready"
                                 for p in ("prevalence", "groups", "series")))
        driver.save_screenshot(os.path.join(shots, f"{prefix}-dashboard.png"))
        check(not failures, failures)
        print(f"dashboard layout: OK (screenshots in {shots})")
    finally:
        if driver is not None:
            driver.quit()
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
