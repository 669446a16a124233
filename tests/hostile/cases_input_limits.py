"""Issue 41, items 8, 10-12: JSON Lines under attack, no non-finite value written unasked, memory bounded per value,
per key and per vocabulary (analysis.max_keys, analysis.max_vocabulary: refused past them in one line).

Cases as data, run by test_hostile.py like hostile_cases.py's; each has issue=41 and the item it proves. A bad row
goes to quarantine naming its file:line and the reason (`quarantined`), the good rows are written with the values
an independent computation gives (`written`); the cases that cost memory run in a process whose peak RSS
(`peak_rss_below`, from /proc's high-water mark) must stay under a bound (docs/errors.md, "What a value may
cost")."""

from __future__ import annotations

import csv
import glob
import io
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
              label: dict | None = None, analysis: dict | None = None) -> Callable[[Path], list]:
    """A job reading `data` (CSV with a header, or JSON Lines) as x.csv / x.jsonl; `analysis`: its limits."""
    def make(folder):
        path = write(folder / f"x.{fmt}", data() if callable(data) else data)
        options = {"format": fmt, "paths": [str(path)], **({"header": True} if fmt == "csv" else {})}
        config = small_config(folder, input=options, features=features or FEATURES, label=label)
        if analysis is not None:
            config["analysis"] = analysis
        return job(folder, config)
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
        "input.max_line_bytes 4096 needs input.format csv or jsonl, not parquet", issue=41),
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
    Case("z_score of values 1e18..9e18 (tf.Transform's float32 variance overflows)", lines_job(
        b"a,x\n" + b"".join(b"%d,%de18\n" % (i, 1 + i % 9) for i in range(400)),
        {"a": {"transform": "z_score"}, "x": {"transform": "z_score"}}, "csv"), 2,
        "transformed feature 'x': its variance overflowed float32", issue=41, item=10, writes=("x.csv",)),
    Case("z_score of values 1e18..9e18, clipped: still refused (the clip leaves the overflow)", lines_job(
        b"a,x\n" + b"".join(b"%d,%de18\n" % (i, 1 + i % 9) for i in range(400)),
        {"a": {"transform": "z_score"}, "x": {"transform": "z_score", "clip": [0, 1e19]}}, "csv"), 2,
        "transformed feature 'x': its variance overflowed float32", issue=41, item=10, writes=("x.csv",)),
    Case("z_score label of values 1e18..9e18 (tf.Transform's float32 variance overflows)", lines_job(
        b"a,y\n" + b"".join(b"%d,%de18\n" % (i, 1 + i % 9) for i in range(400)),
        {"a": {"transform": "z_score"}}, "csv", {"column": "y", "transform": "z_score"}), 2,
        "transformed feature 'y': its variance overflowed float32", issue=41, item=10, writes=("x.csv",)),
    Case("z_score of values 1e8..9e8: written, no overflow", lines_job(
        b"a,x\n" + b"".join(b"%d,%de8\n" % (i, 1 + i % 9) for i in range(400)),
        {"a": {"transform": "z_score"}, "x": {"transform": "z_score"}}, "csv"), 0, None, issue=41, item=10,
        writes=("x.csv", "out")),
    Case("scale_0_1 label over -3e38..3e38", lines_job(
        b"a,y\n" + b"".join(b"%d,%s\n" % (i, {5: b"3e38", 9: b"-3e38"}.get(i, b"%d.5" % i)) for i in range(400)),
        {"a": {"transform": "z_score"}}, "csv", {"column": "y", "transform": "scale_0_1"}), 2,
        "transformed feature 'y'", issue=41, item=10, writes=("x.csv",)),
]


# ------------------------------------------------------------------------------------------------ item 11

PER_KEY_KEYS, PER_KEY_ROWS = 4_000, 8_000


def keyed_rows(keys: int, rows: int, key: bytes = b"k%d") -> bytes:
    """CSV x,k: `rows` values of x, the i-th keyed by `key % (i % keys)`."""
    return b"x,k\n" + b"".join(b"%d.5,%s\n" % (i * 7919 % 97, key % (i % keys)) for i in range(rows))


def per_key_data() -> bytes:
    return keyed_rows(PER_KEY_KEYS, PER_KEY_ROWS)


def csv_column(data: bytes, column: str) -> list[str]:
    """A column of CSV text with a header, read with Python's csv module (independently of the job's reader)."""
    return [row[column] for row in csv.DictReader(io.StringIO(data.decode()))]


def per_key_written(data: bytes) -> Callable[[Path], None]:
    """Each row's z-score within its key, as NumPy computes it from the CSV (float64, then compared in float32)."""
    def check(folder):
        values = np.array(csv_column(data, "x"), np.float32).astype(np.float64)
        _, keys = np.unique(csv_column(data, "k"), return_inverse=True)
        sums, counts = np.bincount(keys, values), np.bincount(keys)
        means = sums / counts
        deviations = np.sqrt(np.bincount(keys, (values - means[keys]) ** 2) / counts)
        spread = deviations[keys] > 0
        expected = np.where(spread, (values - means[keys]) / np.where(spread, deviations[keys], 1), 0.0)
        got = np.array([row["x"][0] for row in records(folder)])
        assert len(got) == len(values) and np.allclose(got, expected, atol=1e-5)
    return check


MEMORY_CASES = [
    Case(f"z_score per key: {PER_KEY_KEYS:,} keys on {PER_KEY_ROWS:,} rows", lines_job(
        per_key_data, {"x": {"transform": "z_score", "key": "k"}}, "csv"), 0, None, issue=41, item=11,
        process=True, drive=peak_rss_recorded, writes=("x.csv", "out"),
        after=peak_rss_below(PEAK_MB, per_key_written(per_key_data()))),
    Case("csv: a 20 MB field", lines_job(around(b"1," + b"y" * 20_000_000, "csv"), fmt="csv"), 0, None,
         issue=41, item=12, process=True, drive=peak_rss_recorded, writes=("x.csv", "out"),
         after=peak_rss_below(PEAK_MB, quarantined(
             GOOD_ROWS + 2, "the line is 20,000,002 bytes, more than input.max_line_bytes (8,388,608)"))),
    Case("csv: a 9 MB line where lines may hold 16 MiB", lambda f: job(f, small_config(f, input={
        "format": "csv", "paths": [str(write(f / "x.csv", around(b"1," + b"y" * 9_000_000, "csv")()))],
        "header": True, "max_line_bytes": 16 << 20}, features=FEATURES, label=None)), 0, None, issue=41,
        writes=("x.csv", "out"), after=lambda f: _count(f, 2 * GOOD_ROWS + 1)),
]


# ------------------------------------------------------------------------------------------------ item 11: limits
# analysis.max_keys and analysis.max_vocabulary, set small so the cases stay fast; each refusal names the feature,
# the distinct values counted (here all rows are one chunk of the analysis, so all of them), the option

def valued_rows(values: int, rows: int, value: bytes = b"v%d") -> bytes:
    """CSV a,s: `rows` rows, the i-th's s `value % (i % values)`."""
    return b"a,s\n" + b"".join(b"%d,%s\n" % (i, value % (i % values)) for i in range(rows))


def distinct(data: bytes, column: str, split=lambda text: [text]) -> int:
    """Distinct values of a CSV column (or of the tokens `split` cuts its texts into), counted with Python."""
    return len({token for text in csv_column(data, column) for token in split(text)})


def past(counted: str, count: int, option: str, limit: int) -> str:
    return f"{counted} has at least {count:,} distinct values, more than analysis.{option} ({limit:,}) allows"


def said_once(printed: str) -> None:
    """The refusal is the line the job wrote, not Beam's step after it."""
    assert "while running" not in printed and printed.count("distinct values") == 1, printed


def vocabulary_of(data: bytes, column: str) -> Callable[[Path], None]:
    """The written vocabulary of `column` holds exactly its distinct values, and every row is written."""
    def check(folder):
        assets = folder / "out" / "transform_graph" / "transform_fn" / "assets"
        entries = (assets / f"vocab_{column}").read_bytes().decode().splitlines()
        assert sorted(entries) == sorted(set(csv_column(data, column)))
        assert len(records(folder)) == len(csv_column(data, column))
    return check


KEYS_60, KEYS_50, INT_KEYS_60 = keyed_rows(60, 240), keyed_rows(50, 200), keyed_rows(60, 240, b"%d")
VALUES_60, VALUES_50 = valued_rows(60, 240), valued_rows(50, 200)
# 20 distinct texts of 60 distinct words: the text vocabulary counts words, not texts
TEXTS = b"a,s\n" + b"".join(b"%d,W%d w%d w%d\n" % (i, i % 20, i % 20 + 20, i % 20 + 40) for i in range(240))
WORDS = {"a": {"transform": "z_score"}, "s": {"transform": "text_vocabulary"}}
OPTIONAL = b"a,s\n" + b"".join(b"%d,%s\n" % (i, b"" if i % 10 == 0 else b"v%d" % (i % 60)) for i in range(240))
LABELED_60 = b"a,s,y\n" + b"".join(b"%d,v%d,%d\n" % (i, i % 60, i % 2) for i in range(240))
CLASSES_60 = b"a,y\n" + b"".join(b"%d,c%d\n" % (i, i % 60) for i in range(240))
KEYED_Z = {"x": {"transform": "z_score", "key": "k"}}
MANY_KEYS, MANY_ROWS = 100_000, 200_000  # issue 41's case: 20 GB before key_lookup.py, 1.15 GB after
MANY_TOKENS = 1_000_000  # 1.52 GB when all are counted (docs/errors.md)

LIMIT_CASES = [
    Case("analysis.max_keys 50: z_score per key over 60 keys", lines_job(
        KEYS_60, KEYED_Z, "csv", analysis={"max_keys": 50}), 2,
        past("features.x: its key column 'k'", distinct(KEYS_60, "k"), "max_keys", 50), issue=41, item=11,
        writes=("x.csv",), printed=said_once),
    Case("analysis.max_keys 50: z_score per key over 50 keys", lines_job(
        KEYS_50, KEYED_Z, "csv", analysis={"max_keys": 50}), 0, None, issue=41, item=11,
        writes=("x.csv", "out"), after=per_key_written(KEYS_50)),
    Case("analysis.max_keys 50: scale_0_1 per int key over 60 keys", lines_job(
        INT_KEYS_60, {"x": {"transform": "scale_0_1", "key": "k"}}, "csv", analysis={"max_keys": 50}), 2,
        past("features.x: its key column 'k'", distinct(INT_KEYS_60, "k"), "max_keys", 50), issue=41, item=11,
        writes=("x.csv",), printed=said_once),
    Case("analysis.max_keys 50: bucketize per key, the key column also a feature", lines_job(
        KEYS_60, {"x": {"transform": "bucketize", "num_buckets": 2, "key": "k"}, "k": {"transform": "hash",
                                                                                    "hash_buckets": 8}},
        "csv", analysis={"max_keys": 50}), 2,
        "; raise it (each costs about 3 KB of memory), or key by a coarser column", issue=41, item=11,
        writes=("x.csv",), printed=said_once),
    Case("analysis.max_vocabulary 50: a vocabulary of 60 values", lines_job(
        VALUES_60, FEATURES, "csv", analysis={"max_vocabulary": 50}), 2,
        past("features.s: its vocabulary", distinct(VALUES_60, "s"), "max_vocabulary", 50), issue=41, item=11,
        writes=("x.csv",), printed=said_once),
    Case("analysis.max_vocabulary 50: a vocabulary of 50 values", lines_job(
        VALUES_50, FEATURES, "csv", analysis={"max_vocabulary": 50}), 0, None, issue=41, item=11,
        writes=("x.csv", "out"), after=vocabulary_of(VALUES_50, "s")),
    Case("analysis.max_vocabulary 50: top_k 10 of 60 values (counted before top_k)", lines_job(
        VALUES_60, {**FEATURES, "s": {"transform": "vocabulary", "top_k": 10}}, "csv",
        analysis={"max_vocabulary": 50}), 2,
        "; raise it (each costs about 0.7 KB of memory), or hash the column (transform: hash)", issue=41, item=11,
        writes=("x.csv",), printed=said_once),
    Case("analysis.max_vocabulary 50: 20 texts of 60 words", lines_job(
        TEXTS, WORDS, "csv", analysis={"max_vocabulary": 50}), 2,
        past("features.s: its vocabulary", distinct(TEXTS, "s", lambda text: text.lower().split()),
             "max_vocabulary", 50), issue=41, item=11, writes=("x.csv",), printed=said_once),
    Case("analysis.max_vocabulary 50: fill most_frequent over 60 values", lines_job(
        OPTIONAL, {"a": {"transform": "z_score"}, "s": {"transform": "hash", "hash_buckets": 8,
                                                        "fill": "most_frequent"}}, "csv",
        analysis={"max_vocabulary": 50}), 2,
        past("features.s: its fill most_frequent", distinct(OPTIONAL, "s") - 1, "max_vocabulary", 50), issue=41,
        item=11, writes=("x.csv",), printed=said_once),
    Case("analysis.max_vocabulary 50: a vocabulary by mutual information over 60 values", lines_job(
        LABELED_60, {**FEATURES, "s": {"transform": "vocabulary", "labels": True}}, "csv", {"column": "y"},
        analysis={"max_vocabulary": 50}), 2,
        past("features.s: its vocabulary's column", distinct(LABELED_60, "s"), "max_vocabulary", 50), issue=41,
        item=11, writes=("x.csv",), printed=said_once),
    Case("analysis.max_vocabulary 50: a label vocabulary of 60 classes", lines_job(
        CLASSES_60, {"a": {"transform": "z_score"}}, "csv", {"column": "y", "transform": "vocabulary"},
        analysis={"max_vocabulary": 50}), 2,
        past("label.column y: its vocabulary", distinct(CLASSES_60, "y"), "max_vocabulary", 50), issue=41,
        item=11, writes=("x.csv",), printed=said_once),
    Case("config: analysis.max_keys 0", lines_job(KEYS_50, KEYED_Z, "csv", analysis={"max_keys": 0}), 2,
         "analysis.max_keys", issue=41, writes=("x.csv",)),
    Case(f"analysis.max_keys 20,000: {MANY_KEYS:,} keys on {MANY_ROWS:,} rows refused in bounded memory",
         lines_job(lambda: keyed_rows(MANY_KEYS, MANY_ROWS), KEYED_Z, "csv", analysis={"max_keys": 20_000}), 2,
         "more than analysis.max_keys (20,000) allows", issue=41, item=11, process=True, drive=peak_rss_recorded,
         writes=("x.csv",), printed=said_once, after=peak_rss_below(PEAK_MB, lambda folder: None)),
    Case(f"analysis.max_vocabulary 100,000: {MANY_TOKENS:,} tokens refused in bounded memory",
         lines_job(lambda: valued_rows(MANY_TOKENS, MANY_TOKENS), FEATURES, "csv",
                   analysis={"max_vocabulary": 100_000}), 2, "more than analysis.max_vocabulary (100,000) allows",
         issue=41, item=11, process=True, drive=peak_rss_recorded, writes=("x.csv",), printed=said_once,
         after=peak_rss_below(PEAK_MB, lambda folder: None)),
]


CASES = JSONL_CASES + VALUE_CASES + MEMORY_CASES + LIMIT_CASES
