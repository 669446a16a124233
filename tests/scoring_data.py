"""Support for the `skewless predict` tests: an export of a small model, and raw rows to score as a CSV."""

import csv

# the synthetic columns a scoring CSV holds, label left out: scoring data has none
FEATURES = ["age", "workclass", "fnlwgt", "education", "occupation", "hours_per_week", "capital_gain", "native_country"]


def small_export(run_dir, export_dir) -> str:
    """An export of a model on the run's transformed features, with a two-value output and a one-value one."""
    import keras

    from skewless.layers import export_serving_model

    keras.utils.set_random_seed(21)
    inputs = {"age": keras.Input((1,), name="age"), "workclass": keras.Input((1,), dtype="int64", name="workclass"),
              "capital_gain": keras.Input((1,), name="capital_gain")}
    embedded = keras.layers.Flatten()(keras.layers.Embedding(20, 3)(inputs["workclass"]))
    hidden = keras.layers.Dense(8, activation="relu")(
        keras.layers.Concatenate()([inputs["age"], inputs["capital_gain"], embedded]))
    model = keras.Model(inputs, {"probs": keras.layers.Dense(2, activation="softmax")(hidden),
                                 "score": keras.layers.Dense(1)(hidden)})
    return str(export_serving_model(run_dir, model, export_dir))


def write_scoring_csv(path, rows: int, seed: int = 5) -> list[dict]:
    """`rows` synthetic raw rows (missing values included) keyed by an `id` column, then one row whose age
    is not an int (id "bad-row"), written to `path` with a header; returns the good rows as dicts."""
    from skewless.pipelines.reading.synthetic_rows import synthetic_rows

    generated = [row for _, table in synthetic_rows(seed, 0, rows) for row in table.to_pylist()]
    good = [{"id": f"row-{i}", **{name: row[name] for name in FEATURES}} for i, row in enumerate(generated)]
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", *FEATURES])
        for row in good:
            writer.writerow([_text(row[name]) for name in ["id", *FEATURES]])
        writer.writerow(["bad-row", "forty", *[_text(good[0][name]) for name in FEATURES[1:]]])
    return good


def _text(value) -> str:
    return "" if value is None else value.decode() if isinstance(value, bytes) else str(value)
