#!/usr/bin/python3
"""The dashboard's live view and manipulation bounds (issue 41), in headless Chromium against the
real collector.

Metrics, fed through the real CLI: `live_yes` (two coins, a day's reporting period, 300 answers
of the 1988 Chile survey sent now), and three survey questions (reporting_period=once) from the
whole survey: `vote_once` (4 categories), `age_once` (one_bit_mean, [18, 90] years) and
`income_once` (d_bit_flip, 7 buckets).

1. The fixed-n view is the default: the live checkbox is off, its panel hidden, no ANYTIME
   query sent. The manipulation line reads "m fake reports could move this estimate by at most
   X points", m and X the JSON answer's (yes/no, the most movable category share, the mean in
   years, the most movable histogram bucket).
2. Live on, refreshing every 1 s (typed into the page): the panel says "valid at every look" and
   links to docs/statistics.md section 10 (served by the collector); its query is ANYTIME from
   the start of the current reporting period (a survey question: from 0), with no quantiles;
   its n, estimate and interval are the API's ANYTIME answer for that selection, wider than the
   API's fixed-n interval on the same reports, and its manipulation line is the answer's.
3. It refreshes: 100 more answers are sent through the CLI and the page's n becomes 400 with
   no action on the page (the test waits on the DOM), the interval again the API's.
4. For the categorical, numeric mean and histogram metrics: each share's, the mean's and each
   bucket's anytime interval (and the Bonferroni ones) are the API's, each wider than fixed-n.
5. The view is kept in the address (live=1, every=1): a reload is live again; unchecking hides
   the panel and stops the looks.

Every read of the refreshing panel is one script run (the page cannot change in between).
Exits 77 (CTest: skipped) only if chromium is absent.

Saves the live view of the categorical metric to SHOT_DIR/live-categorical.png.

Usage: dashboard_live_test.py SERVER_BINARY CLI_BINARY CSV SHOT_DIR
"""
import json
import math
import os
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

LN3 = "1.0986122886681098"
EDGES = "0,5000,10000,25000,50000,100000,150000,200000"

# The live panel at one instant: null unless it holds an answer.
SNAPSHOT = r"""
const panel = document.querySelector('[data-panel="live"]');
if (panel.dataset.state !== "ready") return null;
const d = (id) => { const e = document.getElementById(id); return e ? { text: e.textContent, ...e.dataset } : null; };
const rows = [...document.querySelectorAll("#live-table tbody tr")].map((tr) =>
  [...tr.cells].map((td) => ({ text: td.textContent, ...td.dataset })));
return { start: document.getElementById("live-selection").dataset.start,
  selection: document.getElementById("live-selection").textContent,
  csv: window.dashboardCsv("live-table"),
  looks: Number(document.getElementById("live-selection").dataset.looks),
  kind: document.getElementById("live-figures").dataset.kind,
  n: d("live-n"), estimate: d("live-estimate"), interval: d("live-interval"),
  manipulation: d("live-manipulation"), rows, hidden: panel.hidden };
"""


def api(base, method, body):
    request = urllib.request.Request(f"{base}/v1/{method}", data=json.dumps(body).encode(),
                                     method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())


def pct(x):
    return f"{x * 100:.2f} %"


def value_text(x, e):
    """A numeric figure as the page writes it: 4 significant digits of the range's width."""
    width = e["hi"] - e["lo"]
    decimals = min(6, max(0, 4 - (math.ceil(math.log10(width)) if width > 0 else 0)))
    return f"{x:.{decimals}f}"


def most_movable(items):
    """The item whose manipulation bound is largest (the first of equals, as the page)."""
    best = items[0]
    for x in items:
        if x.get("manipulation", {}).get("bound", 0) > best.get("manipulation", {}).get("bound", 0):
            best = x
    return best


def manipulation_sentence(p):
    """The line the page must show for answer `p` (m and the bound as the JSON has them)."""
    e = p.get("numeric")
    if e and e["mechanism"] == "one_bit_mean":
        m = e["meanManipulation"]
        return m, (f"{m['fakeReports']} fake reports could move the mean by at most "
                   f"{value_text(m['bound'], e)} {e['unit']}")
    if e:
        m = most_movable(e["buckets"])["manipulation"]
        return m, f"{m['fakeReports']} fake reports could move the share of bucket "
    if p.get("shares"):
        s = most_movable(p["shares"])
        m = s["manipulation"]
        return m, (f"{m['fakeReports']} fake reports could move the share \"{s['category']}\" "
                   f"(the most movable) by at most {m['bound'] * 100:.2f} points")
    m = p["manipulation"]
    return m, (f"{m['fakeReports']} fake reports could move this estimate by at most "
               f"{m['bound'] * 100:.2f} points")


def main():
    server_bin, cli_bin, csv, shots = sys.argv[1:5]
    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        absent("chromium or chromedriver")
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    os.makedirs(shots, exist_ok=True)
    work = tempfile.mkdtemp(prefix="deniable_dashboard_live_")
    server, target, base = start_collector(server_bin, os.path.join(work, "d.db"),
                                           os.path.join(work, "server.log"))
    cli = [cli_bin, f"--target={target}"]

    def run(*args):
        subprocess.run(cli + list(args), check=True, capture_output=True)

    driver = None
    try:
        with open(csv) as f:
            lines = f.read().splitlines()
        first, more = os.path.join(work, "first.csv"), os.path.join(work, "more.csv")
        with open(first, "w") as f:
            f.write("\n".join(lines[:301]) + "\n")
        with open(more, "w") as f:
            f.write("\n".join(lines[:1] + lines[301:401]) + "\n")
        run("create-metric", "--name=live_yes", "--design=two_coin",
            "--description=Will you vote Yes in the 1988 plebiscite?")
        run("replay", "--metric=live_yes", f"--csv={first}", "--column=vote", "--yes=Y",
            "--label_columns=region")
        run("create-metric", "--name=vote_once", "--categories=Y,N,U,A", "--design=categorical",
            f"--epsilon={LN3}", "--reporting_period=once", "--description=How will you vote?")
        run("replay", "--metric=vote_once", f"--csv={csv}", "--column=vote",
            "--label_columns=region", "--spread=3d")
        run("create-metric", "--name=age_once", "--range=18,90", "--unit=years",
            "--mechanism=one_bit_mean", f"--epsilon={LN3}", "--reporting_period=once",
            "--description=Your age")
        run("create-metric", "--name=income_once", "--range=0,200000", "--unit=pesos",
            "--mechanism=d_bit_flip", f"--bucket_edges={EDGES}", f"--epsilon={LN3}",
            "--reporting_period=once", "--description=Your household's monthly income")
        for metric, column in (("age_once", "age"), ("income_once", "income")):
            run("replay", f"--metric={metric}", f"--csv={csv}", f"--value_column={column}",
                "--blank=skip", "--label_columns=region", "--spread=3d")

        driver = hooked_browser(work, 1200, 1600)
        wait = WebDriverWait(driver, 20)
        el = lambda i: driver.find_element(By.ID, i)  # noqa: E731
        snapshot = lambda: driver.execute_script(SNAPSHOT)  # noqa: E731
        requests = lambda: driver.execute_script("return window.__requests")  # noqa: E731
        anytime = lambda: [r["body"] for r in requests()  # noqa: E731
                           if r["method"] == "QueryService/GetPrevalence" and r["body"] and
                           r["body"].get("interval") == "ANYTIME"]
        driver.get(base + "/")

        # 1. The fixed-n view by default, with each kind's manipulation line.
        for metric in ("live_yes", "vote_once", "age_once", "income_once"):
            pick(driver, wait, metric)
            wait.until(lambda d: panel_state(d, "prevalence") == "ready" and
                       el("metric-name").text == metric)
            check(el("live").is_selected() is False)
            check(not el("live-panel").is_displayed())
            r = el("range-text")
            body = {"metric": metric, "confidenceLevel": 0.95,
                    "startTimeSeconds": r.get_attribute("data-start"),
                    "endTimeSeconds": r.get_attribute("data-end")}
            if metric == "income_once":
                body["quantiles"] = [0.5, 0.9, 0.99]
            fixed = api(base, "QueryService/GetPrevalence", body)
            check(fixed["intervalKind"] == "FIXED_N", fixed["intervalKind"])
            bound, sentence = manipulation_sentence(fixed)
            line = el("p-manipulation")
            check(line.text.startswith(sentence), (metric, line.text, sentence))
            check(float(line.get_attribute("data-value")) == bound["bound"], (metric, bound))
            check(int(line.get_attribute("data-fake-reports")) == bound["fakeReports"])
        check(anytime() == [], anytime())

        # 2. Live, every 1 s, for the yes/no metric.
        pick(driver, wait, "live_yes")
        wait.until(lambda d: panel_state(d, "prevalence") == "ready" and
                   el("metric-name").text == "live_yes")
        el("live-every").clear()
        el("live-every").send_keys("1")
        el("live").click()
        s = wait.until(lambda d: snapshot())
        check("valid at every look" in el("live-panel").text, el("live-panel").text)
        link = el("live-docs")
        check(link.get_attribute("href") ==
              base + "/statistics.md#:~:text=10.%20Intervals%20valid%20at%20every%20look",
              link.get_attribute("href"))
        with urllib.request.urlopen(base + "/statistics.md", timeout=10) as answer:
            check("## 10. Intervals valid at every look" in answer.read().decode())
        start = int(s["start"])
        day = 86400
        check(start % day == 0 and int(s["n"]["value"]) == 300, s)
        check("the start of the current reporting period" in s["selection"], s["selection"])
        sent = anytime()[-1]
        check(sent["startTimeSeconds"] == str(start) and "quantiles" not in sent and
              "endTimeSeconds" not in sent, sent)
        selection = {"metric": "live_yes", "startTimeSeconds": str(start), "confidenceLevel": 0.95}

        def check_yes_no(s, n):
            served = api(base, "QueryService/GetPrevalence", {**selection, "interval": "ANYTIME"})
            fixed = api(base, "QueryService/GetPrevalence", selection)
            check(served["n"] == fixed["n"] == n and s["kind"] == served["intervalKind"] == "ANYTIME")
            check(int(s["n"]["value"]) == n and s["n"]["text"] == str(n), s["n"])
            check(float(s["estimate"]["value"]) == served["estimateUnbiased"], s["estimate"])
            check(float(s["interval"]["lower"]) == served["ciLower"], (s["interval"], served))
            check(float(s["interval"]["upper"]) == served["ciUpper"], (s["interval"], served))
            check(s["interval"]["text"] == f"[{pct(served['ciLower'])}, {pct(served['ciUpper'])}]",
                  s["interval"])
            check(served["ciUpper"] - served["ciLower"] > fixed["ciUpper"] - fixed["ciLower"],
                  (served["ciLower"], served["ciUpper"], fixed["ciLower"], fixed["ciUpper"]))
            bound, sentence = manipulation_sentence(served)
            check(s["manipulation"]["text"].startswith(sentence), (s["manipulation"], sentence))
            check(float(s["manipulation"]["value"]) == bound["bound"])

        check_yes_no(s, 300)
        check(not driver.find_element(By.CSS_SELECTOR, 'button.csv[data-table="live-table"]')
              .is_displayed())

        # 3. It refreshes by itself: 100 more answers arrive, the page's n becomes 400.
        looks = s["looks"]
        run("replay", "--metric=live_yes", f"--csv={more}", "--column=vote", "--yes=Y",
            "--label_columns=region")
        s = wait.until(lambda d: (lambda x: x if x and x["n"]["text"] == "400" else None)(snapshot()))
        check(s["looks"] > looks, (s["looks"], looks))
        check_yes_no(s, 400)

        # 4. Categorical shares, the mean and the histogram's buckets, live.
        for metric in ("vote_once", "age_once", "income_once"):
            pick(driver, wait, metric)
            s = wait.until(lambda d: (lambda x: x if x and x["n"] and
                                      el("metric-name").text == metric else None)(snapshot()))
            check(s["start"] == "0" and "a survey question" in s["selection"], s)
            sent = anytime()[-1]
            check(sent["metric"] == metric and sent["startTimeSeconds"] == "0" and
                  "quantiles" not in sent, sent)
            selection = {"metric": metric, "startTimeSeconds": "0", "confidenceLevel": 0.95}
            served = api(base, "QueryService/GetPrevalence", {**selection, "interval": "ANYTIME"})
            fixed = api(base, "QueryService/GetPrevalence", selection)
            check(int(s["n"]["value"]) == served["n"] == fixed["n"], (s["n"], served["n"]))
            bound, sentence = manipulation_sentence(served)
            check(s["manipulation"]["text"].startswith(sentence), (s["manipulation"], sentence))
            check(float(s["manipulation"]["value"]) == bound["bound"])
            if metric == "age_once":
                e, f = served["numeric"], fixed["numeric"]
                check(float(s["estimate"]["value"]) == e["mean"])
                check(float(s["interval"]["lower"]) == e["meanCiLower"], (s["interval"], e))
                check(float(s["interval"]["upper"]) == e["meanCiUpper"], (s["interval"], e))
                check(e["meanCiUpper"] - e["meanCiLower"] > f["meanCiUpper"] - f["meanCiLower"])
                continue
            items = served["shares"] if metric == "vote_once" else served["numeric"]["buckets"]
            fixed_items = fixed["shares"] if metric == "vote_once" else fixed["numeric"]["buckets"]
            check(len(s["rows"]) == len(items) > 1, (s["rows"], items))
            for cells, x, y in zip(s["rows"], items, fixed_items):
                if metric == "vote_once":
                    check(cells[0]["text"] == x["category"], cells[0])
                check(float(cells[1]["value"]) == x["estimateUnbiased"])
                check(float(cells[2]["lower"]) == x["ciLower"], (cells[2], x))
                check(float(cells[2]["upper"]) == x["ciUpper"], (cells[2], x))
                check(float(cells[3]["lower"]) == x["simultaneousLower"], (cells[3], x))
                check(float(cells[3]["upper"]) == x["simultaneousUpper"], (cells[3], x))
                check(x["ciUpper"] - x["ciLower"] > y["ciUpper"] - y["ciLower"], (x, y))
            if metric == "vote_once":
                driver.save_screenshot(os.path.join(shots, "live-categorical.png"))
                csv_text = s["csv"]
                check(csv_text.startswith("category,estimate_unbiased,ci_lower,ci_upper,"
                                          "simultaneous_lower,simultaneous_upper\r\nY,"), csv_text)

        # 5. Kept in the address; a reload is live again; unchecked, the looks stop.
        check("live=1" in driver.current_url and "every=1" in driver.current_url,
              driver.current_url)
        driver.refresh()
        s = wait.until(lambda d: (lambda x: x if x and el("metric-name").text == "income_once"
                                  else None)(snapshot()))
        check(el("live").is_selected() and el("live-every").get_attribute("value") == "1")
        el("live").click()
        wait.until(lambda d: panel_state(d, "live") == "idle")
        check(not el("live-panel").is_displayed())
        check(driver.execute_script("return live.timer") is None)
        check("live=1" not in driver.current_url, driver.current_url)
        check(driver.find_element(By.ID, "error").is_displayed() is False, el("error").text)
        print("dashboard live view: ok")
    finally:
        if driver is not None:
            driver.quit()
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
