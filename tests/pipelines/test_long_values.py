"""One huge value (issue 29, item 5): statistics and the report keep string values cut to `MAX_VALUE_BYTES`,
shown with their length and a digest, so run.json and report.html stay small whatever one field holds."""

import hashlib
import json

import pyarrow as pa
import yaml
from commands import cli

from skewless.pipelines.analyze.stats import MAX_VALUE_BYTES, SHOWN_BYTES, capped, cut_value
from skewless.statistics_files import feature_name, read_statistics

FIELD_BYTES = 5_000_000
ROWS = 400


def long_value() -> str:
    # letters in no repeating run a compressor would shrink: the field costs its size everywhere it is copied
    return "".join(chr(0x61 + (i * 7919) % 26) for i in range(FIELD_BYTES))


def test_values_past_the_cap_are_cut_with_their_length_and_digest():
    first, second = b"x" * (MAX_VALUE_BYTES + 1), b"x" * (MAX_VALUE_BYTES + 1) + b"y"
    kept = b"k" * MAX_VALUE_BYTES
    values = capped(pa.array([kept, first, None, second, "é".encode() * 200], pa.binary())).to_pylist()
    assert values[0] == kept and values[2] is None
    assert values[1] == b"x" * SHOWN_BYTES + (
        f"… [{MAX_VALUE_BYTES + 1:,} bytes, sha256 {hashlib.sha256(first).hexdigest()[:16]}]".encode())
    assert values[1] != values[3]  # the same start, different values: still two values
    # cut between whole UTF-8 characters (2 bytes each): 32 of them
    assert values[4].decode().startswith("é" * 32 + "…")
    assert values[4] == cut_value("é".encode() * 200)


def test_a_huge_field_leaves_run_json_and_the_report_small(tmp_path):
    value = long_value()
    with open(tmp_path / "notes.csv", "w") as handle:
        handle.write("id,note,x\n")
        for i in range(ROWS):
            # the long value in 4 rows: one of the column's most frequent values, listed with its count
            handle.write(f"{i},{value if i % 100 == 7 else f'n{i % 5}'},{i % 13 / 3:.3f}\n")
    config = {"name": "long", "input": {"format": "csv", "paths": [str(tmp_path / "notes.csv")], "header": True},
              "features": {"id": {"transform": "passthrough"}, "note": {"transform": "hash", "hash_buckets": 8},
                           "x": {"transform": "z_score"}},
              "output": {"dir": str(tmp_path / "out"), "shards": 1}}
    (tmp_path / "long.yaml").write_text(yaml.safe_dump(config))
    result = cli("run", str(tmp_path / "long.yaml"))
    assert result.returncode == 0, result.stderr

    cut = cut_value(value.encode()).decode()
    assert cut.startswith(value[:SHOWN_BYTES] + "… [5,000,000 bytes, sha256 ")
    summary = (tmp_path / "out" / "run.json").read_text()
    assert len(summary) < 50_000
    note = json.loads(summary)["features"]["note"]
    assert [cut, 4] in note["top_values"]
    assert note["distinct"] == 6
    report = (tmp_path / "out" / "report.html").read_text()
    assert len(report) < 300_000
    assert cut in report
    statistics = {feature_name(f): f for f in read_statistics(str(tmp_path / "out"), "train").features}["note"]
    assert cut in [top.value for top in statistics.string_stats.top_values]
    # the average length is of the whole values
    train_rows = statistics.string_stats.common_stats.num_non_missing
    long_rows = {top.value: top.frequency for top in statistics.string_stats.top_values}[cut]
    assert statistics.string_stats.avg_length > long_rows * FIELD_BYTES / train_rows
