#!/usr/bin/python3
"""The dashboard's top values of a heavy-hitters metric (issue 40), in headless Chromium against
the real collector.

A heavy-hitters metric (strings of at most 8 bytes, epsilon 4) gets 5000 devices through the
real CLI (`deniable replay --string_column`): 2000 send "libs", 2000 send "<script>" and 1000 one
of six other sections (fixed seed). Selecting it on the dashboard:

1. shows no error (the prevalence, series, breakdown and difference panels, which the collector
   refuses for strings, are hidden and idle), the metrics table's count is the answer's devices
   and the heading says "Top values";
2. states the detection threshold (the API's, as a percentage) above the table;
3. lists the API's GetTopValues answer row by row (value, share, both intervals, above
   threshold), "libs" and "<script>" among them above the threshold;
4. shows "<script>" as text: the cell's text is the value, its HTML is escaped, and no element
   came from a value;
5. switching to a yes/no metric hides the top values and shows its prevalence again.

Exits 77 (CTest: skipped) only if chromium is absent.

Usage: dashboard_top_test.py SERVER_BINARY CLI_BINARY SHOT_DIR
"""
import base64
import json
import os
import random
import subprocess
import sys
import tempfile
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from components import absent  # noqa: E402
from checks import check  # noqa: E402
from dashboard_fixture import (CHROMEDRIVER, CHROMIUM, hooked_browser, panel_state,  # noqa: E402
                               pick)
from test_server import start_collector  # noqa: E402


def api(base, method, body):
    request = urllib.request.Request(f"{base}/v1/{method}", data=json.dumps(body).encode(),
                                     method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())


def pct(x):
    return f"{x * 100:.2f} %"


def main():
    server_bin, cli_bin, shots = sys.argv[1:4]
    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        absent("chromium or chromedriver")
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    os.makedirs(shots, exist_ok=True)
    work = tempfile.mkdtemp(prefix="deniable_dashboard_top_")
    server, target, base = start_collector(server_bin, os.path.join(work, "d.db"),
                                           os.path.join(work, "server.log"))
    driver = None
    try:
        cli = [cli_bin, f"--target={target}"]
        subprocess.run(cli + ["create-metric", "--name=package_section", "--design=heavy_hitters",
                              "--epsilon=4", "--max_length=8",
                              "--description=The Debian section of a package"],
                       check=True, capture_output=True)
        rng = random.Random(40)
        rows = ["libs"] * 2000 + ["<script>"] * 2000 + [
            rng.choice(["doc", "net", "devel", "utils", "x11", "perl"]) for _ in range(1000)]
        rng.shuffle(rows)
        sections = os.path.join(work, "sections.csv")
        with open(sections, "w") as f:
            f.write("section\n" + "\n".join(rows) + "\n")
        subprocess.run(cli + ["replay", "--metric=package_section", f"--csv={sections}",
                              "--string_column=section"], check=True, capture_output=True)
        answers = os.path.join(work, "answers.csv")
        with open(answers, "w") as f:
            f.write("answer,region\n" + "Y,north\nN,south\nN,north\n" * 40)
        subprocess.run(cli + ["replay", "--metric=asked_yes_no", f"--csv={answers}",
                              "--column=answer", "--yes=Y", "--label_columns=region"],
                       check=True, capture_output=True)

        driver = hooked_browser(work, 1200, 1600)
        wait = WebDriverWait(driver, 20)
        text = lambda i: driver.find_element(By.ID, i).text  # noqa: E731
        driver.get(base + "/")
        # The metrics table is filled when ListMetrics answers, after the page's load event.
        row = wait.until(lambda d: d.find_elements(
            By.CSS_SELECTOR, '#metrics tbody tr[data-metric="package_section"]'))[0]
        wait.until(lambda d: row.find_element(By.CSS_SELECTOR, ".reports").text not in ("", "\u2026"))
        check(row.find_element(By.CSS_SELECTOR, ".reports").text == "5000",
              row.find_element(By.CSS_SELECTOR, ".reports").text)
        pick(driver, wait, "package_section")
        wait.until(lambda d: panel_state(d, "top") == "ready" and panel_state(d, "design") == "ready")
        range_text = driver.find_element(By.ID, "range-text")
        start, end = range_text.get_attribute("data-start"), range_text.get_attribute("data-end")
        expected = api(base, "QueryService/GetTopValues", {
            "metric": "package_section", "confidenceLevel": 0.95,
            "startTimeSeconds": start, "endTimeSeconds": end})

        # 1. No error: the panels the collector refuses for strings are hidden and idle.
        check(driver.find_element(By.ID, "error").is_displayed() is False, text("error"))
        check(text("metric-kind") == "Top values", text("metric-kind"))
        for panel in ("prevalence", "series", "groups", "diff"):
            check(panel_state(driver, panel) == "idle", (panel, panel_state(driver, panel)))
            check(not driver.find_element(By.CSS_SELECTOR, f'[data-panel="{panel}"]').is_displayed(),
                  panel)
        requested = [r["method"] for r in driver.execute_script("return window.__requests")]
        check("QueryService/GetSeries" not in requested, requested)

        # 2. The detection threshold, stated above the table.
        threshold = driver.find_element(By.ID, "top-threshold")
        check(float(threshold.get_attribute("data-value")) == expected["detectionThreshold"])
        check(pct(expected["detectionThreshold"]) in threshold.text, threshold.text)
        table = driver.find_element(By.ID, "top-table")
        check(threshold.location["y"] + threshold.size["height"] <= table.location["y"],
              (threshold.location, table.location))

        # 3. The API's answer, row by row.
        values = expected["values"]
        # Keyed by bytes: discovery may also return a value that is not UTF-8 (a false prefix).
        found = {base64.b64decode(v["value"]): v for v in values}
        check(b"libs" in found and b"<script>" in found, list(found))
        check(found[b"libs"]["aboveThreshold"] and found[b"<script>"]["aboveThreshold"], values)
        body_rows = driver.find_elements(By.CSS_SELECTOR, "#top-table tbody tr")
        check(len(body_rows) == len(values), (len(body_rows), len(values)))
        for tr, v in zip(body_rows, values):
            cells = tr.find_elements(By.TAG_NAME, "td")
            name = base64.b64decode(v["value"])
            if all(0x20 <= c < 0x7f and c != 0x5c for c in name):
                check(cells[1].text == name.decode(), (cells[1].text, name))
                check(tr.get_attribute("data-value") == name.decode())
            check(float(cells[2].get_attribute("data-value")) == v["share"])
            check(cells[2].text == pct(v["share"]), (cells[2].text, v["share"]))
            check(float(cells[3].get_attribute("data-lower")) == v["lower"])
            check(float(cells[3].get_attribute("data-upper")) == v["upper"])
            check(cells[3].text == f"[{pct(v['lower'])}, {pct(v['upper'])}]", cells[3].text)
            check(float(cells[4].get_attribute("data-lower")) == v["simultaneousLower"])
            check(float(cells[4].get_attribute("data-upper")) == v["simultaneousUpper"])
            check(cells[6].text == ("yes" if v.get("aboveThreshold") else "no"), cells[6].text)

        # 4. "<script>" as text, never as markup.
        script_row = driver.find_element(By.CSS_SELECTOR, '#top-table tbody tr[data-value="<script>"]')
        cell = script_row.find_elements(By.TAG_NAME, "td")[1]
        check(cell.text == "<script>", cell.text)
        check(cell.get_attribute("innerHTML") == "&lt;script&gt;", cell.get_attribute("innerHTML"))
        check(driver.execute_script("return document.querySelectorAll('#top-table script').length") == 0)
        csv = driver.execute_script("return window.dashboardCsv('top-table')")
        check("\r\n<script>," in csv, csv)
        driver.save_screenshot(os.path.join(shots, "top-values.png"))

        # 5. Back to a yes/no metric: its prevalence, the top values hidden and emptied.
        pick(driver, wait, "asked_yes_no")
        wait.until(lambda d: panel_state(d, "prevalence") == "ready")
        check(text("p-n") == "120", text("p-n"))
        check(not driver.find_element(By.ID, "top-panel").is_displayed())
        check(not driver.find_elements(By.CSS_SELECTOR, "#top-table tbody tr"))
        check(driver.find_element(By.ID, "error").is_displayed() is False, text("error"))
        print("dashboard top values: ok")
    finally:
        if driver is not None:
            driver.quit()
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
