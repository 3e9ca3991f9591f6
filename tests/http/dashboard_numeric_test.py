#!/usr/bin/python3
"""The dashboard's view of numeric metrics (issue 28) in headless Chromium.

Starts the real deniable-server with the HTTP listener, creates `chile_age` (one_bit_mean over
[18, 90] years) and `chile_income_histogram` (d_bit_flip, 7 buckets of [0, 200000] pesos), both
at epsilon = ln 3, and replays the 1988 Chile survey's age and income with region labels, spread
over 3 days, through the real CLI (each respondent's device randomizes its value with the C++
SDK). Then drives the page: for the age, the mean, its interval and standard error, and the
total over the reporting devices equal the JSON API's; the daily series (the mean and its band)
and the region breakdown equal the API's buckets and groups. For the income histogram, every
bucket row (sampled, ones, unbiased and consistent shares, standard error, both intervals), the
quantile table and the median over time equal the API's; the charts are drawn. Saves a
screenshot to SCREENSHOT. Exits 77 (CTest: skipped) only if chromium is absent.

Usage: dashboard_numeric_test.py SERVER_BINARY CLI_BINARY CSV SCREENSHOT
"""
import math
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

LN3 = "1.0986122886681098"
EDGES = [0, 5000, 10000, 25000, 50000, 100000, 150000, 200000]


def value(x, e):
    """A value as the page prints it: 4 significant digits of the range's width."""
    decimals = min(6, max(0, 4 - math.ceil(math.log10(e["hi"] - e["lo"]))))
    text = f"{x:.{decimals}f}"
    return f"{0:.{decimals}f}" if float(text) == 0 else text


def figure(driver, element_id):
    from selenium.webdriver.common.by import By
    return driver.find_element(By.ID, element_id)


def check_range_figure(driver, element_id, lower, upper):
    el = figure(driver, element_id)
    check(float(el.get_attribute("data-lower")) == lower, (element_id, el.text, lower))
    check(float(el.get_attribute("data-upper")) == upper, (element_id, el.text, upper))
    return el


def main():
    server_bin, cli_bin, csv, screenshot = sys.argv[1:5]
    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        absent("chromium or chromedriver")
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    work = tempfile.mkdtemp(prefix="deniable_dashboard_numeric_")
    server, target, base = start_collector(server_bin, os.path.join(work, "d.db"),
                                           os.path.join(work, "server.log"))
    driver = None
    cli = [cli_bin, f"--target={target}"]
    try:
        subprocess.run(cli + ["create-metric", "--name=chile_age", "--range=18,90",
                              "--unit=years", "--mechanism=one_bit_mean", f"--epsilon={LN3}",
                              "--reporting_period=once", "--description=Your age"],
                       check=True, capture_output=True)
        subprocess.run(cli + ["create-metric", "--name=chile_income_histogram",
                              "--range=0,200000", "--unit=pesos", "--mechanism=d_bit_flip",
                              "--bucket_edges=" + ",".join(map(str, EDGES)),
                              f"--epsilon={LN3}", "--reporting_period=once",
                              "--description=Your household's monthly income"],
                       check=True, capture_output=True)
        for metric, column in (("chile_age", "age"), ("chile_income_histogram", "income")):
            subprocess.run(cli + ["replay", f"--metric={metric}", f"--csv={csv}",
                                  f"--value_column={column}", "--blank=skip",
                                  "--label_columns=region", "--spread=3d"],
                           check=True, capture_output=True)

        driver = browser(work)
        wait = WebDriverWait(driver, 20)
        driver.get(base + "/")
        row = wait.until(ec.element_to_be_clickable(
            (By.CSS_SELECTOR, '#metrics tbody tr[data-metric="chile_age"]')))
        check("one_bit_mean, [18, 90] years" in row.text, row.text)
        wait.until(lambda d: row.find_element(By.CSS_SELECTOR, ".reports").text == "2531")
        row.click()
        range_text = figure(driver, "range-text")
        start, end = range_text.get_attribute("data-start"), range_text.get_attribute("data-end")
        window = {"startTimeSeconds": start, "endTimeSeconds": end, "confidenceLevel": 0.95}
        quantiles = {"quantiles": [0.5, 0.9, 0.99]}
        age = api(base, "QueryService/GetPrevalence",
                  {"metric": "chile_age", **window, **quantiles}, "")
        e = age["numeric"]
        check(age["n"] == 2531 and e["mechanism"] == "one_bit_mean", age)
        wait.until(lambda d: d.find_element(By.ID, "p-n").text == "2531")
        wait.until(lambda d: d.find_elements(By.ID, "n-mean"))
        check(figure(driver, "numeric").is_displayed())
        check(not figure(driver, "p-estimate").is_displayed())  # the yes/no figures
        check(not figure(driver, "histogram").is_displayed())
        mean = figure(driver, "n-mean")
        check(float(mean.get_attribute("data-value")) == e["mean"], (mean.text, e))
        check(mean.text == value(e["mean"], e) + " years", (mean.text, e))
        el = check_range_figure(driver, "n-mean-interval", e["meanCiLower"], e["meanCiUpper"])
        check(el.text == f"[{value(e['meanCiLower'], e)}, {value(e['meanCiUpper'], e)}] years",
              el.text)
        se = figure(driver, "n-mean-se")
        check(float(se.get_attribute("data-value")) == e["meanStandardError"], se.text)
        total = figure(driver, "n-total")
        check(float(total.get_attribute("data-value")) == e["total"], total.text)
        check(int(total.get_attribute("data-devices")) == e["devices"] == 2531, total.text)
        check("total over 2531 reporting devices" in figure(driver, "numeric-figures").text)
        check_range_figure(driver, "n-total-interval", e["totalCiLower"], e["totalCiUpper"])
        check(not figure(driver, "error").is_displayed(), figure(driver, "error").text)
        # Issue 38: a number's words, and its answer first. The heading says "Mean", the
        # estimand is the server's numeric one ("active_device_mean": a survey question), and
        # the mean comes before the counts and the estimate's description.
        check(figure(driver, "metric-kind").text == "Mean", figure(driver, "metric-kind").text)
        check(age["estimand"] == "active_device_prevalence" and
              e["estimand"] == "active_device_mean", (age["estimand"], e.get("estimand")))
        field = '#p-extra dd[data-field="estimand"]'
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, field))
        estimand = driver.find_element(By.CSS_SELECTOR, field)
        check(estimand.text == "active device mean", estimand.text)
        check(driver.execute_script(
            "return !!(document.getElementById('n-mean').compareDocumentPosition("
            "document.getElementById('p-n')) & Node.DOCUMENT_POSITION_FOLLOWING)"),
            "the mean is not above the reports (n)")

        # The mean over time (daily buckets over the page's 30 days) and its band.
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#series-table tbody tr"))
        series = api(base, "QueryService/GetSeries", {"metric": "chile_age", "bucket": "DAY",
                                                      **window}, "")
        buckets = series["buckets"]
        check(sum(int(b["n"]) for b in buckets) == 2531, buckets)
        rows = driver.find_elements(By.CSS_SELECTOR, "#series-table tbody tr")
        check(len(rows) == len(buckets), (len(rows), len(buckets)))
        for r, b in zip(rows, buckets):
            cells = r.find_elements(By.TAG_NAME, "td")
            check(cells[1].text == str(b["n"]), (r.text, b))
            if b["suppressed"]:
                check(cells[2].text == "suppressed", r.text)
                continue
            n = b["numeric"]
            check(float(cells[2].get_attribute("data-value")) == n["mean"], (r.text, n))
            check(float(cells[3].get_attribute("data-lower")) == n["meanCiLower"], (r.text, n))
            check(float(cells[3].get_attribute("data-upper")) == n["meanCiUpper"], (r.text, n))
        band = driver.execute_script("return Chart.getChart('series-chart').data.datasets"
                                     ".find(d => d.label === 'interval upper').data")
        check(band == [None if b["suppressed"] else b["numeric"]["meanCiUpper"] for b in buckets],
              band)
        check(figure(driver, "series-legend").get_attribute("data-figure") == "mean")
        check(canvas_drawn(driver, "series-chart"))

        # The region breakdown: each group's mean and interval.
        regions = api(base, "QueryService/GetPrevalence",
                      {"metric": "chile_age", "groupBy": "region", **window, **quantiles}, "")
        driver.find_element(By.ID, "group-go").click()
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#groups-table tbody tr")) ==
                   len(regions["groups"]))
        for g in regions["groups"]:
            cells = driver.find_elements(
                By.CSS_SELECTOR, f'#groups-table tbody tr[data-group="{g["groupValue"]}"] td')
            check(cells[1].text == str(g["n"]), (cells[1].text, g))
            if g["suppressed"]:
                continue
            check(float(cells[2].get_attribute("data-value")) == g["numeric"]["mean"], g)
            check(float(cells[3].get_attribute("data-lower")) == g["numeric"]["meanCiLower"])
            check(float(cells[3].get_attribute("data-upper")) == g["numeric"]["meanCiUpper"])
        check(canvas_drawn(driver, "groups-chart"))

        # The difference of the mean between two windows: the API's figures (GetDifference gives
        # first - second), shown as second minus first.
        split_at = (int(time.time()) - 36 * 3600) // 3600 * 3600
        split = time.strftime("%Y-%m-%dT%H:00", time.gmtime(split_at))
        driver.execute_script("document.getElementById('diff-split').value = arguments[0]", split)
        driver.find_element(By.ID, "diff-go").click()
        wait.until(lambda d: "The mean" in d.find_element(By.ID, "diff-result").text)
        diff = api(base, "QueryService/GetDifference", {
            "first": {"metric": "chile_age", "startTimeSeconds": start,
                      "endTimeSeconds": str(split_at)},
            "second": {"metric": "chile_age", "startTimeSeconds": str(split_at),
                       "endTimeSeconds": end}, "confidenceLevel": 0.95}, "")
        result = figure(driver, "diff-result")
        check(float(result.get_attribute("data-value")) == -diff["difference"], (result.text, diff))
        check(float(result.get_attribute("data-lower")) == -diff["ciUpper"], (result.text, diff))
        check(float(result.get_attribute("data-upper")) == -diff["ciLower"], (result.text, diff))
        check(" years" in result.text, result.text)

        # The income histogram and its quantiles.
        driver.find_element(By.CSS_SELECTOR,
                            '#metrics tbody tr[data-metric="chile_income_histogram"]').click()
        hist = api(base, "QueryService/GetPrevalence",
                   {"metric": "chile_income_histogram", **window, **quantiles}, "")
        h = hist["numeric"]
        check(hist["n"] == 2449 and h["mechanism"] == "d_bit_flip", hist)
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#histogram-table tbody tr"))
                   == 7)
        check(figure(driver, "histogram").is_displayed())
        check(not driver.find_elements(By.ID, "n-mean"))
        kind = figure(driver, "metric-kind").text
        check(kind == "Distribution", kind)
        check(h["estimand"] == "active_device_distribution", h.get("estimand"))
        rows = driver.find_elements(By.CSS_SELECTOR, "#histogram-table tbody tr")
        for j, (r, b) in enumerate(zip(rows, h["buckets"])):
            check(float(r.get_attribute("data-lower")) == b["lower"] == EDGES[j], (r.text, b))
            check(float(r.get_attribute("data-upper")) == b["upper"] == EDGES[j + 1], b)
            cells = r.find_elements(By.TAG_NAME, "td")
            check(cells[1].text == str(b["sampled"]) and cells[2].text == str(b["ones"]), b)
            for i, field in ((3, "estimateUnbiased"), (4, "estimateConsistent"),
                             (5, "standardError")):
                check(float(cells[i].get_attribute("data-value")) == b[field], (field, b))
                check(cells[i].text == pct(b[field]), (cells[i].text, field, b))
            check(float(cells[6].get_attribute("data-lower")) == b["ciLower"], b)
            check(float(cells[6].get_attribute("data-upper")) == b["ciUpper"], b)
            check(float(cells[7].get_attribute("data-lower")) == b["simultaneousLower"], b)
            check(float(cells[7].get_attribute("data-upper")) == b["simultaneousUpper"], b)
            check(cells[7].text == f"[{pct(b['simultaneousLower'])}, "
                                   f"{pct(b['simultaneousUpper'])}]", cells[7].text)
        legend = figure(driver, "histogram-legend")
        check(legend.get_attribute("data-method") == h["simultaneousMethod"] == "sidak")
        check(float(legend.get_attribute("data-per-bucket-level")) == h["perBucketLevel"])
        rows = driver.find_elements(By.CSS_SELECTOR, "#quantile-table tbody tr")
        check(len(rows) == len(h["quantiles"]) == 3, [r.text for r in rows])
        for r, q in zip(rows, h["quantiles"]):
            cells = r.find_elements(By.TAG_NAME, "td")
            check(float(r.get_attribute("data-level")) == q["level"], (r.text, q))
            check(float(cells[1].get_attribute("data-value")) == q["value"], (r.text, q))
            check(cells[1].text == value(q["value"], h), (cells[1].text, q))
            check(float(cells[2].get_attribute("data-lower")) == q["ciLower"], (r.text, q))
            check(float(cells[2].get_attribute("data-upper")) == q["ciUpper"], (r.text, q))
        check(rows[0].text.startswith("median"), rows[0].text)
        check(canvas_drawn(driver, "histogram-chart"))
        # The median over time, with its band.
        wait.until(lambda d: d.find_element(By.ID, "series-legend").get_attribute(
            "data-figure") == "median")
        series = api(base, "QueryService/GetSeries", {"metric": "chile_income_histogram",
                                                      "bucket": "DAY", **window}, "")
        rows = driver.find_elements(By.CSS_SELECTOR, "#series-table tbody tr")
        check(len(rows) == len(series["buckets"]), (len(rows), series))
        for r, b in zip(rows, series["buckets"]):
            if b["suppressed"]:
                continue
            median = [q for q in b["numeric"]["quantiles"] if q["level"] == 0.5][0]
            cells = r.find_elements(By.TAG_NAME, "td")
            check(float(cells[2].get_attribute("data-value")) == median["value"], (r.text, b))
            check(float(cells[3].get_attribute("data-lower")) == median["ciLower"], r.text)
            check(float(cells[3].get_attribute("data-upper")) == median["ciUpper"], r.text)
        check(not figure(driver, "error").is_displayed(), figure(driver, "error").text)

        # Each bucket's share difference between the two windows: the API's, second minus first.
        driver.execute_script("document.getElementById('diff-split').value = arguments[0]", split)
        driver.find_element(By.ID, "diff-go").click()
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#diff-shares tbody tr")) == 7)
        diff = api(base, "QueryService/GetDifference", {
            "first": {"metric": "chile_income_histogram", "startTimeSeconds": start,
                      "endTimeSeconds": str(split_at)},
            "second": {"metric": "chile_income_histogram", "startTimeSeconds": str(split_at),
                       "endTimeSeconds": end}, "confidenceLevel": 0.95}, "")
        rows = driver.find_elements(By.CSS_SELECTOR, "#diff-shares tbody tr")
        check(len(diff["shares"]) == 7, diff)
        for row, d in zip(rows, diff["shares"]):
            cells = row.find_elements(By.TAG_NAME, "td")
            check(float(cells[3].get_attribute("data-value")) == -d["difference"], (row.text, d))
            check(float(cells[4].get_attribute("data-lower")) == -d["ciUpper"], (row.text, d))
            check(float(cells[4].get_attribute("data-upper")) == -d["ciLower"], (row.text, d))

        driver.execute_script("document.getElementById('detail').scrollIntoView()")
        driver.save_screenshot(screenshot)
        print(f"age: mean {e['mean']:.2f} [{e['meanCiLower']:.2f}, {e['meanCiUpper']:.2f}] years")
        print("income:", [(b["lower"], round(b["estimateUnbiased"], 4)) for b in h["buckets"]])
        print(f"dashboard (numeric): OK (screenshot {screenshot})")
    finally:
        if driver is not None:
            driver.quit()
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
