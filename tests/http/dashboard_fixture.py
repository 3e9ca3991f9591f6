"""What the dashboard's browser tests share: a collector with three metrics and a Chromium whose
page records, holds or rewrites the dashboard's API calls.

    server, base = start_with_metrics(server_bin, cli_bin, csv, work)
    driver = hooked_browser(work, 1200, 1600)

Metrics: `chile_vote_yes` (two coins, the 1988 Chile survey's Yes with region labels, spread over
28 days), `chile_vote` (4 categories, the same survey) and `few_reports` (10 reports: below the
minimum of 50, so its prevalence is refused and its buckets are suppressed).

The page's fetch is wrapped before the dashboard's script runs:
  window.__requests: [{method, body}] of every API call, in order;
  window.__hold[method] = true: calls to that method wait until window.__release(method) (all of
    them) or window.__releaseNewest(method) (the newest);
  window.__answered: the methods of the calls whose answers the page has read, in order (the
    page's handling of an answer finishes in the same task, before any later timer);
  sessionStorage "test.newForm" = "1": answers are rewritten to the JSON form where int64 counts
    are numbers and suppressed buckets and groups carry null estimates and intervals.
"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from test_server import start_collector  # noqa: E402
from checks import check  # noqa: E402

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"

FETCH_HOOK = r"""
window.__requests = [];
window.__hold = {};
window.__waiting = [];
window.__release = (method) => {
  delete window.__hold[method];
  const waiting = window.__waiting.filter((w) => w.method === method);
  window.__waiting = window.__waiting.filter((w) => w.method !== method);
  waiting.forEach((w) => w.go());
};
// Releases only the newest held call of `method` (the others stay held).
window.__releaseNewest = (method) => {
  const i = window.__waiting.map((w) => w.method).lastIndexOf(method);
  if (i >= 0) window.__waiting.splice(i, 1)[0].go();
};
window.__answered = [];
const INT64 = new Set(["n", "yesCount", "startTimeSeconds", "endTimeSeconds", "centralN", "periods",
  "reportingPeriodSeconds", "supportCount"]);
const NULLED = ["estimateUnbiased", "estimateClipped", "standardError", "ciLower", "ciUpper", "yesShare",
  "estimatedYesCount", "method"];
function newForm(x) {
  if (Array.isArray(x)) return x.map(newForm);
  if (x === null || typeof x !== "object") return x;
  const out = {};
  for (const [k, v] of Object.entries(x)) {
    out[k] = INT64.has(k) && typeof v === "string" && /^-?[0-9]+$/.test(v) ? Number(v) : newForm(v);
  }
  if (out.suppressed === true) for (const k of NULLED) if (k in out) out[k] = null;
  return out;
}
const realFetch = window.fetch.bind(window);
window.fetch = async (url, init) => {
  const method = String(url).replace(/^.*\/v1\//, "");
  window.__requests.push({ method, body: init && init.body ? JSON.parse(init.body) : null });
  if (window.__hold[method]) await new Promise((go) => window.__waiting.push({ method, go }));
  let response = await realFetch(url, init);
  if (sessionStorage.getItem("test.newForm") === "1" && response.ok) {
    const body = newForm(await response.json());
    response = new Response(JSON.stringify(body), { status: response.status, headers: response.headers });
  }
  const json = response.json.bind(response);
  response.json = async () => { const b = await json(); window.__answered.push(method); return b; };
  return response;
};
"""


def start_with_metrics(server_bin, cli_bin, csv, work, numeric=False):
    """Starts a tokenless collector (gRPC and HTTP) with the three metrics, and with `numeric`
    two more of the survey spread over 28 days: `chile_age` (one_bit_mean, [18, 90] years) and
    `chile_income_histogram` (d_bit_flip, 7 buckets of the income in pesos); returns (process,
    HTTP base URL)."""
    server, target, base = start_collector(server_bin, os.path.join(work, "d.db"),
                                           os.path.join(work, "server.log"))
    cli = [cli_bin, f"--target={target}"]

    def run(*args):
        subprocess.run(cli + list(args), check=True, capture_output=True)

    run("create-metric", "--name=chile_vote_yes", "--design=two_coin",
        "--description=Will you vote Yes in the 1988 plebiscite?")
    run("replay", "--metric=chile_vote_yes", f"--csv={csv}", "--column=vote", "--yes=Y",
        "--label_columns=region", "--spread=28d")
    run("create-metric", "--name=chile_vote", "--categories=Y,N,U,A", "--design=categorical",
        "--epsilon=1.0986", "--description=How will you vote in the 1988 plebiscite?")
    run("replay", "--metric=chile_vote", f"--csv={csv}", "--column=vote",
        "--label_columns=region", "--spread=28d")
    few = os.path.join(work, "few.csv")
    with open(few, "w") as f:
        f.write("answer\n" + "Y\nN\n" * 5)
    run("create-metric", "--name=few_reports", "--design=two_coin",
        "--description=Asked of ten people")
    # The reports are sent; the replay's closing prevalence is refused (too few), exit 6.
    done = subprocess.run(cli + ["replay", "--metric=few_reports", f"--csv={few}",
                                 "--column=answer", "--yes=Y"], capture_output=True, text=True)
    check("has 10 reports" in done.stderr, (done.returncode, done.stderr))
    if numeric:
        run("create-metric", "--name=chile_age", "--range=18,90", "--unit=years",
            "--mechanism=one_bit_mean", "--epsilon=1.0986122886681098", "--description=Your age")
        run("replay", "--metric=chile_age", f"--csv={csv}", "--value_column=age", "--blank=skip",
            "--label_columns=region", "--spread=28d")
        run("create-metric", "--name=chile_income_histogram", "--range=0,200000", "--unit=pesos",
            "--mechanism=d_bit_flip",
            "--bucket_edges=0,5000,10000,25000,50000,100000,150000,200000",
            "--epsilon=1.0986122886681098", "--description=Your household's monthly income")
        run("replay", "--metric=chile_income_histogram", f"--csv={csv}", "--value_column=income",
            "--blank=skip", "--label_columns=region", "--spread=28d")
    return server, base


def hooked_browser(work, width, height):
    """Headless Chromium (Selenium) at width x height CSS pixels with FETCH_HOOK installed in
    every page, downloads saved to WORK/downloads."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
                 f"--window-size={width},{height}",
                 f"--user-data-dir={os.path.join(work, 'profile')}"):
        options.add_argument(flag)
    downloads = os.path.join(work, "downloads")
    os.makedirs(downloads, exist_ok=True)
    options.add_experimental_option("prefs", {"download.default_directory": downloads,
                                              "download.prompt_for_download": False})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": FETCH_HOOK})
    driver.execute_cdp_cmd("Browser.setDownloadBehavior",
                           {"behavior": "allow", "downloadPath": downloads})
    return driver


def set_viewport(driver, width, height):
    """Makes the page's layout viewport exactly width x height CSS pixels."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})


def pick(driver, wait, metric):
    """Clicks the metric's row in the metrics table."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    wait.until(ec.element_to_be_clickable(
        (By.CSS_SELECTOR, f'#metrics tbody tr[data-metric="{metric}"]'))).click()


def panel_state(driver, panel):
    return driver.execute_script(
        "return document.querySelector(`[data-panel='${arguments[0]}']`).dataset.state", panel)


def chart(driver, canvas_id, expression):
    """Evaluates `expression` on the Chart.js chart of the canvas (`c`), or None if none."""
    return driver.execute_script(
        f"const c = Chart.getChart(arguments[0]); return c ? ({expression}) : null;", canvas_id)
