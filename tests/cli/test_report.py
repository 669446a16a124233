"""The run report: its numbers equal independent computations on the raw rows, it is self-contained and
escaped, it counts quarantine reasons, and it renders in headless Chromium with its charts drawn.
"""

import base64
import collections
import csv
import fcntl
import io
import json
import os
import re
import select
import shutil
import subprocess
import sys
import time
from html import escape
from pathlib import Path

import numpy as np
import pytest
from example_job import EXAMPLE_CONFIG, example_config
from typer.testing import CliRunner

from skewless.cli import app
from skewless.pipelines.synthetic import COLUMNS, synthetic_rows
from skewless.report import REPORT_FILE, render_report

NUMERIC = ("age", "hours_per_week", "fnlwgt", "capital_gain")
CATEGORICAL = ("workclass", "education", "occupation", "native_country")


@pytest.fixture(scope="module")
def raw_rows():
    seed, rows = EXAMPLE_CONFIG["input"]["seed"], EXAMPLE_CONFIG["input"]["rows"]
    return [row for _, table in synthetic_rows(seed, 0, rows) for row in table.to_pylist()]


@pytest.fixture(scope="module")
def report(example_run):
    path = render_report(example_run.output_dir)
    return Path(path).read_text(encoding="utf-8")


def article(html: str, feature: str) -> str:
    """The report's section about one feature."""
    match = re.search(rf'<article class="feature" id="feature-{feature}">(.*?)</article>', html, re.S)
    assert match, f"no section for {feature}"
    return match.group(1)


def cell(section: str, header: str) -> str:
    match = re.search(rf"<th>{re.escape(header)}</th><td class=num>([^<]*)</td>", section)
    assert match, f"no {header!r} row"
    return match.group(1)


def shown_number(text: str) -> tuple[float, float]:
    """A number as the page shows it, and half a unit of its last digit (the rounding it went through)."""
    text = text.replace(",", "")
    assert "e" not in text, text
    return float(text), 0.5 * 10.0 ** -len(text.partition(".")[2])


def card(html: str, label: str) -> str:
    match = re.search(rf'data-card="{re.escape(label)}">.*?<div class="value">([^<]*)', html, re.S)
    assert match, f"no card {label!r}"
    return match.group(1)


def test_summary_cards_show_rows_read_and_written(report, example_run):
    total = EXAMPLE_CONFIG["input"]["rows"]
    assert card(report, "rows read") == f"{total:,}"
    written = example_run.rows["written"]
    assert sum(written.values()) == total
    for split, rows in written.items():
        assert card(report, f"{split} rows").strip() == f"{rows:,}"
    assert card(report, "quarantined").strip() == "0"
    shards = [s for split in example_run.shards.values() for s in split]
    assert card(report, "shards").strip() == str(len(shards))
    for shard in shards:
        assert f"<code>{shard['path']}</code></td><td class=num>{shard['rows']:,}</td>" in report


def test_numeric_statistics_equal_numpy(report, raw_rows):
    for feature in NUMERIC:
        section = article(report, feature)
        present = np.array([row[feature] for row in raw_rows if row[feature] is not None], dtype=np.float64)
        missing = len(raw_rows) - len(present)
        expected = {"mean": present.mean(), "std": present.std(), "min": present.min(), "max": present.max()}
        for stat, value in expected.items():
            shown, half_unit = shown_number(cell(section, stat))
            # float32 storage of fnlwgt / capital_gain moves the mean a little past the display's rounding
            assert abs(shown - value) <= half_unit + 1e-6 * abs(value), (feature, stat, shown, value)
        assert cell(section, "missing") == f"{missing:,} ({missing / len(raw_rows):.2%})"
        assert cell(section, "rows with a value") == f"{len(present):,}"
    assert int(cell(article(report, "capital_gain"), "missing").split()[0].replace(",", "")) > 0


def test_histogram_bars_are_proportional_to_counts(report, example_run):
    for feature in NUMERIC:
        counts = np.array(example_run.features[feature]["histogram"]["counts"], dtype=np.float64)
        svg = re.search(r'<figure class="histogram">(.*?)</figure>', article(report, feature), re.S).group(1)
        heights = np.array([float(h) for h in re.findall(r'<rect class="bar" [^>]*height="([0-9.]+)"', svg)])
        assert len(heights) == len(counts)
        np.testing.assert_allclose(heights / heights.max(), counts / counts.max(), atol=0.01)
        tips = re.findall(r"<title>\[[^<]*\): ([0-9,]+) rows</title>", svg)
        assert [int(t.replace(",", "")) for t in tips] == counts.astype(int).tolist()


def test_top_values_vocabulary_and_oov_rate(report, raw_rows, example_run):
    rows = len(raw_rows)
    for feature in ("workclass", "education", "occupation"):
        counts = collections.Counter(row[feature].decode() for row in raw_rows if row[feature] is not None)
        section = article(report, feature)
        bars = re.findall(r"<g><title>([^<]*): ([0-9,]+) rows</title>", section)
        assert {value: int(count.replace(",", "")) for value, count in bars} == dict(counts), feature
        assert [int(count.replace(",", "")) for _, count in bars] == sorted(counts.values(), reverse=True)
        assert cell(section, "distinct values") == str(len(counts))
    # education keeps its top_k most frequent values: the others are out of vocabulary
    top_k = EXAMPLE_CONFIG["features"]["education"]["top_k"]
    counts = collections.Counter(row["education"].decode() for row in raw_rows)
    kept = {value for value, _ in counts.most_common(top_k)}
    section = article(report, "education")
    oov_bars = re.findall(r'<g><title>([^<]*): [0-9,]+ rows</title><text[^>]*>[^<]*</text><rect class="bar-oov"', section)
    assert set(oov_bars) == set(counts) - kept
    assert cell(section, "vocabulary size") == str(top_k)
    oov_rows = sum(count for value, count in counts.items() if value not in kept)
    assert cell(section, "OOV rows") == f"{oov_rows:,}"
    assert cell(section, "OOV rate") == f"{oov_rows / rows:.2%}"
    assert example_run.features["education"]["oov_rows"] == oov_rows


def test_one_svg_per_chart_and_nothing_fetched(report):
    assert report.count("<svg") == len(NUMERIC) + len(CATEGORICAL)
    assert report.count('<figure class="histogram">') == len(NUMERIC)
    assert report.count('<figure class="top-values">') == len(CATEGORICAL)
    assert not re.search(r"https?://", report)
    for fetching in ("<script", "<img", "<link rel=\"stylesheet\"", "src=", "url(", "@import"):
        assert fetching not in report, fetching


def test_data_is_escaped(example_run, tmp_path):
    run_dir = tmp_path / "run"
    shutil.copytree(example_run.output_dir, run_dir)
    hostile = '<script>alert("x")</script>&'
    summary = json.loads((run_dir / "run.json").read_text())
    summary["features"]["workclass"]["top_values"][0][0] = hostile
    summary["name"] = hostile
    (run_dir / "run.json").write_text(json.dumps(summary))
    (run_dir / "quarantine").mkdir()
    (run_dir / "quarantine" / "rows-00000-of-00001.jsonl").write_text(
        json.dumps({"source": "in.csv", "line": 7, "reason": f"workclass: {hostile}", "raw": f"<b>{hostile}</b>"}) + "\n"
    )
    html = Path(render_report(run_dir)).read_text()
    assert "<script" not in html and "<b>" not in html
    assert escape(hostile) in html
    assert f"<td>workclass: {escape(hostile)}</td>" in html


def csv_fields(row: dict) -> list[str]:
    return ["" if row[c] is None else row[c].decode() if isinstance(row[c], bytes) else str(row[c]) for c in COLUMNS]


def write_csv(path: Path, rows: list[list[str]]) -> None:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    path.write_text(buffer.getvalue())


def test_quarantine_reasons_counted(tmp_path, raw_rows):
    from skewless.pipelines import run

    rows = [csv_fields(row) for row in raw_rows[:400]]
    # Types are inferred from the head of the first file; the bad rows sit in the second one.
    write_csv(tmp_path / "clean.csv", rows[:300])
    age = list(COLUMNS).index("age")
    not_a_number = [[*row[:age], "old", *row[age + 1:]] for row in rows[:3]]
    short = [row[:-1] for row in rows[3:5]]
    write_csv(tmp_path / "dirty.csv", rows[300:350] + not_a_number + rows[350:] + short)
    config = example_config(
        tmp_path / "run",
        input={"format": "csv", "paths": [str(tmp_path / "clean.csv"), str(tmp_path / "dirty.csv")],
               "columns": list(COLUMNS)},
        output={"shards": 1, "max_bad_fraction": 0.05},
    )
    result = run(config)
    assert result.rows["quarantined"] == 5
    html = Path(render_report(result.output_dir)).read_text()
    section = html[html.index("<h2>Quarantine</h2>"):]
    counted = re.findall(r"<tr><td class=num>([0-9,]+)</td><td>([^<]*)</td><td><code>([^<]*)</code>", section)
    by_kind = collections.Counter()
    for count, reason, where in counted:
        by_kind["age" if reason.startswith("age:") else "fields" if "fields" in reason else reason] += int(count)
        assert where.startswith(str(tmp_path / "dirty.csv") + ":"), where
    assert by_kind == {"age": 3, "fields": 2}
    # the first row of each reason is shown where it is in the file
    lines = {reason: int(where.rpartition(":")[2]) for _, reason, where in counted}
    assert sorted(lines.values()) == [51, 104]
    assert "5 rows were quarantined" in section


def test_missing_run_is_one_line_error(tmp_path):
    result = CliRunner().invoke(app, ["report", str(tmp_path)])
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and "run.json: not found" in result.output


def test_cli_rerenders_and_opens(example_run, tmp_path, monkeypatch):
    run_dir = tmp_path / "run"
    shutil.copytree(example_run.output_dir, run_dir)
    (run_dir / REPORT_FILE).unlink(missing_ok=True)
    opened = []
    monkeypatch.setattr("webbrowser.open", opened.append)
    result = CliRunner().invoke(app, ["report", str(run_dir), "--open"])
    assert result.exit_code == 0, result.output
    assert (run_dir / REPORT_FILE).read_text().startswith("<!DOCTYPE html>")
    assert opened == [(run_dir / REPORT_FILE).resolve().as_uri()]


# ------------------------------------------------------------------------------------- in a real browser


def chromium_binary() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no Chromium on this machine (Debian: apt-get install chromium)")


_PLACE_FDS = """
import os, sys
os.dup2(int(sys.argv[1]), 3)
os.dup2(int(sys.argv[2]), 4)
os.close(int(sys.argv[1]))
os.close(int(sys.argv[2]))
os.execv(sys.argv[3], sys.argv[3:])
"""


class DevTools:
    """Headless Chromium driven over the DevTools protocol on a pipe (--remote-debugging-pipe):
    JSON messages separated by NUL bytes, written to the browser's fd 3 and read from its fd 4."""

    def __init__(self, binary: str, profile: Path):
        # The browser's ends are moved above fd 9, so that placing one at 3 cannot overwrite the other.
        to_browser_read, self._to_browser = _high_fds(*os.pipe())
        self._from_browser, from_browser_write = _high_fds(*os.pipe())
        flags = ["--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe", f"--user-data-dir={profile}",
                 "--no-first-run", "--no-default-browser-check", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-default-apps", "--disable-extensions",
                 "--mute-audio", "--hide-scrollbars", "about:blank"]
        # A small Python launcher puts the pipe ends at fds 3 and 4 (no preexec_fn: unsafe with TF's threads).
        self.process = subprocess.Popen(
            [sys.executable, "-c", _PLACE_FDS, str(to_browser_read), str(from_browser_write), binary, *flags],
            pass_fds=(to_browser_read, from_browser_write), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        os.close(to_browser_read)
        os.close(from_browser_write)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict] = []
        self.session = None

    def send(self, method: str, timeout: float = 30, **params) -> dict:
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params}
        if self.session:
            message["sessionId"] = self.session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._receive(deadline)
            if reply.get("id") == self._next_id:
                assert "error" not in reply, f"{method}: {reply['error']}"
                return reply["result"]
            self.events.append(reply)

    def wait_for(self, method: str, timeout: float = 30) -> dict:
        deadline = time.monotonic() + timeout
        for event in self.events:
            if event.get("method") == method:
                return event
        while True:
            event = self._receive(deadline)
            self.events.append(event)
            if event.get("method") == method:
                return event

    def _receive(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            remaining = deadline - time.monotonic()
            assert remaining > 0, "Chromium did not answer in time"
            ready, _, _ = select.select([self._from_browser], [], [], remaining)
            if ready:
                chunk = os.read(self._from_browser, 1 << 20)
                assert chunk, "Chromium closed the DevTools pipe"
                self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(message)

    def close(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)


def _high_fds(*fds: int) -> list[int]:
    moved = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in fds]
    for fd in fds:
        os.close(fd)
    return moved


def chart_pixels(png: bytes, clip: dict) -> float:
    """The share of pixels inside `clip` drawn in the report's bar color (#3b6fd4)."""
    from PIL import Image

    image = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=np.int32)
    x, y, width, height = (int(round(clip[k])) for k in ("x", "y", "width", "height"))
    region = image[y:y + height, x:x + width]
    bar = np.array([0x3B, 0x6F, 0xD4])
    return float(np.mean(np.abs(region - bar).sum(axis=-1) < 30))


def test_renders_in_headless_chromium(report, example_run, tmp_path):
    binary = chromium_binary()
    page = Path(example_run.output_dir, REPORT_FILE).resolve().as_uri()
    browser = DevTools(binary, tmp_path / "profile")
    try:
        target = browser.send("Target.createTarget", url="about:blank")["targetId"]
        browser.session = browser.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            browser.send(f"{domain}.enable")
        browser.send("Emulation.setEmulatedMedia", features=[{"name": "prefers-color-scheme", "value": "light"}])
        browser.send("Emulation.setDeviceMetricsOverride", width=1280, height=900, deviceScaleFactor=1, mobile=False)
        browser.send("Page.navigate", url=page)
        browser.wait_for("Page.loadEventFired")
        charts = browser.send(
            "Runtime.evaluate", returnByValue=True,
            expression="""Array.from(document.querySelectorAll('svg.chart')).map(svg => {
                const box = svg.getBoundingClientRect();
                const bars = Array.from(svg.querySelectorAll('rect'));
                return {x: box.x + scrollX, y: box.y + scrollY, width: box.width, height: box.height,
                        bars: bars.length, fill: bars.length ? getComputedStyle(bars[0]).fill : null};
            })""",
        )["result"]["value"]
        size = browser.send("Page.getLayoutMetrics")["cssContentSize"]
        browser.send("Emulation.setDeviceMetricsOverride", width=1280, height=int(size["height"]),
                     deviceScaleFactor=1, mobile=False)
        png = base64.b64decode(browser.send("Page.captureScreenshot", format="png", captureBeyondViewport=True)["data"])
    finally:
        browser.close()
    screenshot = tmp_path / "report.png"
    screenshot.write_bytes(png)
    assert png.startswith(b"\x89PNG")

    requests = [e["params"]["request"]["url"] for e in browser.events if e.get("method") == "Network.requestWillBeSent"]
    assert [url for url in requests if not url.startswith("data:")] == [page]
    assert not [e for e in browser.events if e.get("method") == "Network.loadingFailed"]
    errors = [e for e in browser.events if e.get("method") == "Runtime.exceptionThrown"
              or e.get("method") == "Runtime.consoleAPICalled" and e["params"]["type"] in ("error", "warning", "assert")
              or e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] in ("error", "warning")]
    assert not errors, errors

    summary = json.loads(Path(example_run.output_dir, "run.json").read_text())
    expected_bars = [len(summary["features"][f]["histogram"]["counts"]) for f in NUMERIC] + [
        len(summary["features"][f]["top_values"]) for f in CATEGORICAL
    ]
    assert len(charts) == len(NUMERIC) + len(CATEGORICAL)
    assert sorted(chart["bars"] for chart in charts) == sorted(expected_bars)
    for chart in charts:
        assert chart["width"] > 200 and chart["height"] > 100
        assert chart["fill"] == "rgb(59, 111, 212)"
        # the bars are on the screenshot: a visible share of each chart is the bar color
        assert chart_pixels(png, chart) > 0.015, chart
