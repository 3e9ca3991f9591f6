#!/usr/bin/python3
"""The dashboard in a real browser (headless Chromium through chromedriver and Selenium).

Starts the real deniable-server with tokens and the HTTP listener, replays the 1988 Chile survey
with region labels through the real CLI, then drives the page: a wrong token shows an error (not
a blank page); the analyst token, the metric, the region breakdown and the weekly series show
the same n, estimate and interval ends (and manipulation bound) as the JSON API, and the
charts' canvases are drawn.
Saves a screenshot to SCREENSHOT. Exits 77 (CTest: skipped) only if chromium is absent.

Usage: dashboard_browser_test.py SERVER_BINARY CLI_BINARY CSV SCREENSHOT
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from components import absent  # noqa: E402
from test_server import start_server  # noqa: E402
from http_api_test import add_token, http_base  # noqa: E402
from checks import check  # noqa: E402

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


def api(base, method, body, token):
    request = urllib.request.Request(f"{base}/v1/{method}", data=json.dumps(body).encode(),
                                     method="POST", headers={"Authorization": f"Bearer {token}",
                                                              "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())


def pct(x):
    return f"{x * 100:.2f} %"


def browser(work):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
                 "--window-size=1200,2000", f"--user-data-dir={os.path.join(work, 'profile')}"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


def canvas_drawn(driver, canvas_id):
    """True when the canvas holds non-transparent pixels."""
    return driver.execute_script(
        "const c = document.getElementById(arguments[0]);"
        "if (!c || !c.width || !c.height) return false;"
        "const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;"
        "let painted = 0; for (let i = 3; i < d.length; i += 4) if (d[i] > 0) painted++;"
        "return painted > 500;", canvas_id)


def main():
    server_bin, cli_bin, csv, screenshot = sys.argv[1:5]
    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        absent("chromium or chromedriver")
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import Select, WebDriverWait

    work = tempfile.mkdtemp(prefix="deniable_dashboard_")
    db = os.path.join(work, "d.db")
    log = os.path.join(work, "server.log")
    # The replay runs before tokens exist (the SDK sends tokens only over TLS); then the server
    # restarts with an analyst token, so the page must send one.
    server, target = start_server(server_bin, db, log)
    try:
        subprocess.run([cli_bin, f"--target={target}", "create-metric",
                        "--name=chile_vote_yes", "--design=two_coin",
                        "--description=Will you vote Yes in the 1988 plebiscite?"],
                       check=True, capture_output=True)
        subprocess.run([cli_bin, f"--target={target}", "replay", "--metric=chile_vote_yes",
                        f"--csv={csv}", "--column=vote", "--yes=Y", "--label_columns=region"],
                       check=True, capture_output=True)
    finally:
        server.terminate()
        server.wait(timeout=30)
    analyst = add_token(server_bin, db, "analyst")
    server, target = start_server(server_bin, db, log, "--http_listen=127.0.0.1:0")
    base = http_base(log)
    driver = None
    try:
        expected = api(base, "QueryService/GetPrevalence", {"metric": "chile_vote_yes"}, analyst)
        regions = api(base, "QueryService/GetPrevalence",
                      {"metric": "chile_vote_yes", "groupBy": "region"}, analyst)
        check(expected["n"] == 2532, expected)  # int64 counts: JSON numbers

        driver = browser(work)
        wait = WebDriverWait(driver, 20)
        driver.get(base + "/")
        # A wrong token: an error naming the refusal, not a blank page.
        driver.find_element(By.ID, "token").send_keys("dn_wrong")
        driver.find_element(By.ID, "token-save").click()
        wait.until(ec.visibility_of_element_located((By.ID, "error")))
        error = driver.find_element(By.ID, "error").text
        check("401" in error and "UNAUTHENTICATED" in error, error)
        check(not driver.find_elements(By.CSS_SELECTOR, "#metrics tbody tr"))

        # The analyst token, kept in sessionStorage.
        driver.find_element(By.ID, "token").clear()
        driver.find_element(By.ID, "token").send_keys(analyst)
        driver.find_element(By.ID, "token-save").click()
        row = wait.until(ec.element_to_be_clickable(
            (By.CSS_SELECTOR, '#metrics tbody tr[data-metric="chile_vote_yes"]')))
        check(driver.execute_script("return sessionStorage.getItem('deniable.token')") == analyst)
        wait.until(lambda d: row.find_element(By.CSS_SELECTOR, ".reports").text == "2532")
        check(driver.find_element(By.ID, "error").is_displayed() is False)
        row.click()
        wait.until(lambda d: d.find_element(By.ID, "p-n").text == str(expected["n"]))
        figure = lambda i: driver.find_element(By.ID, i)  # noqa: E731
        check(float(figure("p-estimate").get_attribute("data-value")) == \
            expected["estimateUnbiased"])
        check(figure("p-estimate").text.startswith(pct(expected["estimateUnbiased"])))
        check(float(figure("p-lower").get_attribute("data-value")) == expected["ciLower"])
        check(float(figure("p-upper").get_attribute("data-value")) == expected["ciUpper"])
        check(figure("p-lower").text == pct(expected["ciLower"]))
        check(figure("p-upper").text == pct(expected["ciUpper"]))
        # Beside the interval: the manipulation bound for 1 % of n (issue 41).
        bound = expected["manipulation"]
        check(float(figure("p-manipulation").get_attribute("data-value")) == bound["bound"])
        check(int(figure("p-manipulation").get_attribute("data-fake-reports")) ==
              bound["fakeReports"] == -(-expected["n"] // 100))
        # In words, with m and the bound in percentage points as the JSON has them.
        check(figure("p-manipulation").text.startswith(
            f"{bound['fakeReports']} fake reports could move this estimate by at most "
            f"{bound['bound'] * 100:.2f} points (the honest reports' estimate is in "
            f"[{pct(bound['honestLower'])}, {pct(bound['honestUpper'])}])"),
            figure("p-manipulation").text)
        # The server's default for the design (no method sent), named in words.
        check(figure("p-method").get_attribute("data-value") == expected["method"])
        check(figure("p-method").text.startswith("Wilson at 95 %"), figure("p-method").text)
        check("default" in figure("p-method").text, figure("p-method").text)

        # Region breakdown: bars with whiskers and a table equal to the API's groups.
        driver.find_element(By.ID, "group-go").click()
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#groups-table tbody tr")) ==
                   len(regions["groups"]))
        for g in regions["groups"]:
            cells = driver.find_elements(
                By.CSS_SELECTOR, f'#groups-table tbody tr[data-group="{g["groupValue"]}"] td')
            check(cells[1].text == str(g["n"]), (cells[1].text, g))
            check(float(cells[2].get_attribute("data-value")) == g["estimateUnbiased"])
            check(float(cells[3].get_attribute("data-lower")) == g["ciLower"])
            check(float(cells[3].get_attribute("data-upper")) == g["ciUpper"])
        check(canvas_drawn(driver, "groups-chart"))

        # Weekly series: a line with its interval band.
        Select(driver.find_element(By.ID, "bucket")).select_by_value("WEEK")
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#series-table tbody tr"))
        weekly = driver.find_elements(By.CSS_SELECTOR, "#series-table tbody tr td")
        check(weekly[1].text == "2532", [c.text for c in weekly])
        check(canvas_drawn(driver, "series-chart"))
        # Calendar-month buckets: the API's month series, row for row.
        Select(driver.find_element(By.ID, "bucket")).select_by_value("MONTH")
        wait.until(lambda d: d.find_element(By.ID, "series-chart").get_attribute("data-bucket")
                   == "MONTH")
        monthly = api(base, "QueryService/GetSeries", {
            "metric": "chile_vote_yes", "bucket": "MONTH",
            "startTimeSeconds": figure("range-text").get_attribute("data-start"),
            "endTimeSeconds": figure("range-text").get_attribute("data-end")}, analyst)
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#series-table tbody tr")) ==
                   len(monthly["buckets"]))
        rows = driver.find_elements(By.CSS_SELECTOR, "#series-table tbody tr")
        check(sum(int(b["n"]) for b in monthly["buckets"]) == 2532, monthly)
        for r, b in zip(rows, monthly["buckets"]):
            check(r.find_elements(By.TAG_NAME, "td")[1].text == str(b["n"]), (r.text, b))
        Select(driver.find_element(By.ID, "bucket")).select_by_value("WEEK")

        # Another interval method changes the figures to the API's for that method.
        Select(driver.find_element(By.ID, "method")).select_by_value("CLOPPER_PEARSON")
        cp = api(base, "QueryService/GetPrevalence",
                 {"metric": "chile_vote_yes", "method": "CLOPPER_PEARSON"}, analyst)
        wait.until(lambda d: d.find_element(By.ID, "p-lower").text == pct(cp["ciLower"]))
        check(driver.find_element(By.ID, "p-upper").text == pct(cp["ciUpper"]))
        wait.until(lambda d: d.find_element(By.ID, "design-figures").text)
        check("posterior" in driver.find_element(By.ID, "design-figures").text)
        Select(driver.find_element(By.ID, "method")).select_by_value("")  # the server's default
        wait.until(lambda d: d.find_element(By.ID, "p-lower").text == pct(expected["ciLower"]))
        check("default" in figure("p-method").text, figure("p-method").text)
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#groups-table tbody tr"))
        driver.execute_script("window.scrollTo(0, 0)")
        driver.save_screenshot(screenshot)
        print(f"dashboard: OK (screenshot {screenshot})")
    finally:
        if driver is not None:
            driver.quit()
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
