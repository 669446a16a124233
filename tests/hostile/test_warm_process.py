"""Issue 41, items 13-15: what only a Python process that lives on shows (a notebook, a server).

13: a rerun in the same process after the input or the schema file changed writes what a fresh process writes;
14: two threads calling run() at once each get the run a sequential call gives;
15: serving_default on an empty request returns empty outputs.
"""

import threading

import keras
import pytest
import tensorflow as tf
from example_job import example_config
from run_output import files_of

from skewless.layers import export_serving_model, model_inputs, read_spec_file, serialize_raw_examples
from skewless.pipelines import run
from skewless.pipelines.reading.synthetic_rows import synthetic_rows

SMALL = {"format": "synthetic", "rows": 300, "seed": 3}


# ------------------------------------------------------------------------------------------ 15: an empty request

def test_an_empty_request_returns_empty_outputs(example_run, tmp_path):
    """Issue 41 item 15: serving_default on 0 examples failed with "Inconsistent max number of elements for
    feature age"; it must give each output with 0 rows and the shape a full request gives."""
    keras.utils.set_random_seed(4)
    inputs, encoded = model_inputs(example_run.output_dir)
    model = keras.Model(inputs, {"score": keras.layers.Dense(2)(encoded)})
    export = export_serving_model(example_run.output_dir, model, tmp_path / "export")
    served = tf.saved_model.load(export)
    spec = read_spec_file(export)["raw"]
    rows = [{name: value for name, value in row.items() if name in spec}
            for _, table in synthetic_rows(1, 0, 3) for row in table.to_pylist()]
    full = {name: value.numpy() for name, value in served.signatures["serving_default"](
        examples=tf.constant(serialize_raw_examples(rows, spec))).items()}
    for signature in ("serving_default", "transform_features"):
        empty = served.signatures[signature](examples=tf.constant([], tf.string))
        reference = full if signature == "serving_default" else {
            name: value.numpy() for name, value in served.signatures[signature](
                examples=tf.constant(serialize_raw_examples(rows, spec))).items()}
        assert sorted(empty) == sorted(reference), signature
        for name, value in empty.items():
            assert value.shape[0] == 0 and value.shape[1:] == reference[name].shape[1:], (signature, name)
            assert value.dtype == reference[name].dtype, (signature, name)
    assert len(full["score"]) == len(rows)
    # predict_raw: one tensor per raw feature, of no rows
    signature = served.signatures["predict_raw"]
    arguments = {name: tf.zeros([0, *spec.shape[1:]], spec.dtype)
                 for name, spec in signature.structured_input_signature[1].items()}
    empty = signature(**arguments)
    assert {name: value.shape for name, value in empty.items()} == {
        name: (0, *value.shape[1:]) for name, value in full.items()}


# ----------------------------------------------------------------------------------- 14: two threads at once

def test_two_threads_running_jobs_at_once_each_get_the_sequential_run(tmp_path):
    """Issue 41 item 14: a second thread's run() failed with a bare AssertionError from tf.Transform's annotators
    (`assert _OBJECT_TRACKER is None`); both must succeed, writing what each writes run alone."""
    configs = [example_config(tmp_path / "a", input=SMALL),
               example_config(tmp_path / "b", input={**SMALL, "seed": 4},
                              features={"age": {"transform": "scale_0_1"}, "workclass": {"transform": "vocabulary"}})]
    outcomes = {}
    start = threading.Barrier(len(configs))

    def job(index):
        start.wait()
        try:
            outcomes[index] = files_of(run(configs[index]).output_dir)
        except BaseException as error:  # noqa: BLE001 - reported by the assertion below
            outcomes[index] = error

    threads = [threading.Thread(target=job, args=(index,)) for index in range(len(configs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    failed = {index: repr(outcome) for index, outcome in outcomes.items() if isinstance(outcome, BaseException)}
    assert failed == {}
    for index, config in enumerate(configs):
        assert outcomes[index] == files_of(run(config, overwrite=True).output_dir), index


# --------------------------------------------------------------- 13: a rerun after the input or the schema changed

def _cities_csv(path, cities: int) -> None:
    path.write_text("age,city\n" + "".join(f"{20 + i % 37},c{i % cities}\n" for i in range(90)))


def _schema(path, domain: list[str] | None) -> None:
    city_domain = "".join(f' value: "{value}"' for value in domain or [])
    path.write_text('feature { name: "age" type: INT }\n'
                    'feature { name: "city" type: BYTES'
                    + (f" string_domain {{{city_domain} }}" if domain else "") + " }\n")


def _city_domain(result) -> tuple[int, int]:
    from skewless.schemas import load_schema

    schema = load_schema(f"{result.output_dir}/transform_graph/transformed_metadata/schema.pbtxt")
    (city,) = [feature for feature in schema.feature if feature.name == "city"]
    return city.int_domain.min, city.int_domain.max


def _written_cities(folder, domain) -> int:
    """The distinct cities of the rows the run keeps (those the schema's domain allows), counted from the CSV."""
    lines = (folder / "rows.csv").read_text().splitlines()[1:]
    return len({line.split(",")[1] for line in lines if domain is None or line.split(",")[1] in domain})


# (cities, schema domain) before and after the change, under the same paths
CHANGES = {
    "the data file gains a city": ((2, None), (3, None)),
    "the data file loses a city": ((3, None), (2, None)),
    "the schema file gains a domain": ((3, None), (3, ["c0", "c1"])),
    "the schema file loses its domain": ((3, ["c0", "c1"]), (3, None)),
}


@pytest.mark.parametrize("change", CHANGES)
def test_a_rerun_after_the_input_changed_under_the_same_path_writes_the_new_domain(change, tmp_path):
    """Issue 41 item 13: the second run in one process kept the first run's vocabulary size in
    transformed_metadata/schema.pbtxt (`int_domain max: 2` with 3 cities), which model_inputs sizes encodings by."""
    config = {"name": "cities", "input": {"format": "csv", "paths": [str(tmp_path / "rows.csv")], "header": True},
              "schema": str(tmp_path / "schema.pbtxt"),
              "features": {"age": {"transform": "z_score"}, "city": {"transform": "vocabulary", "num_oov_buckets": 1}},
              "output": {"dir": str(tmp_path / "out"), "splits": {"train": 1.0}, "shards": 1,
                         "max_bad_fraction": 0.5}}
    for cities, domain in CHANGES[change]:
        _cities_csv(tmp_path / "rows.csv", cities)
        _schema(tmp_path / "schema.pbtxt", domain)
        result = run(config, overwrite=True)
        # ids 0..n-1 for the n cities written, then the one OOV bucket
        assert _city_domain(result) == (0, _written_cities(tmp_path, domain)), (cities, domain)
