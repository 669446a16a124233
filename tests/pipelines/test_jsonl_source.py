"""`input.format: jsonl`: JSON Lines cut into byte ranges (or read whole when gzip), every line read once, bad lines
quarantined by their line number, values typed as the one value model types them; checked against Python's json
reading the same lines."""

import gzip
import json

import pytest

from skewless.config import parse_input
from skewless.pipelines.reading.columns import RawColumn
from skewless.pipelines.reading import jsonl
from skewless.pipelines.reading.sources import RowReader, input_sizes, plan_units

COLUMNS = [RawColumn("a", "int"), RawColumn("x", "float", optional=True),
           RawColumn("s", "bytes", optional=True), RawColumn("tags", "bytes", optional=True, is_list=True)]  # as the job makes lists
BAD = {  # line text -> why it is bad (a fragment of the reason)
    '{"a": 3,,}': "malformed JSON line",
    "[1, 2]": "a JSON line holds an object, not a list",
    '{"a": "many"}': "a: 'many' is not an int",
    '{"a": null, "s": "v"}': "a: required value is missing",
    '{"a": {"b": 1}}': "a: holds a JSON object, not a value",
    '{"a": 18446744073709551616}': "is beyond int64",
}


def _lines() -> list[str]:
    """300 good rows of every kind of value, with each bad line and blank lines among them."""
    lines, bad = [], list(BAD)
    for i in range(300):
        row = {"a": i, "x": i / 4 if i % 5 else None, "tags": ["t%d" % (i % 3)] * (i % 4)}
        if i % 7:
            row["s"] = "2026-01-%02d" % (i % 28 + 1) if i % 2 else "v%d" % (i % 3)  # date-like text stays text
        if i % 11 == 0:
            row["a"] = str(i)  # a number as text, in a numeric column: read as the number
        lines.append(json.dumps(row))
        if i % 50 == 10:
            lines.append(bad.pop())
        if i % 60 == 0:
            lines.append("   ")
    return lines


def _expected(lines):
    """(the a of each good row in order, {line number: reason fragment}) by Python's json, line by line."""
    good, bad = [], {}
    for number, line in enumerate(lines, start=1):
        if line in BAD:
            bad[number] = BAD[line]
        elif line.strip():
            good.append(int(json.loads(line)["a"]))
    return good, bad


def _read(path, units: int):
    config = parse_input(format="jsonl", paths=[str(path)])
    reader = RowReader(config, COLUMNS)
    planned = plan_units(config, [str(path)], input_sizes(config, [str(path)]), units)
    good, bad, tables = [], {}, []
    for unit in planned:
        for chunk in reader.read(unit):
            good += chunk.table.column("a").to_pylist()
            tables.append(chunk.table)
            for row in chunk.bad:
                assert row.line not in bad and row.source == str(path)
                bad[row.line] = row.reason
    return good, bad, tables, len(planned)


@pytest.mark.parametrize("units", [1, 3, 8])
@pytest.mark.parametrize("block_bytes", [jsonl.JSONL_BLOCK_BYTES, 700])
def test_byte_ranges_read_every_line_once_numbered_as_python_reads_it(tmp_path, monkeypatch, units, block_bytes):
    monkeypatch.setattr(jsonl, "JSONL_BLOCK_BYTES", block_bytes)
    lines = _lines()
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join(lines) + "\n")
    good, bad, tables, planned = _read(path, units)
    expected_good, expected_bad = _expected(lines)
    assert planned == units
    assert good == expected_good
    assert sorted(bad) == sorted(expected_bad)
    for number, fragment in expected_bad.items():
        assert fragment in bad[number], (number, bad[number])


def test_values_are_typed_as_json_types_them(tmp_path):
    lines = _lines()
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join(lines) + "\n")
    _, _, tables, _ = _read(path, 1)
    rows = [row for table in tables for row in table.to_pylist()]
    expected = [json.loads(line) for line in lines if line.strip() and line not in BAD]
    assert [row["x"] for row in rows] == [row.get("x") for row in expected]  # quarters: exact in float32
    assert [row["s"] for row in rows] == [None if row.get("s") is None else row["s"].encode() for row in expected]
    assert [row["tags"] for row in rows] == [[tag.encode() for tag in row["tags"]] for row in expected]


def test_a_gzip_file_is_one_unit_read_whole(tmp_path):
    lines = _lines()
    path = tmp_path / "rows.jsonl.gz"
    path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    good, bad, _, planned = _read(path, 4)
    expected_good, expected_bad = _expected(lines)
    assert (planned, good, sorted(bad)) == (1, expected_good, sorted(expected_bad))


def test_types_are_inferred_from_the_json_types(tmp_path):
    from skewless.pipelines.plan.raw_types import infer_types

    path = tmp_path / "rows.jsonl"
    path.write_text('{"a": 1, "x": 2.5, "s": "v", "tags": ["t"], "n": 3}\n{"a": 2, "x": 3, "n": "4"}\n'
                    '{"a": 3, "n": "5"}\n')
    kinds = infer_types(parse_input(format="jsonl", paths=[str(path)]), [str(path)])
    # n mixes numbers and text: the kind most of its values parse as, as for a CSV column
    assert kinds == {"a": "int", "x": "float", "s": "bytes", "tags": "bytes", "n": "int"}


def test_schema_infer_reads_json_lines_as_the_job_does(tmp_path):
    from skewless.pipelines.reading import read_batches
    from skewless.schemas.infer import infer_schema
    from skewless.schemas.schema_io import schema_types

    path = tmp_path / "rows.jsonl"
    path.write_text('{"a": 1, "x": 2.5, "s": "v", "n": 3}\n{"a": 2, "x": 3, "n": "4"}\n{"a": 3,,}\n'
                    '{"a": 4, "s": "w", "n": "x"}\n{"a": 5, "n": 6}\n')
    config = parse_input(format="jsonl", paths=[str(path)])
    inferred = infer_schema(config, read_batches(config))
    assert (inferred.rows, inferred.rejected) == (4, 1)
    assert schema_types(inferred.schema) == {"a": "int", "x": "float", "s": "bytes", "n": "int"}
