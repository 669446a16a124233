"""Column types inferred from a sample that spans the input (not its first MB), the same in the job and in
`skewless schema infer`; `input.types` pins a column's type without a schema, in every format that infers types."""

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from run_output import quarantine_rows, read_rows
from skewless.cli import app
from skewless.config import load_config
from skewless.errors import ConfigError
from skewless.input_formats import reader_of
from skewless.pipelines import run
from skewless.pipelines.plan.raw_types import infer_types
from skewless.pipelines.reading import input_config
from skewless.pipelines.reading.lines import SAMPLE_BYTES, sample_ranges
from skewless.schemas import load_schema, schema_types

PAD = "p" * 200  # a wide column that is no feature: the first MB then holds a few thousand rows


def numbers_then_words(rows: int, numeric_rows: int) -> pd.DataFrame:
    """`x` a number in the first `numeric_rows` rows, a word in the others."""
    x = [str(i % 97) if i < numeric_rows else f"w{i % 13}" for i in range(rows)]
    return pd.DataFrame({"id": range(rows), "x": x, "pad": PAD})


def test_a_column_numeric_in_the_first_mb_and_text_later_is_read_as_text(tmp_path):
    frame = numbers_then_words(11_000, 5_200)  # 47% numbers, all in the first 1.1 MB
    path = tmp_path / "late_text.csv"
    frame.to_csv(path, index=False)
    head = path.read_bytes()[:SAMPLE_BYTES].decode()
    assert all(line.split(",")[1].isdigit() for line in head.splitlines()[1:-1])  # the first MB: numbers only
    numeric = pd.to_numeric(frame["x"], errors="coerce").notna().mean()
    assert numeric < 0.5

    out = tmp_path / "out"
    result = run({"name": "late", "input": {"format": "csv", "paths": [str(path)], "header": True},
                  "features": {"id": {"transform": "passthrough"}, "x": {"transform": "vocabulary"}},
                  "output": {"dir": str(out), "shards": 1, "splits": {"train": 1.0}}})
    assert result.rows["quarantined"] == 0 and quarantine_rows(out) == []
    assert result.features["x"]["type"] == "bytes"
    written, _ = read_rows(out, "train")
    assert len(written["x"]) == len(frame)

    # `schema infer` types the column as the job does
    schema_path = tmp_path / "inferred.pbtxt"
    shown = CliRunner().invoke(app, ["schema", "infer", str(path), "--header", "--out", str(schema_path)])
    assert shown.exit_code == 0, shown.output
    assert schema_types(load_schema(schema_path)) == {"id": "int", "x": "bytes", "pad": "bytes"}


@pytest.mark.parametrize("numeric_share, kind", [(0.4, "bytes"), (0.7, "int")])
def test_jsonl_types_come_from_lines_spread_over_the_files(tmp_path, numeric_share, kind):
    # two files: the first all numbers, the second all words; the sample reads both, in proportion
    rows = 12_000
    numeric_rows = int(rows * numeric_share)
    frame = numbers_then_words(rows, numeric_rows)
    paths = [tmp_path / "a.jsonl", tmp_path / "b.jsonl"]
    for target, part in zip(paths, (frame[:numeric_rows], frame[numeric_rows:])):
        records = [{"id": int(i), "x": int(x) if x.isdigit() else x, "pad": PAD} for i, x in zip(part["id"], part["x"])]
        target.write_text("".join(json.dumps(record) + "\n" for record in records))
    assert paths[0].stat().st_size > SAMPLE_BYTES
    config = input_config([str(p) for p in paths], format="jsonl")
    assert infer_types(config, [str(p) for p in paths])["x"] == kind


@pytest.mark.parametrize("sizes", [[100], [3 << 20], [5 << 20, 10, 1 << 20], [SAMPLE_BYTES + 1]])
def test_sample_ranges_span_the_files_and_hold_about_a_megabyte(sizes):
    ranges = sample_ranges(sizes)
    if sum(sizes) <= SAMPLE_BYTES:
        assert ranges == [(i, 0, -1) for i, size in enumerate(sizes) if size]
        return
    ends = np.cumsum(sizes)
    offsets = [int(ends[i] - sizes[i]) + start for i, start, _ in ranges]
    assert offsets[0] == 0 and int(ends[ranges[-1][0]] - sizes[ranges[-1][0]]) + ranges[-1][2] == sum(sizes)
    assert offsets == sorted(offsets)
    assert all(0 <= start < stop <= sizes[i] for i, start, stop in ranges)
    assert sum(stop - start for _, start, stop in ranges) <= SAMPLE_BYTES


def write_codes(tmp_path, format: str, rows: int) -> tuple[dict, list[str]]:
    """An input whose `code` column holds whole numbers (zip codes), and the text each row's code is."""
    codes = [(i * 7919) % 100_000 for i in range(rows)]
    if format == "csv":
        path = tmp_path / "codes.csv"
        pd.DataFrame({"id": range(rows), "code": [f"{c:05d}" for c in codes]}).to_csv(path, index=False)
        return {"format": "csv", "paths": [str(path)], "header": True}, [f"{c:05d}" for c in codes]
    if format == "jsonl":
        path = tmp_path / "codes.jsonl"
        path.write_text("".join(json.dumps({"id": i, "code": c}) + "\n" for i, c in enumerate(codes)))
        return {"format": "jsonl", "paths": [str(path)]}, [str(c) for c in codes]
    return ({"format": "python", "generator": "generated_rows:codes", "args": {"rows": rows}},
            [str(c) for c in codes])


@pytest.mark.parametrize("format", ["csv", "jsonl", "python"])
def test_input_types_pins_a_column_type_without_a_schema(tmp_path, format):
    rows = 300
    given, texts = write_codes(tmp_path, format, rows)
    out = tmp_path / "out"
    config = {"name": "codes", "input": {**given, "types": {"code": "string", "id": "float"}},
              "features": {"id": {"transform": "passthrough"}, "code": {"transform": "passthrough"}},
              "output": {"dir": str(out), "shards": 1, "splits": {"train": 1.0}}}
    result = run(config)
    assert result.rows["quarantined"] == 0
    assert (result.features["code"]["type"], result.features["id"]["type"]) == ("bytes", "float")
    written, _ = read_rows(out, "train")
    order = np.argsort(written["id"])
    assert written["id"].dtype == np.float32
    assert written["id"][order].tolist() == list(range(rows))
    assert [value.decode() for value in written["code"][order]] == texts


def test_input_types_refused_with_a_schema_or_for_a_column_the_config_does_not_read(tmp_path):
    base = {"name": "t", "input": {"format": "csv", "paths": ["x.csv"], "header": True},
            "features": {"a": {"transform": "passthrough"}}, "output": {"dir": str(tmp_path / "o")}}
    with pytest.raises(ConfigError, match="input.types names 'b', which is not a raw column"):
        load_config({**base, "input": {**base["input"], "types": {"b": "string"}}})
    with pytest.raises(ConfigError, match="input.types and schema"):
        load_config({**base, "schema": "s.pbtxt", "input": {**base["input"], "types": {"a": "string"}}})
    with pytest.raises(ConfigError, match="types"):
        load_config({**base, "input": {**base["input"], "types": {"a": "text"}}})


def test_a_gzip_file_is_sampled_from_its_start(tmp_path):
    # a gzip stream cannot be entered at an offset: its sample is its first MB, whatever follows (values.md)
    frame = numbers_then_words(11_000, 5_200)
    path = tmp_path / "late_text.csv.gz"
    frame.to_csv(path, index=False, compression="gzip")
    config = input_config([str(path)], header=True)
    paths = [str(path)]
    assert infer_types(reader_of("csv").resolved(config, paths), paths)["x"] == "int"


@pytest.mark.parametrize("numeric_share, kind", [(0.47, "bytes"), (0.53, "int")])
def test_the_sample_weighs_the_parts_of_a_file_as_the_file_does(tmp_path, numeric_share, kind):
    # 5 MB sorted by kind (numbers first): the sample's share of numbers is within a few points of the file's
    rows = 24_000
    frame = numbers_then_words(rows, int(rows * numeric_share))
    path = tmp_path / "sorted.csv"
    frame.to_csv(path, index=False)
    assert path.stat().st_size > 4 * SAMPLE_BYTES
    config = input_config([str(path)], header=True)
    assert infer_types(reader_of("csv").resolved(config, [str(path)]), [str(path)])["x"] == kind
