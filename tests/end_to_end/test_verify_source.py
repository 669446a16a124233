"""`skewless verify` on rows as the source holds them (issue 43 item 9): a clean run shows no difference; a run
with ONE path broken on purpose (the job's reader, the serving parse, the native layers, an export) shows a
difference naming the feature and the rows (file:line), and the command exits 1.

Each break stands for one of issue 43's items 1-8; the breaks are monkeypatches of the path, so these tests keep
proving that verify sees such a skew after the items themselves are fixed.
"""

import keras
import numpy as np
import pyarrow as pa
import pytest
import tensorflow as tf
from typer.testing import CliRunner

from skewless.cli import app
from skewless.layers import TransformLayer, export_serving_model, raw_inputs
from skewless.pipelines import run
from skewless.pipelines.commands.verify import verify
from skewless.pipelines.reading import sources

ROWS = 120
STATES = ['"New York"', '"NJ"', "CA", '"a ""quoted"" one"']


def write_rows(path, state=lambda i: STATES[i % len(STATES)]) -> None:
    """A CSV of ROWS good rows (quoted text, ints, floats) and two rows the job quarantines (lines 40 and 81)."""
    rng = np.random.default_rng(4)
    lines = ["id,x,n,state,label"]
    for i in range(ROWS):
        lines.append(f"{i},{rng.normal(3, 2):.4f},{i % 7},{state(i)},{i % 2}")
    lines.insert(39, "900,not a number,1,CA,0")
    lines.insert(80, "901,1.5,2,CA")  # a field short
    path.write_text("\n".join(lines) + "\n")


FEATURES = {"x": {"transform": "z_score"}, "n": {"transform": "passthrough"},
            "state": {"transform": "vocabulary", "num_oov_buckets": 1}}


def job(folder, **input_options):
    return run({"name": "t", "input": {"format": "csv", "paths": [str(folder / "rows.csv")], "header": True,
                                       **input_options},
                "features": FEATURES, "label": {"column": "label"},
                "output": {"dir": str(folder / "out"), "shards": 2, "max_bad_fraction": 0.5}}).output_dir


def damage_reader(monkeypatch, column: str, change) -> None:
    """The job's reader gives `change(value)` for `column` in every row it reads (a broken reader)."""
    original = sources.RowReader.chunk

    def chunk(self, *args, **kwargs):
        result = original(self, *args, **kwargs)
        table = result.table
        index = table.schema.get_field_index(column)
        values = [None if value is None else change(value) for value in table.column(column).to_pylist()]
        result.table = table.set_column(index, column, pa.array(values, table.schema.field(column).type))
        return result

    monkeypatch.setattr(sources.RowReader, "chunk", chunk)


def differences(result) -> dict[tuple[str, str], list[str]]:
    return {(d.path, d.feature): d.rows for d in result.source.differences}


@pytest.fixture(scope="module")
def clean_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("clean")
    write_rows(folder / "rows.csv")
    return job(folder)


def test_a_clean_run_has_no_difference_on_any_path(clean_run):
    result = verify(clean_run, sample=40)
    assert result.source is not None and result.source.differences == [], [d.line() for d in result.source.differences]
    assert result.unchecked == {} and result.exit_code == 0
    assert (result.source.rows, result.source.written, result.source.quarantined) == (ROWS + 2, ROWS, 2)


def test_a_reader_that_trims_quoted_spaces_is_reported_by_feature_and_line(tmp_path, monkeypatch):
    """Item 1: the job's CSV reader changes a quoted value (" NJ" read as "NJ"); serving keeps it."""
    write_rows(tmp_path / "rows.csv", state=lambda i: '" NJ"' if i % 3 == 0 else '"NJ"')
    damage_reader(monkeypatch, "state", lambda value: value.strip())
    run_dir = job(tmp_path, skip_initial_space=False)
    monkeypatch.undo()
    found = differences(verify(run_dir, sample=20, native=False))
    # " NJ" is line 2 (row 0), 5 (row 3): the header is line 1
    assert found[("TransformLayer", "state")][:2] == [f"{tmp_path / 'rows.csv'}:2", f"{tmp_path / 'rows.csv'}:5"]
    assert {feature for _, feature in found} == {"state"}
    outcome = CliRunner().invoke(app, ["verify", run_dir, "--sample", "20"])
    assert outcome.exit_code == 1 and "TransformLayer: state:" in outcome.output and "rows.csv:5" in outcome.output


def test_a_reader_that_reads_booleans_otherwise_is_reported(tmp_path, monkeypatch):
    """Item 2: a JSON boolean read as another number by the job's reader than by serving (1/0)."""
    rows = [{"id": i, "flag": bool(i % 3), "x": float(i), "label": i % 2} for i in range(60)]
    (tmp_path / "rows.jsonl").write_text("\n".join(__import__("json").dumps(row) for row in rows) + "\n")
    damage_reader(monkeypatch, "flag", lambda value: 1 - value)
    run_dir = run({"name": "t", "input": {"format": "jsonl", "paths": [str(tmp_path / "rows.jsonl")]},
                   "features": {"flag": {"transform": "passthrough"}, "x": {"transform": "z_score"}},
                   "label": {"column": "label"}, "output": {"dir": str(tmp_path / "out"), "shards": 1, "max_bad_fraction": 0.5}}).output_dir
    monkeypatch.undo()
    found = differences(verify(run_dir, sample=20, native=False))
    assert set(found) == {("TransformLayer", "flag"), ("TransformLayer, each row alone", "flag"), ("predict_raw", "flag")}
    assert len(found[("TransformLayer", "flag")]) == 60 and found[("TransformLayer", "flag")][0].endswith("rows.jsonl:1")


def batch_dependent_model(run_dir):
    """A model whose output for a row depends on the rows served with it (it subtracts the batch's mean)."""
    inputs = raw_inputs(run_dir)
    age = keras.ops.expand_dims(TransformLayer(run_dir)(inputs)["x"], -1)
    return keras.Model(inputs, keras.layers.Lambda(lambda v: v - keras.ops.mean(v, axis=0))(age))


def plain_model(run_dir):
    inputs = raw_inputs(run_dir)
    return keras.Model(inputs, keras.layers.Dense(1)(keras.ops.expand_dims(TransformLayer(run_dir)(inputs)["x"], -1)))


def test_an_export_whose_output_depends_on_the_batch_is_reported(clean_run, tmp_path):
    """Item 3: a row served alone and in a batch must give the same output."""
    plain = export_serving_model(clean_run, plain_model(clean_run), tmp_path / "plain")
    assert verify(clean_run, sample=20, export_dir=plain, native=False, source_rows=30).source.differences == []
    skewed = export_serving_model(clean_run, batch_dependent_model(clean_run), tmp_path / "skewed")
    found = differences(verify(clean_run, sample=20, export_dir=skewed, native=False, source_rows=30))
    # predict_raw computes the same batch as serving_default, so their batch outputs agree: reported once
    assert sorted(found) == [("serving_default alone vs batched", "output_0")]
    assert len(found[("serving_default alone vs batched", "output_0")]) == 30


def test_a_predict_reader_that_reads_rows_otherwise_is_reported(clean_run, tmp_path, monkeypatch):
    """Item 5: `skewless predict`'s reader reads a value otherwise than the job's (here: x one higher)."""
    from skewless.pipelines.score import batch_prediction

    export_dir = export_serving_model(clean_run, plain_model(clean_run), tmp_path / "export")

    class Skewed(sources.RowReader):
        def chunk(self, *args, **kwargs):
            result = super().chunk(*args, **kwargs)
            x = result.table.column("x").to_numpy(zero_copy_only=False) + 1
            result.table = result.table.set_column(result.table.schema.get_field_index("x"), "x", pa.array(x))
            return result

    monkeypatch.setattr(batch_prediction, "RowReader", Skewed)
    found = differences(verify(clean_run, sample=20, export_dir=export_dir, native=False, source_rows=30))
    assert list(found) == [("skewless predict", "output_0")]
    assert len(found[("skewless predict", "output_0")]) == 30  # lines 2-31: every row, each named


def test_serving_a_row_the_job_quarantines_is_reported(tmp_path, monkeypatch):
    """Item 4: the job quarantines rows (here: a value check refusing x > 5) that serving transforms."""
    write_rows(tmp_path / "rows.csv")
    for_job = sources.RowReader.for_job.__func__

    def refusing(cls, *args, **kwargs):
        reader = for_job(cls, *args, **kwargs)
        reader.value_checks["x"] = lambda values: {row: "above 5" for row, value in enumerate(values.to_pylist())
                                                   if value is not None and value > 5}
        return reader

    monkeypatch.setattr(sources.RowReader, "for_job", classmethod(refusing))
    run_dir = job(tmp_path)
    result = verify(run_dir, sample=20, native=False)  # verify reads with the same (damaged) reader
    monkeypatch.undo()
    found = differences(result)
    assert list(found) == [("serving", "x")]
    assert 0 < len(found[("serving", "x")]) == result.source.quarantined - 2  # the two bad lines are refused


@pytest.mark.parametrize("label", ["maybe", ""], ids=["outside the map", "missing"])
def test_rows_quarantined_for_their_label_alone_are_served_without_a_difference(tmp_path, label):
    """Serving and predict take no label: a row the job quarantines for its label (outside label.map, or missing
    with label.missing: quarantine) is served and scored as any other, and the check still sees the bad number."""
    write_rows(tmp_path / "rows.csv")
    header, *lines = (tmp_path / "rows.csv").read_text().splitlines()
    named = {"0": "no", "1": "yes"}
    lines = [line.rsplit(",", 1)[0] + "," + named[line.rsplit(",", 1)[1]] if line.count(",") == 4 else line
             for line in lines]
    lines[4] = lines[4].rsplit(",", 1)[0] + f",{label}"  # line 6
    (tmp_path / "rows.csv").write_text("\n".join([header, *lines]) + "\n")
    run_dir = run({"name": "t", "input": {"format": "csv", "paths": [str(tmp_path / "rows.csv")], "header": True},
                   "features": FEATURES, "label": {"column": "label", "map": {"no": 0, "yes": 1},
                                                   "missing": "quarantine"},
                   "output": {"dir": str(tmp_path / "out"), "shards": 2, "max_bad_fraction": 0.5}}).output_dir
    export_dir = export_serving_model(run_dir, plain_model(run_dir), tmp_path / "export")
    result = verify(run_dir, sample=20, export_dir=export_dir, native=False, source_rows=45)
    assert result.source.quarantined == 2  # line 6's label and line 40's number
    assert result.source.differences == [], [d.line() for d in result.source.differences]


def test_a_serving_parse_that_trims_text_is_reported(tmp_path, monkeypatch):
    """Item 1 from the other side: the job keeps " NJ" (skip_initial_space: false), a serving parse trims it."""
    from skewless.pipelines.commands import verify_source  # the module whose serving parse is replaced

    write_rows(tmp_path / "rows.csv", state=lambda i: '" NJ"' if i % 3 == 0 else '"NJ"')
    run_dir = job(tmp_path, skip_initial_space=False)
    assert verify(run_dir, sample=20, native=False).source.differences == []
    parse = verify_source.parse_raw_examples

    def trimming(examples, spec):
        return {name: (tf.SparseTensor(value.indices, tf.strings.strip(value.values), value.dense_shape)
                       if isinstance(value, tf.SparseTensor) and value.dtype == tf.string
                       else tf.strings.strip(value) if value.dtype == tf.string else value)
                for name, value in parse(examples, spec).items()}

    monkeypatch.setattr(verify_source, "parse_raw_examples", trimming)
    found = differences(verify(run_dir, sample=20, native=False))
    assert set(found) == {("TransformLayer", "state"), ("TransformLayer, each row alone", "state")}
    assert len(found[("TransformLayer", "state")]) == ROWS // 3


def test_native_layers_that_do_not_fill_a_missing_value_are_reported(tmp_path, monkeypatch):
    """Item 6: the native preprocessor's fill broken (a missing float left NaN) while the graph fills it."""
    from skewless.layers import fill_missing

    write_rows(tmp_path / "rows.csv")
    text = (tmp_path / "rows.csv").read_text().splitlines()
    text[5] = "4,,4,CA,0"  # x missing on line 6
    (tmp_path / "rows.csv").write_text("\n".join(text) + "\n")
    run_dir = run({"name": "t", "input": {"format": "csv", "paths": [str(tmp_path / "rows.csv")], "header": True},
                   "features": {**FEATURES, "x": {"transform": "z_score", "fill": "mean"}},
                   "label": {"column": "label"}, "output": {"dir": str(tmp_path / "out"), "shards": 1, "max_bad_fraction": 0.5}}).output_dir
    fill = fill_missing.FillMissing.call

    def leaving_nan(self, inputs):
        if isinstance(inputs, tf.SparseTensor) and inputs.dtype.is_floating:
            one_column = tf.SparseTensor(inputs.indices, inputs.values, tf.stack([inputs.dense_shape[0], 1]))
            return tf.sparse.to_dense(one_column, default_value=float("nan"))[:, 0]
        return fill(self, inputs)

    monkeypatch.setattr(fill_missing.FillMissing, "call", leaving_nan)
    found = differences(verify(run_dir, sample=20))
    assert found[("native Keras preprocessor (sparse input)", "x")] == [f"{tmp_path / 'rows.csv'}:6"], found


def test_a_generator_list_read_as_its_printed_form_is_reported(tmp_path, monkeypatch):
    """Item 7: a python source's list column read as the list's printed text by the job's reader."""
    damage_reader(monkeypatch, "tags", lambda items: [repr([item.decode() for item in items]).encode()])
    run_dir = run({"name": "t", "input": {"format": "python", "generator": "generated_rows:tagged"},
                   "features": {"tags": {"transform": "vocabulary", "list": True, "num_oov_buckets": 1},
                                "x": {"transform": "z_score"}},
                   "output": {"dir": str(tmp_path / "out"), "shards": 1, "max_bad_fraction": 0.5}}).output_dir
    monkeypatch.undo()
    found = differences(verify(run_dir, sample=20, native=False))
    assert {feature for _, feature in found} == {"tags"} and ("TransformLayer", "tags") in found
    assert found[("TransformLayer", "tags")][0] == "generated_rows:tagged[shard 0 of 1]:2"  # row 1 holds no tag


def test_values_that_depend_on_how_the_input_was_cut_are_reported(tmp_path, monkeypatch):
    """Item 8 as the shards show it: the job's reader gives other last bits for the rows of its second work unit."""
    write_rows(tmp_path / "rows.csv")
    original = sources.RowReader.read

    def read(self, unit):
        for chunk in original(self, unit):
            if unit.index == 1:
                x = chunk.table.column("x").to_numpy(zero_copy_only=False).astype(np.float32)
                chunk.table = chunk.table.set_column(chunk.table.schema.get_field_index("x"), "x",
                                                     pa.array(np.nextafter(x, np.float32(np.inf))))
            yield chunk

    monkeypatch.setattr(sources.RowReader, "read", read)
    run_dir = job(tmp_path)
    monkeypatch.undo()
    found = differences(verify(run_dir, sample=20, native=False, source_rows=ROWS + 2))
    assert {feature for _, feature in found} == {"x"}
    assert 0 < len(found[("TransformLayer", "x")]) < ROWS  # the second unit's rows only
