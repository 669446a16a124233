"""Issue 41, items 8, 10-12: JSON Lines under attack, no non-finite value written unasked, memory bounded per value and per key.

Cases as data, run by test_hostile.py like hostile_cases.py's; each has issue=41 and the item it proves. A bad row
goes to quarantine naming its file:line and the reason (`quarantined`), the good rows are written with the values
an independent computation gives (`written`); the cases that cost memory run in a process whose peak RSS
(`peak_rss_below`, from /proc's high-water mark) must stay under a bound (docs/errors.md, "What a value may
cost")."""

from __future__ import annotations

import glob
import json
import time
from pathlib import Path
from typing import Callable

import numpy as np

from hostile_cases import Case, job, small_config, write

GOOD_ROWS = 200  # around each bad line: one bad row of 401 stays under output.max_bad_fraction (1%)


def _good_jsonl(first: int = 0) -> bytes:
    return b"".join(b'{"a": %d, "s": "v%d"}\n' % (i, i % 3) for i in range(first, first + GOOD_ROWS))


def _good_csv(first: int = 0) -> bytes:
    return b"".join(b"%d,v%d\n" % (i, i % 3) for i in range(first, first + GOOD_ROWS))


FEATURES = {"a": {"transform": "z_score"}, "s": {"transform": "vocabulary"}}


def lines_job(data: bytes | Callable[[], bytes], features: dict | None = None, fmt: str = "jsonl",
              label: dict | None = None) -> Callable[[Path], list]:
    """A job reading `data` (CSV with a header, or JSON Lines) as x.csv / x.jsonl."""
    def make(folder):
        path = write(folder / f"x.{fmt}", data() if callable(data) else data)
        options = {"format": fmt, "paths": [str(path)], **({"header": True} if fmt == "csv" else {})}
        return job(folder, small_config(folder, input=options, features=features or FEATURES, label=label))
    return make


def around(bad: bytes, fmt: str = "jsonl") -> Callable[[], bytes]:
    """`bad` as line GOOD_ROWS + 1 (+1 more for a CSV header) among good rows."""
    good = _good_jsonl if fmt == "jsonl" else _good_csv
    return lambda: (b"a,s\n" if fmt == "csv" else b"") + good() + bad + b"\n" + good(GOOD_ROWS)


def records(folder: Path) -> list[dict]:
    """The written rows, each {feature: its values}."""
    import tensorflow as tf

    found = []
    for path in sorted(glob.glob(str(folder / "out" / "data" / "*"))):
        for record in tf.data.TFRecordDataset(path, compression_type="GZIP"):
            features = tf.train.Example.FromString(record.numpy()).features.feature
            found.append({name: list(getattr(feature, feature.WhichOneof("kind")).value)
                          for name, feature in features.items()})
    return found


def quarantine(folder: Path) -> list[dict]:
    return [json.loads(line) for path in sorted((folder / "out" / "quarantine").glob("*.jsonl"))
            for line in path.read_text().splitlines()]


def quarantined(line: int, reason: str, written: int | None = 2 * GOOD_ROWS) -> Callable[[Path], None]:
    """Exactly one row in quarantine, naming the file, `line` and a reason holding `reason`; `written` rows
    written (all the others)."""
    def check(folder):
        rows = quarantine(folder)
        assert [(Path(row["source"]).name.startswith("x."), row["line"]) for row in rows] == [(True, line)], rows
        assert reason in rows[0]["reason"], rows[0]["reason"]
        if "max_line_bytes" in reason:
            assert len(rows[0]["raw"]) < 2_000, "quarantine keeps a long line's start, not all of it"
        if written is not None:
            assert len(records(folder)) == written
    return check


def _count(folder: Path, rows: int) -> None:
    assert len(records(folder)) == rows and quarantine(folder) == []


# ------------------------------------------------------------------------------------------- peak memory

_PEAKS: dict[Path, int] = {}  # case folder -> the command's peak RSS in bytes


def peak_rss_recorded(process, folder):
    """Waits for the command, reading its peak RSS (VmHWM) until it ends."""
    peak = 0
    while process.poll() is None:
        try:
            with open(f"/proc/{process.pid}/status") as status:
                for line in status:
                    if line.startswith("VmHWM:"):
                        peak = max(peak, int(line.split()[1]) * 1024)
        except (FileNotFoundError, ProcessLookupError):
            break
        time.sleep(0.05)
    _PEAKS[folder] = peak
    return process.communicate(timeout=300)


def peak_rss_below(limit_mb: int, then: Callable[[Path], None]) -> Callable[[Path], None]:
    def check(folder):
        then(folder)
        peak = _PEAKS.pop(folder) / 1e6
        assert 0 < peak < limit_mb, f"peak RSS {peak:,.0f} MB, bound {limit_mb:,} MB"
    return check


# A run of these small jobs peaks at 0.8-0.9 GB here (TensorFlow alone is 0.55 GB); before the limits a 20 MB
# CSV field took it to 1.66 GB, a 100 MB JSON line to 4.3 GB, 4,000 keys of per-key z_score to ~3 GB
PEAK_MB = 1_300


# ------------------------------------------------------------------------------------------------ item 8

def _keys(count: int) -> bytes:
    return b"{" + b", ".join(b'"k%d": %d' % (i, i) for i in range(count)) + b', "a": 1, "s": "v1"}\n'


def sparse_key(folder: Path) -> list:
    """An optional key `o` in one row only, past the first 1.3 MB of rows (the type sample is the first MB)."""
    rows = b"".join(b'{"a": %d, "s": "v%d"}\n' % (i, i % 3) for i in range(60_000))
    data = rows + b'{"a": 7, "s": "v1", "o": 2.5}\n'
    features = {**FEATURES, "o": {"transform": "passthrough", "default": -1.0}}
    return lines_job(data, features)(folder)


def sparse_key_written(folder: Path) -> None:
    values = [row["o"][0] for row in records(folder)]
    assert len(values) == 60_001 and values.count(2.5) == 1 and values.count(-1.0) == 60_000


def numbers_as_strings_written(folder: Path) -> None:
    """z_score of "1.5", "2.5", ... as NumPy computes it on the numbers (float32)."""
    values = np.array([i + 0.5 for i in range(2 * GOOD_ROWS)], np.float32)
    expected = (values - values.mean()) / values.std()
    got = np.array(sorted(row["a"][0] for row in records(folder)), np.float32)
    assert np.allclose(got, np.sort(expected), atol=1e-5), (got[:3], np.sort(expected)[:3])


JSONL_CASES = [
    Case("jsonl: a line nested 100,000 lists deep", lines_job(around(
        b'{"a": 1, "s": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")), 0, None, issue=41, item=8, process=True,
        writes=("x.jsonl", "out"), after=quarantined(GOOD_ROWS + 1, "a value nested more than 64 levels deep")),
    Case("jsonl: a line nested 100,000 objects deep", lines_job(around(
        b'{"a": 1, "s": "v", "z": ' + b'{"b": ' * 100_000 + b"1" + b"}" * 100_000 + b"}")), 0, None, issue=41,
        item=8, process=True, writes=("x.jsonl", "out"),
        after=quarantined(GOOD_ROWS + 1, "nested more than 64 levels deep")),
    Case("jsonl: a 100 MB line in a vocabulary column", lines_job(around(
        b'{"a": 1, "s": "' + b"y" * 100_000_000 + b'"}')), 0, None, issue=41, item=8, process=True,
        drive=peak_rss_recorded, writes=("x.jsonl", "out"), after=peak_rss_below(PEAK_MB, quarantined(
            GOOD_ROWS + 1, "the line is 100,000,017 bytes, more than input.max_line_bytes (8,388,608)"))),
    Case("jsonl: bytes that are not UTF-8 in a value", lines_job(around(b'{"a": 1, "s": "ab\xff\xfecd"}')), 0,
         None, issue=41, item=8, writes=("x.jsonl", "out"),
         after=quarantined(GOOD_ROWS + 1, "byte 18 of the line is not UTF-8")),
    Case("jsonl: an integer of 2^64", lines_job(around(b'{"a": 18446744073709551616, "s": "v1"}')), 0, None,
         issue=41, item=8, writes=("x.jsonl", "out"),
         after=quarantined(GOOD_ROWS + 1, "a: '18446744073709551616' is beyond int64")),
    Case("jsonl: an integer of 10^30", lines_job(around(b'{"a": -1' + b"0" * 30 + b', "s": "v1"}')), 0, None,
         issue=41, item=8, writes=("x.jsonl", "out"), after=quarantined(GOOD_ROWS + 1, "is beyond int64")),
    Case("jsonl: a lone surrogate", lines_job(around(b'{"a": 1, "s": "x\\ud800y"}')), 0, None, issue=41, item=8,
         writes=("x.jsonl", "out"),
         after=quarantined(GOOD_ROWS + 1, "s: holds a lone UTF-16 surrogate (\\ud800)")),
    Case("jsonl: a low surrogate alone in a list", lines_job(around(b'{"a": 1, "s": "v1", "l": ["ok", "\\udc00"]}'),
                                                              {**FEATURES, "l": {"transform": "vocabulary", "list": True}}),
         0, None, issue=41, item=8, writes=("x.jsonl", "out"),
         after=quarantined(GOOD_ROWS + 1, "l: holds a lone UTF-16 surrogate (\\udc00)")),
    Case("jsonl: a surrogate pair is a character", lines_job(around(b'{"a": 1, "s": "\\ud83d\\ude00"}')), 0, None,
         issue=41, writes=("x.jsonl", "out"), after=lambda f: _count(f, 2 * GOOD_ROWS + 1)),
    Case("jsonl: a first line longer than the 1 MB type sample", lines_job(
        lambda: b'{"a": 1, "s": "' + b"y" * 1_200_000 + b'"}\n' + _good_jsonl()), 0, None, issue=41, item=8,
        writes=("x.jsonl", "out"), after=lambda f: _count(f, GOOD_ROWS + 1)),
    Case("jsonl: a first line with 100,000 keys", lines_job(lambda: _keys(100_000) + _good_jsonl()), 0, None,
         issue=41, item=8, writes=("x.jsonl", "out"), after=lambda f: _count(f, GOOD_ROWS + 1)),
    Case("jsonl: every line of the sample too long", lines_job(
        lambda: b'{"a": 1, "s": "' + b"y" * 9_000_000 + b'"}\n' + b"".join(
            b'{"a": %d, "s": "v%d"}\n' % (i, i % 3) for i in range(1000)), {"a": {"transform": "z_score"}}), 0,
        None, issue=41, item=8, writes=("x.jsonl", "out"),
        after=quarantined(1, "more than input.max_line_bytes", written=1000)),
    Case("jsonl: a sparse optional key seen only after the sample", sparse_key, 0, None, issue=41, item=8,
         writes=("x.jsonl", "out"), after=sparse_key_written),
    Case("jsonl: numbers given as JSON strings", lines_job(
        lambda: b"".join(b'{"a": "%d.5", "s": "v%d"}\n' % (i, i % 3) for i in range(2 * GOOD_ROWS))), 0, None,
        issue=41, item=8, writes=("x.jsonl", "out"), after=numbers_as_strings_written),
    Case("jsonl: a key absent from every line", lines_job(_good_jsonl, {**FEATURES, "o": {"transform": "z_score"}}),
         2, "features.o: no column 'o'", issue=41, writes=("x.jsonl",)),
    Case("config: max_line_bytes on Parquet", lambda f: job(f, small_config(f, input={
        "format": "parquet", "paths": ["x.parquet"], "max_line_bytes": 4096})), 2,
        "input.max_line_bytes needs input.format csv or jsonl", issue=41),
]


# ------------------------------------------------------------------------------------------------ item 10

def finite_labels(count: int) -> Callable[[Path], None]:
    def check(folder):
        labels = [row["y"][0] for row in records(folder)]
        assert len(labels) == count and np.isfinite(labels).all()
    return check


def _labels(bad: dict[int, bytes]) -> bytes:
    return b"a,y\n" + b"".join(b"%d,%s\n" % (i, bad.get(i, b"%d.25" % (i % 7))) for i in range(400))


VALUE_CASES = [
    Case("label.transform log: a label of -1", lines_job(_labels({50: b"-1"}), {"a": {"transform": "z_score"}},
                                                         "csv", {"column": "y", "transform": "log"}), 0, None,
         issue=41, item=10, writes=("x.csv", "out"),
         after=lambda f: (quarantined(52, "y: -1.0 is below the domain minimum", written=399)(f),
                          finite_labels(399)(f))),
    Case("label.transform log: a label of -3.5", lines_job(_labels({9: b"-3.5"}), {"a": {"transform": "z_score"}},
                                                           "csv", {"column": "y", "transform": "log"}), 0, None,
         issue=41, item=10, writes=("x.csv", "out"), after=finite_labels(399)),
    Case("scale_0_1 over -3e38..3e38 (max - min overflows float32)", lines_job(
        b"a,x\n" + b"".join(b"%d,%s\n" % (i, {5: b"3e38", 9: b"-3e38"}.get(i, b"%d.5" % i)) for i in range(400)),
        {"a": {"transform": "z_score"}, "x": {"transform": "scale_0_1"}}, "csv"), 2,
        "transformed feature 'x': its transform gives nan", issue=41, item=10, writes=("x.csv",)),
    Case("scale_0_1 label over -3e38..3e38", lines_job(
        b"a,y\n" + b"".join(b"%d,%s\n" % (i, {5: b"3e38", 9: b"-3e38"}.get(i, b"%d.5" % i)) for i in range(400)),
        {"a": {"transform": "z_score"}}, "csv", {"column": "y", "transform": "scale_0_1"}), 2,
        "transformed feature 'y'", issue=41, item=10, writes=("x.csv",)),
]


# ------------------------------------------------------------------------------------------------ item 11

PER_KEY_KEYS, PER_KEY_ROWS = 4_000, 8_000


def per_key_data() -> bytes:
    return b"x,k\n" + b"".join(b"%d.5,k%d\n" % (i * 7919 % 97, i % PER_KEY_KEYS) for i in range(PER_KEY_ROWS))


def per_key_written(folder: Path) -> None:
    """Each row's z-score within its key, as NumPy computes it (float64, then compared in float32)."""
    values = (np.arange(PER_KEY_ROWS) * 7919 % 97 + 0.5).astype(np.float32).astype(np.float64)
    keys = np.arange(PER_KEY_ROWS) % PER_KEY_KEYS
    sums, counts = np.bincount(keys, values), np.bincount(keys)
    means = sums / counts
    deviations = np.sqrt(np.bincount(keys, (values - means[keys]) ** 2) / counts)
    expected = np.where(deviations[keys] > 0, (values - means[keys]) / np.where(deviations[keys] > 0,
                                                                               deviations[keys], 1), 0.0)
    got = np.array([row["x"][0] for row in records(folder)])
    assert len(got) == PER_KEY_ROWS and np.allclose(got, expected, atol=1e-5)


MEMORY_CASES = [
    Case(f"z_score per key: {PER_KEY_KEYS:,} keys on {PER_KEY_ROWS:,} rows", lines_job(
        per_key_data, {"x": {"transform": "z_score", "key": "k"}}, "csv"), 0, None, issue=41, item=11,
        process=True, drive=peak_rss_recorded, writes=("x.csv", "out"),
        after=peak_rss_below(PEAK_MB, per_key_written)),
    Case("csv: a 20 MB field", lines_job(around(b"1," + b"y" * 20_000_000, "csv"), fmt="csv"), 0, None,
         issue=41, item=12, process=True, drive=peak_rss_recorded, writes=("x.csv", "out"),
         after=peak_rss_below(PEAK_MB, quarantined(
             GOOD_ROWS + 2, "the line is 20,000,002 bytes, more than input.max_line_bytes (8,388,608)"))),
    Case("csv: a 9 MB line where lines may hold 16 MiB", lambda f: job(f, small_config(f, input={
        "format": "csv", "paths": [str(write(f / "x.csv", around(b"1," + b"y" * 9_000_000, "csv")()))],
        "header": True, "max_line_bytes": 16 << 20}, features=FEATURES, label=None)), 0, None, issue=41,
        writes=("x.csv", "out"), after=lambda f: _count(f, 2 * GOOD_ROWS + 1)),
]


CASES = JSONL_CASES + VALUE_CASES + MEMORY_CASES
