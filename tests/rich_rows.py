"""Helpers of the rich-feature tests: a run's rows as written (shards) and as served (TransformLayer), by row id.

Both sides give plain Python values per row: scalars, lists for var-len features (so a length
difference is a difference), nested lists for fixed-shape ones. Floats stay float32, so equal means
bit-identical.
"""

from __future__ import annotations

import json
import os

import numpy as np
import tensorflow as tf


def written_rows(run_dir, key: str = "id") -> dict[str, list]:
    """Every row of every split of a run, read with make_dataset, ordered by the `key` feature."""
    from skewless.pipelines.tfdata.dataset import make_dataset

    with open(os.path.join(run_dir, "run.json")) as handle:
        splits = [split for split, rows in json.load(handle)["rows"]["written"].items() if rows]
    columns: dict[str, list] = {}
    for split in splits:
        for batch in make_dataset(run_dir, split, batch_size=128, label=None, shuffle_buffer=0):
            for name, value in batch.items():
                columns.setdefault(name, []).extend(python_rows(value))
    order = np.argsort(columns[key], kind="stable")
    return {name: [values[i] for i in order] for name, values in columns.items()}


def assert_bit_equal(written: dict[str, list], stock: dict[str, list], names) -> None:
    """The columns `names` of two runs' rows (by feature) are the same values of the same dtype, bit for bit."""
    for name in names:
        ours, theirs = np.asarray(written[name]), np.asarray(stock[name])
        assert ours.dtype == theirs.dtype, name
        np.testing.assert_array_equal(ours, theirs, err_msg=name)


def served_rows(layer, rows: list[dict]) -> dict[str, list]:
    """Raw rows (dicts, None = missing) through serialized tf.train.Examples, parse_example and the layer."""
    from skewless.layers import serialize_raw_examples

    spec = {name: s for name, s in layer.raw_feature_spec.items() if name != layer.label}
    examples = tf.constant(serialize_raw_examples(rows, spec), tf.string)
    outputs = layer(tf.io.parse_example(examples, spec))
    return {name: python_rows(value) for name, value in outputs.items()}


def python_rows(value) -> list:
    if isinstance(value, tf.SparseTensor):
        value = tf.RaggedTensor.from_sparse(value)
    if isinstance(value, tf.RaggedTensor):
        return value.to_list()
    return np.asarray(value).tolist()


def write_csv(path, raw: dict[str, list]) -> None:
    """Columns of Python values -> a CSV with a header; None is an empty field (a missing value)."""
    rows = len(next(iter(raw.values())))
    lines = [",".join(raw)] + [
        ",".join("" if raw[name][i] is None else str(raw[name][i]) for name in raw) for i in range(rows)
    ]
    path.write_text("\n".join(lines) + "\n")


def with_gaps(rng, values: list, fraction: float) -> list:
    """`values` with about `fraction` of them replaced by None (missing), chosen by `rng`."""
    return [None if gap else value for value, gap in zip(values, rng.random(len(values)) < fraction)]


def columns_with_gaps(rng, rows: int) -> dict[str, list]:
    """An `id` and eight columns of every kind with and without missing values, drawn from `rng` in this order:
    floats (`x`, `m`), ints and floats with one most frequent value (`k`: 2, `f`: 2.25), strings (`c`: "b", `d`),
    and two float columns without gaps (`s`, `r`)."""
    return {
        "id": list(range(rows)),
        "x": with_gaps(rng, rng.normal(10, 3, rows).round(3).tolist(), 0.15),
        "m": with_gaps(rng, rng.uniform(0, 100, rows).round(2).tolist(), 0.1),
        "k": with_gaps(rng, rng.choice([0, 1, 2, 3], rows, p=[0.2, 0.2, 0.4, 0.2]).tolist(), 0.1),
        "f": with_gaps(rng, rng.choice([1.5, 2.25, 3.125], rows, p=[0.25, 0.5, 0.25]).tolist(), 0.1),
        "c": with_gaps(rng, rng.choice(["a", "b", "c"], rows, p=[0.3, 0.45, 0.25]).tolist(), 0.1),
        "d": with_gaps(rng, rng.choice(["p", "q"], rows).tolist(), 0.2),
        "s": rng.lognormal(1, 1.2, rows).round(3).tolist(),
        "r": rng.normal(0, 5, rows).round(3).tolist(),
    }
