#!/usr/bin/python3
"""The dashboard's view of a categorical metric (issue 14) in headless Chromium.

Starts the real deniable-server with the HTTP listener, creates the 4-category metric
`chile_vote` (Y, N, U, A; k-RR at epsilon = ln 3) and replays the 1988 Chile survey's vote with
region labels, spread over 3 days, through the real CLI (each respondent's device randomizes its
category with the C++ SDK). Then drives the page: the yes/no figures are hidden; the shares
table shows, for each category, the same support count, unbiased estimate, consistent
(norm-sub) share, standard error, per-category and simultaneous interval as the JSON API, for
Sidak and then for Bonferroni; the daily series has one line per category and its table equals
the API's buckets; the region breakdown equals the API's groups; the design figures describe
the categorical design; the charts' canvases are drawn. Saves a screenshot to SCREENSHOT.
Exits 77 (CTest: skipped) only if chromium is absent.

Usage: dashboard_categorical_test.py SERVER_BINARY CLI_BINARY CSV SCREENSHOT
"""
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from components import absent  # noqa: E402
from test_server import start_collector  # noqa: E402
from dashboard_browser_test import (CHROMEDRIVER, CHROMIUM, api, browser,  # noqa: E402
                                    canvas_drawn, pct)
from checks import check  # noqa: E402

HOUR = 3600
VOTE = ["Y", "N", "U", "A"]


def check_shares_table(driver, expected):
    """The shares table equals the API's shares, figure by figure (raw and formatted)."""
    from selenium.webdriver.common.by import By
    rows = driver.find_elements(By.CSS_SELECTOR, "#shares-table tbody tr")
    check([r.get_attribute("data-category") for r in rows] == VOTE, [r.text for r in rows])
    for row, s in zip(rows, expected["shares"]):
        cells = row.find_elements(By.TAG_NAME, "td")
        check(cells[0].text == s["category"], (cells[0].text, s))
        check(cells[1].text == str(s["supportCount"]), (cells[1].text, s))
        for i, field in ((2, "estimateUnbiased"), (3, "estimateConsistent"),
                         (4, "standardError")):
            check(float(cells[i].get_attribute("data-value")) == s[field], (field, s))
            check(cells[i].text == pct(s[field]), (cells[i].text, field, s))
        check(float(cells[5].get_attribute("data-lower")) == s["ciLower"], s)
        check(float(cells[5].get_attribute("data-upper")) == s["ciUpper"], s)
        check(cells[5].text == f"[{pct(s['ciLower'])}, {pct(s['ciUpper'])}]", cells[5].text)
        check(float(cells[6].get_attribute("data-lower")) == s["simultaneousLower"], s)
        check(float(cells[6].get_attribute("data-upper")) == s["simultaneousUpper"], s)
        check(cells[6].text == \
            f"[{pct(s['simultaneousLower'])}, {pct(s['simultaneousUpper'])}]", cells[6].text)


def main():
    server_bin, cli_bin, csv, screenshot = sys.argv[1:5]
    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        absent("chromium or chromedriver")
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import Select, WebDriverWait

    work = tempfile.mkdtemp(prefix="deniable_dashboard_categorical_")
    server, target, base = start_collector(server_bin, os.path.join(work, "d.db"),
                                           os.path.join(work, "server.log"))
    driver = None
    try:
        subprocess.run([cli_bin, f"--target={target}", "create-metric", "--name=chile_vote",
                        "--categories=Y,N,U,A", "--design=categorical", "--epsilon=1.0986",
                        "--description=How will you vote in the 1988 plebiscite?"],
                       check=True, capture_output=True)
        subprocess.run([cli_bin, f"--target={target}", "replay", "--metric=chile_vote",
                        f"--csv={csv}", "--column=vote", "--label_columns=region",
                        "--spread=3d"], check=True, capture_output=True)
        expected = api(base, "QueryService/GetPrevalence", {"metric": "chile_vote"}, "")
        check(expected["n"] == 2532, expected)  # int64 counts: JSON numbers
        check([s["category"] for s in expected["shares"]] == VOTE, expected)
        bonferroni = api(base, "QueryService/GetPrevalence",
                         {"metric": "chile_vote", "simultaneous": "BONFERRONI"}, "")
        regions = api(base, "QueryService/GetPrevalence",
                      {"metric": "chile_vote", "groupBy": "region"}, "")

        driver = browser(work)
        wait = WebDriverWait(driver, 20)
        driver.get(base + "/")
        row = wait.until(ec.element_to_be_clickable(
            (By.CSS_SELECTOR, '#metrics tbody tr[data-metric="chile_vote"]')))
        check("4 categories" in row.text, row.text)
        wait.until(lambda d: row.find_element(By.CSS_SELECTOR, ".reports").text == "2532")
        row.click()
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#shares-table tbody tr")) == 4)
        wait.until(lambda d: d.find_element(By.ID, "p-n").text == "2532")
        check(driver.find_element(By.ID, "shares").is_displayed())
        check(not driver.find_element(By.ID, "p-estimate").is_displayed())  # yes/no figures
        check_shares_table(driver, expected)
        legend = driver.find_element(By.ID, "shares-legend")
        check(legend.get_attribute("data-method") == "sidak", legend.text)
        check(float(legend.get_attribute("data-per-category-level")) == \
            expected["perCategoryLevel"])
        check("norm_sub" in legend.text and "Sidak" in legend.text, legend.text)
        central = driver.find_element(By.ID, "p-central")
        check(float(central.get_attribute("data-value")) == expected["centralEpsilon"])
        check(canvas_drawn(driver, "shares-chart"))
        check(not driver.find_element(By.ID, "error").is_displayed(),
              driver.find_element(By.ID, "error").text)

        # Bonferroni: wider simultaneous intervals, the API's.
        Select(driver.find_element(By.ID, "simultaneous")).select_by_value("BONFERRONI")
        wait.until(lambda d: d.find_element(By.ID, "shares-legend").get_attribute(
            "data-method") == "bonferroni")
        check_shares_table(driver, bonferroni)
        check("Bonferroni" in driver.find_element(By.ID, "shares-legend").text)
        Select(driver.find_element(By.ID, "simultaneous")).select_by_value("SIDAK")
        wait.until(lambda d: d.find_element(By.ID, "shares-legend").get_attribute(
            "data-method") == "sidak")
        check_shares_table(driver, expected)

        # The daily series (the page's 30-day range, automatic buckets: days): one line per
        # category from the consistent shares, a band per category; the table equals the API's.
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#series-table tbody tr"))
        now = int(time.time())
        range_text = driver.find_element(By.ID, "range-text")
        start, end = range_text.get_attribute("data-start"), range_text.get_attribute("data-end")
        check(int(end) - int(start) == 30 * 24 * HOUR and int(end) % HOUR == 0, (start, end))
        check(driver.find_element(By.ID, "series-chart").get_attribute("data-bucket") == "DAY")
        series = api(base, "QueryService/GetSeries", {
            "metric": "chile_vote", "bucket": "DAY", "startTimeSeconds": start,
            "endTimeSeconds": end}, "")
        buckets = series["buckets"]
        check(len([b for b in buckets if not b["suppressed"]]) >= 3, buckets)
        check(sum(int(b["n"]) for b in buckets) == 2532, buckets)
        rows = driver.find_elements(By.CSS_SELECTOR, "#series-table tbody tr")
        check(len(rows) == len(buckets), (len(rows), len(buckets)))
        for row, b in zip(rows, buckets):
            check(row.get_attribute("data-start") == str(b["startTimeSeconds"]), (row.text, b))
            cells = row.find_elements(By.TAG_NAME, "td")
            check(cells[1].text == str(b["n"]), (cells[1].text, b))
            if b["suppressed"]:  # too few reports: no figure
                check([c.text for c in cells[2:6]] == ["suppressed"] * 4, row.text)
                continue
            check(len(b["shares"]) == 4, b)
            for v, s in enumerate(b["shares"]):
                c = cells[2 + v]
                check(c.get_attribute("data-category") == VOTE[v])
                check(float(c.get_attribute("data-value")) == s["estimateConsistent"], (v, b))
                check(float(c.get_attribute("data-unbiased")) == s["estimateUnbiased"], (v, b))
                check(float(c.get_attribute("data-lower")) == s["ciLower"], (v, b))
                check(float(c.get_attribute("data-upper")) == s["ciUpper"], (v, b))
                check(c.text.startswith(pct(s["estimateConsistent"])), c.text)
        check(driver.execute_script(
            "return Chart.getChart('series-chart').data.datasets"
            ".filter(d => d.line).map(d => d.label)") == VOTE)
        check(canvas_drawn(driver, "series-chart"))
        # Each category's band: its interval in percent, clipped to [0, 100].
        for v, name in enumerate(VOTE):
            upper = driver.execute_script(
                "return Chart.getChart('series-chart').data.datasets"
                ".find(d => d.label === arguments[0] + ' interval upper').data", name)
            check(upper == [None if b["suppressed"] else
                            min(100, max(0, b["shares"][v]["ciUpper"] * 100)) for b in buckets],
                  (name, upper))

        # The region breakdown: each group's shares, the API's.
        driver.find_element(By.ID, "group-go").click()
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#groups-table tbody tr")) ==
                   len(regions["groups"]))
        for g in regions["groups"]:
            cells = driver.find_elements(
                By.CSS_SELECTOR, f'#groups-table tbody tr[data-group="{g["groupValue"]}"] td')
            check(cells[1].text == str(g["n"]), (cells[1].text, g))
            for v, s in enumerate(g["shares"]):
                check(float(cells[2 + v].get_attribute("data-value")) == s["estimateUnbiased"])
                check(float(cells[2 + v].get_attribute("data-lower")) == s["simultaneousLower"])
                check(float(cells[2 + v].get_attribute("data-upper")) == s["simultaneousUpper"])
        check(canvas_drawn(driver, "groups-chart"))

        # The design figures describe the categorical design through the metric.
        wait.until(lambda d: "k = 4" in d.find_element(By.ID, "design-figures").text)
        figures = driver.find_element(By.ID, "design-figures").text
        check("K_RR" in figures and "posterior after a report supporting it" in figures, figures)
        # The planner's figures for all 4 shares together equal the API's (worst case over shares).
        wait.until(lambda d: "all shares together" in d.find_element(By.ID, "plan").text)
        metric = [m for m in api(base, "QueryService/ListMetrics", {}, "")["metrics"]
                  if m["name"] == "chile_vote"][0]
        plan = api(base, "QueryService/PlanSurvey", {
            "design": metric["design"]["parameters"],
            "categories": ["Y", "N", "U", "A"], "halfWidth": 0.03, "confidenceLevel": 0.95,
            "assumedPrevalence": -1}, "")
        plan_text = driver.find_element(By.ID, "plan").text
        check(f'{plan["reportsNeededSimultaneousWorstCase"]} for' in plan_text, (plan, plan_text))
        check(f'{plan["reportsNeededWorstCase"]} for' in plan_text, (plan, plan_text))
        check("not available" not in plan_text, plan_text)
        check(not driver.find_element(By.ID, "error").is_displayed(), \
            driver.find_element(By.ID, "error").text)

        # The difference per category, second window minus first, in percentage points.
        split = time.strftime("%Y-%m-%dT%H:00", time.gmtime(now - 36 * HOUR))
        driver.execute_script("document.getElementById('diff-split').value = arguments[0]", split)
        driver.find_element(By.ID, "diff-go").click()
        at = str((now - 36 * HOUR) // HOUR * HOUR)
        wait.until(lambda d: f"to {time.strftime('%Y-%m-%d %H:00', time.gmtime(int(at)))}" in
                   d.find_element(By.ID, "diff-result").text)
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#diff-shares tbody tr")) == 4)
        diff = api(base, "QueryService/GetDifference", {
            "first": {"metric": "chile_vote", "startTimeSeconds": start, "endTimeSeconds": at},
            "second": {"metric": "chile_vote", "startTimeSeconds": at, "endTimeSeconds": end}},
            "")
        rows = driver.find_elements(By.CSS_SELECTOR, "#diff-shares tbody tr")
        check(len(rows) == 4)
        for v, (row, s) in enumerate(zip(rows, diff["shares"])):
            cells = row.find_elements(By.TAG_NAME, "td")
            check(cells[0].text == s["category"])
            # The page shows second minus first whichever way the API's field runs (its proto
            # says first - second).
            change = (diff["second"]["shares"][v]["estimateUnbiased"] -
                      diff["first"]["shares"][v]["estimateUnbiased"])
            flipped = abs(s["difference"] + change) < abs(s["difference"] - change)
            lower, upper = (-s["ciUpper"], -s["ciLower"]) if flipped else (s["ciLower"],
                                                                          s["ciUpper"])
            check(abs(float(cells[3].get_attribute("data-value")) - change) < 1e-12,
                  (s, row.text))
            check(float(cells[4].get_attribute("data-lower")) == lower, s)
            check(float(cells[4].get_attribute("data-upper")) == upper, s)
            words = ("did not change" if f"{abs(change) * 100:.2f}" == "0.00" else
                     f"{'rose' if change > 0 else 'fell'} by {abs(change) * 100:.2f} points")
            check(words in cells[5].text, (s, cells[5].text))

        driver.execute_script("document.getElementById('detail').scrollIntoView()")
        driver.save_screenshot(screenshot)
        print("shares:", [(s["category"], round(s["estimateUnbiased"], 4),
                           round(s["simultaneousLower"], 4), round(s["simultaneousUpper"], 4))
                          for s in expected["shares"]])
        print(f"dashboard (categorical): OK (screenshot {screenshot})")
    finally:
        if driver is not None:
            driver.quit()
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
