"""Issue 41, items 13-15: what only a Python process that lives on shows (a notebook, a server).

13: a rerun in the same process after the input or the schema file changed writes what a fresh process writes;
14: two threads calling run() at once each get the run a sequential call gives;
15: serving_default on an empty request returns empty outputs.
"""

import threading

import keras
import numpy as np
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
