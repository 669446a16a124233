"""`predict(export_dir, inputs, output_dir)`: batch prediction over raw data with Beam's RunInference, the
stage `pipelines/score/batch_prediction.py` (whose docstring says how rows are read, batched, scored and written).
"""

from __future__ import annotations

from dataclasses import dataclass

from skewless.pipelines.score.batch_prediction import score


@dataclass
class PredictResult:
    output_dir: str
    export_dir: str
    rows: dict
    outputs: list[str]
    seconds: dict

    def summary(self) -> str:
        return (
            f"{self.output_dir}: predicted {self.rows['written']:,} of {self.rows['read']:,} rows with "
            f"{self.export_dir} ({', '.join(self.outputs)}), quarantined {self.rows['quarantined']:,}; "
            f"{self.seconds['total']:.1f} s"
        )


def predict(
    export_dir: str,
    inputs: list[str],
    output_dir: str,
    output_format: str = "csv",
    keys: list[str] | tuple = (),
    input_format: str | None = None,
    columns: list[str] | None = None,
    overwrite: bool = False,
    beam_args: list[str] | None = None,
    process_started: float | None = None,
) -> PredictResult:
    """Runs the export's `serving_default` on every row of `inputs`; writes one row per input row to `output_dir`.

    Each output row holds the `keys` columns of its input row, then the signature's outputs. The input
    format comes from the file names unless `input_format` (csv, parquet, tfrecord) says it; a CSV's first
    line names its columns unless `columns` does. Rows that do not parse for the export's raw spec go to
    `output_dir`/quarantine/ with their reason. An existing `output_dir` is replaced only with `overwrite`.

    Examples:
        An export of a run of configs/example.yaml (see `skewless.layers.export_serving_model`) scores a CSV file:

        >>> import csv
        >>> import keras
        >>> import tensorflow as tf
        >>> from skewless.layers import export_serving_model, model_inputs, read_spec_file, serialize_raw_examples
        >>> from skewless.pipelines.commands.predict import predict
        >>> inputs, encoded = model_inputs("out/example")
        >>> model = keras.Model(inputs, keras.layers.Dense(1, activation="sigmoid")(encoded))
        >>> _ = export_serving_model("out/example", model, "export/1")
        >>> _ = open("new.csv", "w").write(
        ...     "id,age,workclass,education,occupation,hours_per_week,fnlwgt,capital_gain,native_country\\n"
        ...     "a,25,Private,HS-grad,Sales,40,150000,0,Cuba\\n"
        ...     "b,61,Astronaut,Masters,,60,90000,,Atlantis\\n")
        >>> result = predict("export/1", ["new.csv"], "out/scored", keys=["id"])
        >>> result.rows, result.outputs
        ({'read': 2, 'written': 2, 'quarantined': 0}, ['output_0'])
        >>> [path] = tf.io.gfile.glob("out/scored/predictions-*")
        >>> scored = {line["id"]: float(line["output_0"]) for line in csv.DictReader(open(path))}

        The scores the export's ``serving_default`` gives the same rows:

        >>> rows = list(csv.DictReader(open("new.csv")))
        >>> for row in rows:   # the CSV's empty fields are missing values
        ...     for name, value in list(row.items()):
        ...         row[name] = None if value == "" else int(value) if name in ("age", "hours_per_week") else (
        ...             float(value) if name in ("fnlwgt", "capital_gain") else value)
        >>> examples = tf.constant(serialize_raw_examples(rows, read_spec_file("export/1")["raw"]))
        >>> served = tf.saved_model.load("export/1").signatures["serving_default"](examples=examples)["output_0"]
        >>> bool(abs(served.numpy()[:, 0] - [scored["a"], scored["b"]]).max() < 1e-6)
        True
    """
    output_dir, summary = score(export_dir, inputs, output_dir, output_format, keys, input_format, columns, overwrite,
                                beam_args, process_started)
    return PredictResult(output_dir, summary.predicted["export"], summary.rows, list(summary.predicted["outputs"]),
                         summary.seconds)
