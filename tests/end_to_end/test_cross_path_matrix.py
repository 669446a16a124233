"""Issue 43's cross-path matrix: generated rows holding every edge (tests/raw_values.py), written to every source,
through every serving path, must give the values the job wrote; rows the job quarantines must be refused.

One job per source on the same derandomized rows; `verify_source.check_source_rows` pairs each raw row with its
record in the shards and serves it as a client holds it. Cases that meet a known open item of issue 43 are marked
xfail(strict) with the item; the lead removes the mark when the fix merges.
"""

import pytest

from raw_values import FEATURES, SOURCES, generated_rows, write_source
from rich_rows import written_rows
from skewless.config import load_config
from skewless.pipelines.commands.verify_source import check_source_rows
from skewless.pipelines.plan.plan import plan

PATHS = ("TransformLayer", "transform_features", "native Keras preprocessor (sparse input)",
         "native Keras preprocessor (dense input)", "serving", "serving_default alone vs batched", "request")
DEFAULT_SOURCES = ("csv", "parquet", "jsonl", "python")
KNOWN = {}  # (source, path) -> issue 43 item: filled from what main shows


def case(source, path):
    marks = [] if source in DEFAULT_SOURCES else [pytest.mark.slow]
    if (source, path) in KNOWN:
        marks.append(pytest.mark.xfail(strict=True, reason=f"issue 43 item {KNOWN[(source, path)]}"))
    return pytest.param(source, path, marks=marks, id=f"{source}-{path}")


@pytest.fixture(scope="module")
def rows():
    return generated_rows()


@pytest.fixture(scope="module")
def checked(rows, tmp_path_factory):
    """source -> (run directory, check_source_rows on every row with an export), made once per source."""
    import keras

    from skewless.layers import TransformLayer, export_serving_model, raw_inputs
    from skewless.pipelines import run

    done = {}

    def of(source):
        if source not in done:
            folder = tmp_path_factory.mktemp(source)
            config = {"name": source, "input": write_source(source, rows, folder),
                      "features": {"id": {"transform": "passthrough"}, **FEATURES},
                      "output": {"dir": str(folder / "out"), "shards": 2, "max_bad_fraction": 1.0}}
            run_dir = run(config).output_dir
            inputs = raw_inputs(run_dir)
            features = TransformLayer(run_dir)(inputs)
            model = keras.Model(inputs, keras.layers.Dense(1)(keras.ops.expand_dims(features["x"], -1)))
            export_dir = export_serving_model(run_dir, model, folder / "export")
            job_config = load_config(f"{run_dir}/config.yaml")
            check = check_source_rows(run_dir, job_config, plan(job_config), len(rows) + 10, export_dir)
            done[source] = (run_dir, check)
        return done[source]

    return of


@pytest.mark.parametrize("source,path", [case(source, path) for source in SOURCES for path in PATHS])
def test_every_path_gives_what_the_job_wrote(checked, source, path):
    _, check = checked(source)
    assert check.written > 0 and check.quarantined > 0
    assert not [name for name in check.unchecked if name.startswith(path)], check.unchecked
    found = [difference.line() for difference in check.differences if difference.path == path]
    assert found == []


@pytest.mark.parametrize("source", [pytest.param(s, marks=[] if s in DEFAULT_SOURCES else [pytest.mark.slow])
                                    for s in SOURCES if s != "csv"])
def test_every_source_writes_what_the_csv_source_writes(checked, source):
    """The same rows give the same transformed values whatever source holds them (by id)."""
    reference, _ = checked("csv")
    other, _ = checked(source)
    expected, got = written_rows(reference), written_rows(other)
    assert expected["id"] == got["id"]
    different = {name: [expected["id"][i] for i, (a, b) in enumerate(zip(expected[name], got[name])) if a != b]
                 for name in expected}
    assert {name: ids[:5] for name, ids in different.items() if ids} == {}
