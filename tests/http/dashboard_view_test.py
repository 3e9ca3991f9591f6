#!/usr/bin/python3
"""What the dashboard shows and how (issue 29), in headless Chromium against the real collector.

- Labels in words, raw names in tooltips: "two coins" (title twoCoin), no raw field names or
  long floats in the page.
- The server's default interval method: no `method` in the requests until one is picked; then
  the API's figures for it.
- Axes hold every interval: the breakdown's whiskers and the series' band; the categorical series
  draws the consistent shares (never below 0) with one band per category, and says so.
- The difference as second minus first, in percentage points, with the direction in words.
- The view in the address: a link reopens the same metric, range, bucket, breakdown, method and
  level (relative and custom ranges).
- CSV of every table; the breakdown's CSV equals the API's groups, and the button downloads it.
- A breakdown by a label no report carries shows the collector's refusal (naming the labels
  there are) and no bars.
- Both JSON forms: int64 as numbers and suppressed values as null read as the strings-and-zeros
  form does.
- Phone width (360 and 500 px): the page never scrolls sideways.
Saves screenshots to SHOT_DIR. Exits 77 (CTest: skipped) only if chromium is absent.

Usage: dashboard_view_test.py SERVER_BINARY CLI_BINARY CSV SHOT_DIR
"""
import csv as csvlib
import io
import json
import os
import re
import sys
import tempfile
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from components import absent  # noqa: E402
from checks import check, eventually  # noqa: E402
from dashboard_fixture import (CHROMEDRIVER, CHROMIUM, chart, hooked_browser,  # noqa: E402
                               panel_state, pick, set_viewport, start_with_metrics)

VOTE = ["Y", "N", "U", "A"]


def api(base, method, body):
    request = urllib.request.Request(f"{base}/v1/{method}", data=json.dumps(body).encode(),
                                     method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())


def pct(x):
    return f"{x * 100:.2f} %"


def requests(driver, method):
    return [r["body"] for r in driver.execute_script("return window.__requests")
            if r["method"] == "QueryService/" + method]


def main():
    server_bin, cli_bin, csv, shots = sys.argv[1:5]
    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        absent("chromium or chromedriver")
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    os.makedirs(shots, exist_ok=True)
    work = tempfile.mkdtemp(prefix="deniable_dashboard_view_")
    server, base = start_with_metrics(server_bin, cli_bin, csv, work)
    driver = None
    try:
        driver = hooked_browser(work, 1200, 1600)
        wait = WebDriverWait(driver, 20)
        el = lambda i: driver.find_element(By.ID, i)  # noqa: E731
        rows = lambda t: driver.find_elements(By.CSS_SELECTOR, f"#{t} tbody tr")  # noqa: E731
        select = lambda i, v: Select(el(i)).select_by_value(v)  # noqa: E731
        driver.get(base + "/")

        # Labels in words, raw names in tooltips.
        pick(driver, wait, "chile_vote_yes")
        wait.until(lambda d: el("p-n").text == "2532" and rows("groups-table") and
                   rows("series-table") and panel_state(d, "design") == "ready")
        design = driver.find_element(
            By.CSS_SELECTOR, '#metrics tbody tr[data-metric="chile_vote_yes"] td:nth-child(3)')
        check(design.text == "two coins" and design.get_attribute("title") == "twoCoin",
              (design.text, design.get_attribute("title")))
        page = driver.find_element(By.TAG_NAME, "body").text
        for raw in ("twoCoin", "methodReason", "requested", "mean_period_prevalence",
                    "estimand"):
            check(raw not in page, (raw, page))
        check(not re.search(r"\d\.\d{6,}", page), re.findall(r"\d\.\d{6,}", page))
        estimand = driver.find_element(By.CSS_SELECTOR, '#p-extra dd[data-field="estimand"]')
        check("estimand" in estimand.get_attribute("title"), estimand.get_attribute("title"))

        # The server's default method: none sent; the API's default named.
        check(all("method" not in b for b in requests(driver, "GetPrevalence") +
                  requests(driver, "GetSeries")), requests(driver, "GetPrevalence"))
        check(el("p-method").get_attribute("data-value") == "WILSON")
        check("default" in el("p-method").text, el("p-method").text)
        start = el("range-text").get_attribute("data-start")
        end = el("range-text").get_attribute("data-end")
        window = {"startTimeSeconds": start, "endTimeSeconds": end}
        select("method", "JEFFREYS")
        jeffreys = api(base, "QueryService/GetPrevalence",
                       {"metric": "chile_vote_yes", "method": "JEFFREYS", **window})
        wait.until(lambda d: d.find_element(By.ID, "p-upper").text == pct(jeffreys["ciUpper"]))
        check(el("p-lower").text == pct(jeffreys["ciLower"]))
        check("Jeffreys" in el("p-method").text and "your choice" in el("p-method").text,
              el("p-method").text)
        check(requests(driver, "GetPrevalence")[-1]["method"] == "JEFFREYS")
        select("method", "")
        wait.until(lambda d: "default" in d.find_element(By.ID, "p-method").text)

        # Axes hold every interval.
        groups = api(base, "QueryService/GetPrevalence",
                     {"metric": "chile_vote_yes", "groupBy": "region", **window})["groups"]
        wait.until(lambda d: len(rows("groups-table")) == len(groups))
        y = chart(driver, "groups-chart", "[c.scales.y.min, c.scales.y.max]")
        check(y[0] <= min(g["ciLower"] for g in groups) * 100 and
              y[1] >= max(g["ciUpper"] for g in groups) * 100,
              (y, [(g["ciLower"], g["ciUpper"]) for g in groups]))
        el("groups-chart").screenshot(os.path.join(shots, "after-breakdown-axis.png"))
        series = api(base, "QueryService/GetSeries",
                     {"metric": "chile_vote_yes", "bucket": "DAY", **window})["buckets"]
        shown = [b for b in series if not b["suppressed"]]
        wait.until(lambda d: len(rows("series-table")) == len(series))
        y = chart(driver, "series-chart", "[c.scales.y.min, c.scales.y.max]")
        check(y[0] <= min(b["ciLower"] for b in shown) * 100 and
              y[1] >= max(b["ciUpper"] for b in shown) * 100, y)

        # The difference: second minus first, in points, in words.
        at = (int(start) + int(end)) // 2 // 3600 * 3600
        split = driver.execute_script(
            "return new Date(arguments[0] * 1000).toISOString().slice(0, 16)", at)
        driver.execute_script("document.getElementById('diff-split').value = arguments[0]", split)
        el("diff-go").click()
        wait.until(lambda d: panel_state(d, "diff") == "ready")
        d = api(base, "QueryService/GetDifference", {
            "first": {"metric": "chile_vote_yes", "startTimeSeconds": start,
                      "endTimeSeconds": str(at)},
            "second": {"metric": "chile_vote_yes", "startTimeSeconds": str(at),
                       "endTimeSeconds": end}})
        change = d["second"]["estimateUnbiased"] - d["first"]["estimateUnbiased"]
        result = el("diff-result")
        check(abs(float(result.get_attribute("data-value")) - change) < 1e-12,
              (result.get_attribute("data-value"), change))
        size = f"{abs(change) * 100:.2f}"
        words = ("did not change" if size == "0.00" else
                 f"{'rose' if change > 0 else 'fell'} by {size} points")
        sign = "" if size == "0.00" else "+" if change > 0 else "\u2212"
        check(words in result.text and "second minus first" in result.text and
              f"{sign}{size} percentage points" in result.text, result.text)

        # The view in the address, and a link that reopens it.
        select("range", "7d")
        select("bucket", "DAY")
        select("method", "AGRESTI_COULL")
        select("level", "0.9")
        wait.until(lambda d: panel_state(d, "prevalence") == "ready" and
                   "Agresti-Coull at 90 %" in d.find_element(By.ID, "p-method").text)
        link = driver.current_url
        for part in ("metric=chile_vote_yes", "range=7d", "bucket=DAY", "by=region",
                     "method=AGRESTI_COULL", "level=0.9"):
            check(part in link, (part, link))
        driver.get("about:blank")
        driver.get(link)
        wait.until(lambda d: d.find_element(By.ID, "metric-name").text == "chile_vote_yes" and
                   panel_state(d, "prevalence") == "ready")
        check([el(i).get_attribute("value") for i in ("range", "bucket", "method", "level")] ==
              ["7d", "DAY", "AGRESTI_COULL", "0.9"])
        first = requests(driver, "GetPrevalence")
        asked = [b for b in first if b.get("metric") == "chile_vote_yes" and "method" in b][0]
        check(asked["method"] == "AGRESTI_COULL" and asked["confidenceLevel"] == 0.9, asked)
        check(int(asked["endTimeSeconds"]) - int(asked["startTimeSeconds"]) == 7 * 86400, asked)
        check(requests(driver, "GetSeries")[-1]["bucket"] == "DAY")
        # A custom absolute range.
        select("range", "custom")
        driver.execute_script("document.getElementById('range-from').value = '2026-01-02T00:00';"
                              "document.getElementById('range-to').value = '2026-03-04T05:00';")
        el("range-go").click()
        wait.until(lambda d: "from=2026-01-02T00%3A00" in d.current_url)
        link = driver.current_url
        driver.get("about:blank")
        driver.get(link)
        wait.until(lambda d: d.find_element(By.ID, "metric-name").text == "chile_vote_yes")
        check(el("range-text").get_attribute("data-start") == "1767312000" and
              el("range-text").get_attribute("data-end") == "1772600400",
              el("range-text").text)
        driver.get("about:blank")
        driver.get(base + "/#metric=chile_vote_yes")
        wait.until(lambda d: d.find_element(By.ID, "p-n").text == "2532" and
                   len(rows("groups-table")) == len(groups))

        # CSV: every table has one; the breakdown's equals the API's groups and downloads.
        for table in driver.find_elements(By.CSS_SELECTOR, "table"):
            check(driver.find_elements(
                By.CSS_SELECTOR, f'button.csv[data-table="{table.get_attribute("id")}"]'),
                table.get_attribute("id"))
        text = driver.execute_script("return window.dashboardCsv('groups-table')")
        parsed = list(csvlib.reader(io.StringIO(text)))
        check(parsed[0] == ["region", "n", "estimate_unbiased", "ci_lower", "ci_upper"], parsed)
        for line, g in zip(parsed[1:], groups):
            check(line[0] == g["groupValue"] and int(line[1]) == int(g["n"]), (line, g))
            check([float(x) for x in line[2:]] == [g["estimateUnbiased"], g["ciLower"],
                                                   g["ciUpper"]], (line, g))
        driver.find_element(By.CSS_SELECTOR, 'button.csv[data-table="groups-table"]').click()
        saved = os.path.join(work, "downloads", "chile_vote_yes-groups-table.csv")
        eventually(lambda: os.path.exists(saved) and open(saved, newline="").read() == text,
                   10, f"{saved} holding the breakdown's CSV")

        # A label no report carries: the collector's refusal naming the labels there are, and
        # no bars (not one blank group holding everything).
        el("group-by").clear()
        el("group-by").send_keys("city")
        el("group-go").click()
        wait.until(lambda d: panel_state(d, "groups") == "error")
        status = el("groups-status").text
        check('"city"' in status and "region" in status, status)
        check(not rows("groups-table") and chart(driver, "groups-chart", "1") is None)
        check("by=city" in driver.current_url, driver.current_url)

        # The new JSON form (numbers, null for suppressed) reads as the old one.
        driver.execute_script("sessionStorage.setItem('test.newForm', '1')")
        driver.get("about:blank")
        driver.get(base + "/#metric=few_reports")
        wait.until(lambda d: panel_state(d, "series") == "ready" and rows("series-table"))
        check(driver.execute_script(
            "return window.__requests.length > 0 && sessionStorage.getItem('test.newForm')"))
        for r in rows("series-table"):
            check(r.find_elements(By.TAG_NAME, "td")[2].text == "suppressed", r.text)
        driver.get("about:blank")
        driver.get(base + "/#metric=chile_vote_yes")
        wait.until(lambda d: d.find_element(By.ID, "p-n").text == "2532" and
                   len(rows("groups-table")) == len(groups))
        for g in groups:
            cells = driver.find_elements(
                By.CSS_SELECTOR, f'#groups-table tbody tr[data-group="{g["groupValue"]}"] td')
            check(cells[1].text == str(g["n"]) and
                  float(cells[2].get_attribute("data-value")) == g["estimateUnbiased"], g)
        driver.execute_script("sessionStorage.removeItem('test.newForm')")

        # The categorical series: consistent shares, a band per category, a legend saying so.
        pick(driver, wait, "chile_vote")
        wait.until(lambda d: panel_state(d, "series") == "ready" and rows("series-table"))
        lines = chart(driver, "series-chart",
                      "c.data.datasets.filter(d => d.line).map(d => [d.label, d.data])")
        check([name for name, _ in lines] == VOTE, lines)
        check(all(v is None or v >= 0 for _, data in lines for v in data), lines)
        bands = chart(driver, "series-chart",
                      "c.data.datasets.filter(d => d.label.includes(' interval ')).length")
        check(bands == 2 * len(VOTE), bands)
        legend = chart(driver, "series-chart",
                       "c.legend.legendItems.map(i => i.text)")
        check(legend == VOTE + ["suppressed (too few reports)"], legend)
        check("consistent share" in el("series-legend").text and
              "band" in el("series-legend").text, el("series-legend").text)
        y = chart(driver, "series-chart", "[c.scales.y.min, c.scales.y.max]")
        check(y[0] == 0, y)
        wait.until(lambda d: panel_state(d, "prevalence") == "ready")
        page = driver.find_element(By.ID, "detail").text
        check(not re.search(r"\d\.\d{6,}", page), re.findall(r"\d\.\d{6,}", page))
        el("series-chart").screenshot(os.path.join(shots, "after-categorical-series.png"))

        # Phone width: no sideways scroll, tables scroll in their own box.
        for width in (360, 500):
            set_viewport(driver, width, 900)
            for metric in ("chile_vote", "chile_vote_yes"):
                driver.get("about:blank")
                driver.get(f"{base}/#metric={metric}")
                wait.until(lambda d: panel_state(d, "groups") == "ready" and
                           panel_state(d, "series") == "ready")
                sizes = driver.execute_script(
                    "return [document.scrollingElement.scrollWidth, innerWidth]")
                check(sizes[0] <= sizes[1] == width, (width, metric, sizes))
            driver.execute_script("document.getElementById('detail').scrollIntoView()")
            driver.save_screenshot(os.path.join(shots, f"after-phone-width-{width}.png"))
        print(f"dashboard view: OK (screenshots in {shots})")
    finally:
        if driver is not None:
            driver.quit()
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
