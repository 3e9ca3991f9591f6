#!/usr/bin/python3
"""The dashboard never shows a number that is not the current answer (issue 29), in headless
Chromium against the real collector.

1. From a metric with data (chile_vote_yes: n, estimate, interval, series, region bars shown) to
   one with too few reports (few_reports): the title names the new metric and no figure of the
   old one remains: n, estimate and interval empty, the breakdown's table and chart gone, the
   prevalence panel marked as an error with the API's refusal.
2. A panel is emptied the moment its request starts: with GetPrevalence held, switching from
   chile_vote_yes to the categorical chile_vote leaves n, the estimate and the shares table empty
   (panel "loading") until the answer is released; then they are the API's. With GetSeries held
   for chile_vote_yes and then few_reports, releasing the newer and then the older shows
   few_reports's buckets only.
3. A call that fails (GetSeries blocked in the browser): the series table and chart are emptied
   and the panel says why, both when switching metric and when changing the bucket of the same
   metric; the other panels hold the current metric's figures.
Saves before/after-style screenshots to SHOT_DIR. Exits 77 (CTest: skipped) only if chromium is
absent.

Usage: dashboard_stale_test.py SERVER_BINARY CLI_BINARY CSV SHOT_DIR
"""
import json
import os
import sys
import tempfile
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from components import absent  # noqa: E402
from checks import check  # noqa: E402
from dashboard_fixture import (CHROMEDRIVER, CHROMIUM, chart, hooked_browser,  # noqa: E402
                               panel_state, pick, start_with_metrics)


def api(base, method, body):
    request = urllib.request.Request(f"{base}/v1/{method}", data=json.dumps(body).encode(),
                                     method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())


def pct(x):
    return f"{x * 100:.2f} %"


def main():
    server_bin, cli_bin, csv, shots = sys.argv[1:5]
    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        absent("chromium or chromedriver")
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    os.makedirs(shots, exist_ok=True)
    work = tempfile.mkdtemp(prefix="deniable_dashboard_stale_")
    server, base = start_with_metrics(server_bin, cli_bin, csv, work)
    driver = None
    try:
        driver = hooked_browser(work, 1200, 1600)
        wait = WebDriverWait(driver, 20)
        text = lambda i: driver.find_element(By.ID, i).text  # noqa: E731
        rows = lambda t: driver.find_elements(By.CSS_SELECTOR, f"#{t} tbody tr")  # noqa: E731
        driver.get(base + "/")

        # 1. A metric with data, then one with too few reports.
        pick(driver, wait, "chile_vote_yes")
        wait.until(lambda d: text("p-n") == "2532" and rows("groups-table") and
                   rows("series-table"))
        old = {i: text(i) for i in ("p-n", "p-estimate", "p-interval", "p-se")}
        check(all(old.values()), old)
        pick(driver, wait, "few_reports")
        wait.until(lambda d: panel_state(d, "prevalence") == "error")
        check(text("metric-name") == "few_reports")
        for i in ("p-n", "p-estimate", "p-interval", "p-se", "p-method", "p-epsilon"):
            check(text(i) == "", (i, text(i)))
            check(driver.find_element(By.ID, i).get_attribute("data-value") in ("", None), i)
        check(not driver.find_elements(By.ID, "p-lower"))
        check("too few" in text("prevalence-status") or "at least 50" in text("prevalence-status"),
              text("prevalence-status"))
        check("few_reports" in text("error"), text("error"))
        wait.until(lambda d: panel_state(d, "groups") in ("error", "ready"))
        page = driver.find_element(By.ID, "detail").text
        for value in old.values():
            check(value not in page, (value, page))
        # The series of few_reports: its buckets, every one suppressed, no estimate.
        wait.until(lambda d: panel_state(d, "series") == "ready")
        series = [r.find_elements(By.TAG_NAME, "td") for r in rows("series-table")]
        check(series and all(c[2].text == "suppressed" for c in series), [
            [x.text for x in c] for c in series])
        check(sum(int(c[1].text) for c in series) == 10)
        for r in rows("groups-table"):
            check("suppressed" in r.text, r.text)
        driver.execute_script("window.scrollTo(0, 0)")
        driver.save_screenshot(os.path.join(shots, "after-stale-numbers.png"))

        # 2. Emptied when the request starts: GetPrevalence held while switching metric.
        pick(driver, wait, "chile_vote_yes")
        wait.until(lambda d: text("p-n") == "2532")
        driver.execute_script("window.__hold['QueryService/GetPrevalence'] = true")
        pick(driver, wait, "chile_vote")
        wait.until(lambda d: text("metric-name") == "chile_vote")
        check(panel_state(driver, "prevalence") == "loading")
        check(text("p-n") == "" and text("p-estimate") == "", (text("p-n"), text("p-estimate")))
        check(not rows("shares-table") and not rows("groups-table"))
        check(chart(driver, "shares-chart", "1") is None and
              chart(driver, "groups-chart", "1") is None)
        check(panel_state(driver, "groups") == "loading")
        driver.execute_script("window.__release('QueryService/GetPrevalence')")
        expected = api(base, "QueryService/GetPrevalence", {"metric": "chile_vote"})
        wait.until(lambda d: text("p-n") == "2532" and len(rows("shares-table")) == 4)
        check(panel_state(driver, "prevalence") == "ready")
        for row, s in zip(rows("shares-table"), expected["shares"]):
            check(row.find_elements(By.TAG_NAME, "td")[2].text == pct(s["estimateUnbiased"]))

        # An older answer arriving after a newer request never fills the panel: chile_vote_yes's
        # and then few_reports's series held, both released together.
        driver.execute_script("window.__hold['QueryService/GetSeries'] = true")
        pick(driver, wait, "chile_vote_yes")
        wait.until(lambda d: text("metric-name") == "chile_vote_yes")
        pick(driver, wait, "few_reports")
        wait.until(lambda d: text("metric-name") == "few_reports")
        check(panel_state(driver, "series") == "loading" and not rows("series-table"))
        answered = lambda: driver.execute_script(  # noqa: E731
            "return window.__answered.filter(m => m === 'QueryService/GetSeries').length")
        before = answered()
        driver.execute_script("window.__releaseNewest('QueryService/GetSeries')")
        wait.until(lambda d: panel_state(d, "series") == "ready")
        driver.execute_script("window.__release('QueryService/GetSeries')")  # the older one
        wait.until(lambda d: answered() == before + 2)
        # Its handler ran (microtasks after the read) before this timer fires.
        driver.execute_script("return new Promise(r => setTimeout(r, 0))")
        check(driver.execute_script(
            "return window.__requests.filter(r => r.method === 'QueryService/GetSeries')"
            ".slice(-2).map(r => r.body.metric)") == ["chile_vote_yes", "few_reports"])
        check(sum(int(r.find_elements(By.TAG_NAME, "td")[1].text)
                  for r in rows("series-table")) == 10, [r.text for r in rows("series-table")])
        pick(driver, wait, "chile_vote")
        wait.until(lambda d: panel_state(d, "series") == "ready" and rows("series-table"))

        # 3. A call that fails: GetSeries blocked in the browser.
        driver.execute_cdp_cmd("Network.enable", {})
        driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["*GetSeries*"]})
        check(rows("series-table"))
        pick(driver, wait, "chile_vote_yes")
        wait.until(lambda d: panel_state(d, "series") == "error")
        check(not rows("series-table") and chart(driver, "series-chart", "1") is None)
        check("GetSeries" in text("series-status"), text("series-status"))
        check("GetSeries" in text("error"), text("error"))
        wait.until(lambda d: text("p-n") == "2532")  # other panels: the current metric's
        # Same metric, another bucket: the failed series is empty, never the last day's answer.
        driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": []})
        Select(driver.find_element(By.ID, "bucket")).select_by_value("WEEK")
        wait.until(lambda d: panel_state(d, "series") == "ready" and rows("series-table"))
        check(not driver.find_element(By.ID, "error").is_displayed(), text("error"))
        driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["*GetSeries*"]})
        Select(driver.find_element(By.ID, "bucket")).select_by_value("DAY")
        wait.until(lambda d: panel_state(d, "series") == "error")
        check(not rows("series-table") and chart(driver, "series-chart", "1") is None)
        check(text("p-n") == "2532" and panel_state(driver, "prevalence") == "ready")
        driver.execute_script("document.getElementById('series-panel').scrollIntoView()")
        driver.save_screenshot(os.path.join(shots, "after-failed-call.png"))
        print(f"dashboard stale: OK (screenshots in {shots})")
    finally:
        if driver is not None:
            driver.quit()
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
