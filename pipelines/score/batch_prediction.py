"""Batch prediction over raw data with Beam's RunInference: `skewless predict`'s stage (`score`).

    raw input ──RowReader (typed by the export's raw spec, read by the run's value rules; the job's row checks)
              ──> good rows, bad rows
    good rows ──serialize_raw_examples, in batches of MODEL_BATCH──> ((unit, position, key values), Examples)
              ──RunInference (the export's serving_default, keys passed around the model)──> outputs
    per work unit ──> predictions-UUUUU-of-NNNNN.{csv,parquet,jsonl} in input order, quarantine/, run.json

Each RunInference element is a whole batch, cut by the reader's chunks and MODEL_BATCH, not by
Beam's BatchElements, whose batches follow bundle boundaries: TensorFlow's kernels round the last bit
of a float differently for different batch sizes (a batch of one takes a matrix-vector kernel), so
batches Beam sized would make the predictions differ by runner and run. Fixed batches make them the same
everywhere, and equal to `serving_default` called on the same batches.

The model sees exactly what TF Serving's `serving_default` sees: the same raw Examples, built by the
same helper the export's clients use, so a prediction here equals the served one for the same row.
Column types come from the export's raw spec (assets.extra/skewless_features.json), not from the new
data: a value that does not parse as its feature's type goes to quarantine with its reason, as in the
job. Values are read by the run's rules, which the export records beside the spec (its "reading"): the NA
tokens, the list columns and their delimiter, ``nonfinite``, and for CSV input of a CSV run its delimiter,
``skip_initial_space`` and ``multiline``; so a row predicted here is the row `skewless apply` reads. The
output is staged and published whole, as a run is (pipelines/output/staging.py).
"""

from __future__ import annotations

import dataclasses
import os
import resource
import time

import apache_beam as beam
import tensorflow as tf
from apache_beam.ml.inference import base as inference_base
from apache_beam.ml.inference.base import KeyedModelHandler, PredictionResult, RunInference
from apache_beam.ml.inference.tensorflow_inference import ModelType, TFModelHandlerTensor
from apache_beam.options.pipeline_options import PipelineOptions

from skewless.config import FeatureConfig
from skewless.errors import ConfigError, InputError
from skewless.input_formats import SYNTAX_OPTIONS, VALUE_OPTIONS, reader_of
from skewless.output_formats import PREDICTION_FORMATS
from skewless.layers.export import read_spec_file, serialize_raw_examples
from skewless.pipelines.output import files
from skewless.pipelines.reading import sources
from skewless.pipelines.runner import runners
from skewless.pipelines.assemble.summary import package_versions, run_seconds
from skewless.pipelines.reading.columns import RawColumn, column_of_spec
from skewless.pipelines.plan.plan import estimated_output_bytes, input_sizes, plan_units
from skewless.pipelines.plan.shard_count import auto_shard_count
from skewless.pipelines.write.prediction_files import OutputColumn, encode_shard
from skewless.pipelines.plan.raw_types import infer_types
from skewless.pipelines.reading import input_config as make_input_config
from skewless.pipelines.reading.files import expand_paths
from skewless.pipelines.reading.sources import RowReader
from skewless.pipelines.output.staging import StagedOutput
from skewless.pipelines.write.transform import write_quarantine
from skewless.pipelines.write.unit_summary import PredictionUnitSummary, read_unit_summary, write_unit_summary
from skewless.run_directory import RunDirectory, predictions_name
from skewless.run_summary import PredictionSummary

SIGNATURE = "serving_default"
# rows per model call; a reader's chunk ends a batch too
MODEL_BATCH = 1024
# the reading step's two outputs: batches of good rows, and bad rows for quarantine
EXAMPLES = "examples"
BAD = "bad"
_KINDS = {"int64": "int", "float32": "float", "string": "bytes"}

# Beam 2.77 imports `resource` in one try block with its torch-only ModelManager, so without torch it sets
# `resource` to None and logs "Resource module is not available for current platform" each time RunInference
# measures a model's memory (twice a run). The module is there on Linux: give it back.
if inference_base.resource is None:
    inference_base.resource = resource


def score(
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
) -> tuple[str, PredictionSummary]:
    """`skewless predict`'s work (`commands.predict.predict` says what each argument does): every row of `inputs`
    through the export's `serving_default`, staged and published at `output_dir`; returns where (absolute on a
    local disk) and its run.json."""
    started = time.time()
    if output_format not in PREDICTION_FORMATS:
        raise ConfigError(f"format {output_format!r}: not one of {', '.join(PREDICTION_FORMATS)}")
    if files.is_local(export_dir):
        export_dir = os.path.abspath(export_dir)
    if files.is_local(output_dir):
        output_dir = os.path.abspath(output_dir)
    raw_spec, outputs = export_signature(export_dir)
    reading = read_spec_file(export_dir)["reading"] or {}
    inputs = [path if "://" in path else os.path.abspath(path) for path in inputs]
    input_config = with_run_reading(make_input_config(inputs, input_format, header=not columns, columns=columns),
                                    reading)
    paths = expand_paths(input_config.paths)
    input_config = reader_of(input_config.format).resolved(input_config, paths)
    raw_columns = feature_columns(raw_spec, reading.get("lists", ()))
    # one sample of the input finds the features' columns and types the key columns
    kinds = infer_types(input_config, paths, [column.name for column in raw_columns if column.is_list],
                        wanted={column.name for column in raw_columns} | set(keys))
    _check_feature_columns(kinds, paths, raw_columns)
    key_columns = _key_columns(list(keys), raw_columns, kinds, paths, outputs)
    units = _units(input_config, paths)
    read_columns = raw_columns + [column for column in key_columns if column.name not in raw_spec]
    # what the run's transforms refuse of raw values (a datetime's parse) is quarantined, as the job quarantines it
    features = {name: FeatureConfig.model_validate(options) for name, options in (reading.get("features") or {}).items()}
    checks = sources.transform_checks(features, read_columns)
    output = StagedOutput(output_dir, overwrite, beam_args or [], "predictions", [export_dir], inputs)
    with output.staging() as staging:
        _run_pipeline(export_dir, input_config, read_columns, key_columns, outputs, units, output_format, staging,
                      beam_args or [], checks)
        pipeline_seconds = time.time() - started
        run = RunDirectory(staging)
        parts = [read_unit_summary(run.unit_summary_file(unit.index), PredictionUnitSummary) for unit in units]
        files.remove_tree(run.parts_dir)
        written = sum(part.written for part in parts)
        quarantined = sum(part.quarantined for part in parts)
        summary = PredictionSummary(**{
            "predicted": {"export": export_dir, "signature": SIGNATURE,
                          "outputs": {o.name: {"dtype": o.dtype, "values_per_row": o.width or 1} for o in outputs}},
            "input": {"format": input_config.format, "paths": inputs},
            "keys": [column.name for column in key_columns],
            "format": output_format,
            "files": [part.file for part in parts],
            "rows": {"read": written + quarantined, "written": written, "quarantined": quarantined},
            "seconds": run_seconds(started, pipeline_seconds, process_started),
            "versions": package_versions(),
        })
        files.write_bytes(RunDirectory(staging).summary_file, summary.to_json())
    return output_dir, summary




def export_signature(export_dir: str) -> tuple[dict, list[OutputColumn]]:
    """The export's raw feature spec and `serving_default`'s outputs; InputError when it is no skewless export."""
    raw_spec = read_spec_file(export_dir)["raw"]
    try:
        signature = tf.saved_model.load(export_dir).signatures[SIGNATURE]
    except (OSError, KeyError, ValueError) as error:
        raise InputError(f"{export_dir}: cannot load its {SIGNATURE} signature ({str(error).splitlines()[0]})") from None
    outputs = [OutputColumn(name, "bytes" if spec.dtype == tf.string else spec.dtype.as_numpy_dtype.__name__,
                            _width(spec.shape))
               for name, spec in sorted(signature.structured_outputs.items())]
    return raw_spec, outputs


def _width(shape) -> int:
    """Values per row of an output of `shape` (batch first): 0 for one scalar a row."""
    per_row = shape[1:]
    if per_row.rank == 0 or (per_row.rank == 1 and per_row[0] == 1):
        return 0
    if not per_row.is_fully_defined():
        raise InputError(f"{SIGNATURE} output of shape {shape}: only outputs of a fixed size per row are written")
    return per_row.num_elements()


def with_run_reading(input_config, reading: dict):
    """`input_config` with the run's value rules (`reading`, the export's record of them): those every format
    shares, and its syntax (CSV's delimiter, ...) too when the new data has the run's format (as `skewless apply`
    keeps them)."""
    same_format = input_config.format == reading.get("format")
    keys = [*VALUE_OPTIONS, *(SYNTAX_OPTIONS if same_format else ())]
    taken = type(input_config).model_fields  # a run's config.yaml lists every format's keys
    return input_config.model_copy(update={key: reading[key] for key in keys if key in reading and key in taken})


def feature_columns(raw_spec: dict, lists=()) -> list[RawColumn]:
    """The raw columns the export takes: required where its spec is FixedLen (a fixed shape: exactly its values),
    optional where VarLen, a list of values where the run's config made it one (`lists`)."""
    columns = []
    for name, spec in raw_spec.items():
        if not isinstance(spec, (tf.io.FixedLenFeature, tf.io.VarLenFeature)) or spec.dtype.name not in _KINDS:
            raise InputError(f"raw feature {name!r} ({type(spec).__name__}): predict reads one value or a fixed "
                             "shape per feature and row; feature-list features are not supported")
        column = column_of_spec(name, spec)
        columns.append(dataclasses.replace(column, is_list=True) if name in lists else column)
    return columns


def _check_feature_columns(names: dict[str, str], paths: list[str], raw_columns: list[RawColumn]) -> None:
    """Refuses new data holding no column of a raw feature (`names`: the input's columns), as `skewless apply` and
    the job refuse it, rather than scoring every row as if it lacked the value (a JSON Lines file, whose rows may
    leave a key out, would be scored so; CSV and Parquet readers refuse it on a worker)."""
    for column in raw_columns:
        if column.name not in names:
            raise InputError(f"raw feature {column.name!r}: no column {column.name!r} in {paths[0]} "
                             f"(columns: {', '.join(names)})")


def _key_columns(keys: list[str], raw_columns: list[RawColumn], kinds: dict[str, str], paths: list[str],
                 outputs: list[OutputColumn]) -> list[RawColumn]:
    """The key columns, typed as the export types them, or as the input's values suggest (`kinds`) if the model
    does not take them; a missing key value is written empty, not quarantined."""
    taken = {output.name for output in outputs}
    clash = [key for key in keys if key in taken]
    if clash:
        raise ConfigError(f"--keys {clash[0]}: the model has an output of that name; rename the column or the output")
    features = {column.name: column for column in raw_columns}
    others = [key for key in keys if key not in features]
    absent = [key for key in others if key not in kinds]
    if absent:
        raise InputError(f"--keys {absent[0]}: no such column in {paths[0]}")
    return [features[key] if key in features else RawColumn(key, kinds[key], optional=True) for key in keys]


def _units(input_config, paths: list[str]) -> list:
    sizes = input_sizes(input_config, paths)
    count = auto_shard_count(estimated_output_bytes(input_config, sizes))
    return plan_units(input_config, paths, sizes, count)


def _run_pipeline(export_dir, input_config, read_columns, key_columns, outputs, units, output_format, staging,
                  beam_args, checks: dict) -> None:
    reader = RowReader(input_config, read_columns)
    reader.value_checks = checks
    model = KeyedModelHandler(ExportHandler(export_dir))
    keys = [(column.name, column.kind) for column in key_columns]
    try:
        options = PipelineOptions(flags=beam_args)
    except Exception as error:
        raise ConfigError(f"runner options: {error}") from None
    with runners.pipeline(options) as pipeline:
        read = (
            pipeline
            | "PlanUnits" >> beam.Create(units, reshuffle=True)
            | "ReadRows" >> beam.ParDo(ExamplesFn(reader, export_dir, [name for name, _ in keys])).with_outputs(
                BAD, main=EXAMPLES)
        )
        predicted = (
            read[EXAMPLES]
            | "RunInference" >> RunInference(model)
            | "ByUnit" >> beam.FlatMap(rows_of_batch)
        )
        every_unit = pipeline | "Units" >> beam.Create([(unit.index, None) for unit in units])
        _ = (
            {"unit": every_unit, EXAMPLES: predicted, BAD: read[BAD]}
            | "JoinUnits" >> beam.CoGroupByKey()
            | "WriteUnits" >> beam.ParDo(WriteUnitFn(staging, len(units), keys, outputs, output_format))
            | "WriteParts" >> beam.Map(
                lambda part, d=staging: write_unit_summary(part, RunDirectory(d).unit_summary_file(part.unit)))
        )


def serving_default(model, elements, inference_args, model_id=None):
    """RunInference's call of the model: `serving_default` on each element, a batch of serialized raw Examples."""
    results = []
    for examples in elements:
        outputs = model.signatures[SIGNATURE](examples=tf.constant(examples, tf.string), **inference_args)
        results.append(PredictionResult(examples, {name: tensor.numpy() for name, tensor in outputs.items()}, model_id))
    return results


def rows_of_batch(keyed) -> list:
    """One predicted batch as (unit, (position, key values, {output: value})) per row."""
    (unit, first, key_values), result = keyed
    return [(unit, (first + row, values, {name: array[row] for name, array in result.inference.items()}))
            for row, values in enumerate(key_values)]


class ExportHandler(TFModelHandlerTensor):
    """Beam's TensorFlow model handler on a serving export, calling `serving_default`.

    Its own loader goes through `tf.keras.models.load_model`, which Keras 3 refuses for a SavedModel;
    the export needs TensorFlow alone to load (`tf.saved_model.load`), as TF Serving loads it.
    """

    def __init__(self, export_dir: str):
        # one element is one batch already (see the module's docstring): RunInference must not batch them
        super().__init__(export_dir, model_type=ModelType.SAVED_MODEL, inference_fn=serving_default,
                         min_batch_size=1, max_batch_size=1)
        self._export_dir = export_dir

    def load_model(self):
        return tf.saved_model.load(self._export_dir)


class ExamplesFn(beam.DoFn):
    """Reads one work unit: its good rows in batches of up to MODEL_BATCH as ((unit, position of the first,
    each row's key values), serialized raw Examples), its bad rows (tagged BAD) as (unit, (position, BadRow JSON))."""

    def __init__(self, reader, export_dir: str, keys: list[str]):
        self._reader = reader
        self._export_dir = export_dir
        self._keys = keys
        self._raw_spec = None

    def setup(self):
        self._raw_spec = read_spec_file(self._export_dir)["raw"]  # specs hold tf.DTypes: read here, not pickled

    def process(self, unit):
        position = 0
        for chunk in self._reader.read(unit):
            for bad in chunk.bad:
                yield beam.pvalue.TaggedOutput(BAD, (unit.index, (position, bad.to_json())))
                position += 1
            for start in range(0, chunk.table.num_rows, MODEL_BATCH):
                rows = chunk.table.slice(start, MODEL_BATCH).to_pylist()
                key_values = tuple(tuple(row[key] for key in self._keys) for row in rows)
                yield (unit.index, position, key_values), serialize_raw_examples(rows, self._raw_spec)
                position += len(rows)


class WriteUnitFn(beam.DoFn):
    """Writes one unit's predictions in input order as one shard, and its bad rows to quarantine/."""

    def __init__(self, staging: str, unit_count: int, keys: list, outputs: list[OutputColumn], output_format: str):
        self._staging = staging
        self._unit_count = unit_count
        self._keys = keys
        self._outputs = outputs
        self._format = output_format

    def process(self, element):
        index, grouped = element
        rows = [(key_values, outputs) for _, key_values, outputs in sorted(grouped[EXAMPLES], key=lambda r: r[0])]
        name = predictions_name(index, self._unit_count, PREDICTION_FORMATS[self._format])
        files.write_bytes(os.path.join(self._staging, name), encode_shard(rows, self._keys, self._outputs, self._format))
        bad = [row for _, row in sorted(grouped[BAD], key=lambda r: r[0])]
        if bad:
            write_quarantine(self._staging, index, self._unit_count, bad)
        yield PredictionUnitSummary(unit=index, file=name, written=len(rows), quarantined=len(bad))
