"""`skewless verify`: the proof that training and serving do not skew.

N raw rows of the run's input (plus copies with unseen categories, which must land in the OOV buckets
the same way) are transformed twice:

- the batch path: a Beam pipeline running the job's own `ChunkTransformer` (tf.Transform graph,
  the job's encoder) into serialized tf.train.Examples (or SequenceExamples), parsed as `make_dataset` parses them;
- the serving path: the rows serialized as raw tf.train.Examples (SequenceExamples for a run of
  them) through `TransformLayer`, or through an export's `transform_features` signature.

Copies of sampled rows with their optional columns missing are compared the same way, and through
predict_raw's rule (NaN for a missing float). Every row is real or derived from a real one: a
user's preprocessing_fn never sees made-up values. A check that cannot run is reported, not raised.

Integers and strings must be equal and floats bit-identical: it is the same graph.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field

import apache_beam as beam
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import tensorflow as tf
import tensorflow_transform as tft
from apache_beam.options.pipeline_options import PipelineOptions

from skewless.config import load_config
from skewless.errors import ConfigError, InputError
from skewless.layers import (
    check_preprocessor,
    transform_raw_rows,
    transform_raw_rows_dense,
    transform_raw_rows_exported,
)
from skewless.layers.export import padded
from skewless.pipelines.commands.verify_source import SourceCheck, check_source_rows, one_line_reason
from skewless.pipelines.output import object_store
from skewless.pipelines.plan.plan import plan, sample_rows
from skewless.pipelines.runner import runners
from skewless.pipelines.tfdata.dataset import record_parser
from skewless.pipelines.write.transform import TransformTablesFn
from skewless.run_directory import CONFIG_FILE, RunDirectory
from skewless.safe_names import missing_indicator_name

UNSEEN_PREFIX = "skewless-unseen-"
# copies of sampled rows with their optional columns missing (a check of the one missing-value rule)
MISSING_ROWS = 20
# the input's first rows read as the source holds them (verify_source.py)
SOURCE_ROWS = 300


@dataclass
class FeatureCheck:
    name: str
    dtype: str
    rows: int
    differences: int
    max_abs_difference: float | None


@dataclass
class VerifyResult:
    path: str  # "TransformLayer" or the export directory
    rows: int
    unseen_rows: int
    features: list[FeatureCheck]  # the sampled rows (and their unseen-category copies) through tf.Examples
    native: object = None  # skewless.layers.PreprocessorCheck: the native Keras layers against the graph
    # other comparisons by title: rows with missing values through tf.Examples and through predict_raw
    groups: dict[str, list[FeatureCheck]] = field(default_factory=dict)
    # the checks that could not run, by title: why
    unchecked: dict[str, str] = field(default_factory=dict)
    # the missing indicators among the outputs: indicator -> the feature whose absence it marks
    indicators: dict[str, str] = field(default_factory=dict)
    # the input's first rows as the source holds them: the shards against every serving path, row by row
    source: SourceCheck | None = None

    @property
    def differences(self) -> int:
        native = sum(f.differences for f in self.native.features if f.status == "different") if self.native else 0
        groups = sum(f.differences for checks in self.groups.values() for f in checks)
        source = sum(len(difference.rows) for difference in self.source.differences) if self.source else 0
        return sum(f.differences for f in self.features) + groups + native + source

    @property
    def exit_code(self) -> int:
        """0: every path equal; 1: differences found; 2: no difference found, but a check could not run."""
        return 1 if self.differences else 2 if self.unchecked else 0


def verify(run_dir: str, sample: int = 1000, export_dir: str | None = None, native: bool = True,
           source_rows: int = SOURCE_ROWS) -> VerifyResult:
    """Compares the batch and serving transforms of `sample` raw rows of the run (plus unseen-category rows).

    Every row is a real row of the input or derived from one: copies with unseen categories, and up to
    `MISSING_ROWS` copies with every optional column missing (served as tf.Examples without them, and
    through the predict_raw rule, NaN for a missing float). With `native`, the run's native Keras
    preprocessor (`skewless.layers.keras_preprocessor`) is checked against the graph on the same rows;
    features it cannot reproduce are reported, not counted. A check that fails to run is reported in
    `VerifyResult.unchecked`; the others still run.

    The input's first `source_rows` rows are also read as the source holds them (CSV text untrimmed, JSON
    booleans, NA tokens, lists, dates, out-of-range values) and compared row by row: the job's shards against
    the TransformLayer, predict_raw's rule, the export's transform_features and the native preprocessor (dense
    and sparse input); rows the job quarantined must be refused at serving (but for their label alone: serving
    takes none); with an export, a row's serving_default output alone must equal its output in the batch
    (`verify_source.check_source_rows`).

    Examples:
        After ``skewless run configs/example.yaml -o out/example``: the graph on 200 sampled rows (and their
        copies with unseen categories and missing values) in the batch job and at serving:

        >>> from skewless.pipelines.commands.verify import verify
        >>> result = verify("out/example", sample=200, native=False)
        >>> result.rows, result.differences, result.exit_code
        (200, 0, 0)
        >>> sorted(check.name for check in result.features)
        ['age', 'capital_gain', 'education', 'fnlwgt', 'hours_per_week', 'label', 'native_country', 'occupation', 'workclass']
        >>> all(check.rows == 200 + result.unseen_rows for check in result.features)
        True
    """
    run_dir = object_store.local_run(run_dir)
    run = RunDirectory.of(run_dir)
    if not os.path.exists(run.config_file):
        raise InputError(f"{run_dir}: not a run directory (no {CONFIG_FILE})")
    config = load_config(run.config_file)  # its paths are absolute: verify reads the run's input from any folder
    # a missing or damaged graph and an unreadable run.json are input errors (one line, exit 2), found before
    # the checks, each of which would otherwise report it as a check that could not run
    _check_graph(run)
    run.read_summary()
    job_plan = plan(config)
    table = sample_rows(config, job_plan, sample)
    if table.num_rows == 0:
        raise InputError(f"{run_dir}: the run's input gave no valid rows to sample")
    categorical = [c.name for c in job_plan.columns if c.kind == "bytes" and config.raw_feature(c.name) is not None
                   and not config.raw_feature(c.name).transform_kind.image]
    unseen = _with_unseen_categories(table, categorical)
    sampled = pa.concat_tables([table, unseen])
    graph_dir = run.graph_dir
    label = config.label.column if config.label else None
    optional = _optional_columns(graph_dir, label)
    # an export serves requests without the label, so it leaves the label's own output out by design
    left_out = {label} if export_dir else set()

    def batch(rows: pa.Table):
        return _batch_path(run_dir, job_plan.columns, rows, config.output.format)

    def examples(rows: pa.Table):
        return _serving_path(graph_dir, export_dir, rows)

    unchecked: dict[str, str] = {}
    features = _compare_paths("sampled rows", batch, examples, sampled, left_out, unchecked) or []
    indicators = {missing_indicator_name(name): name for name, feature in config.features.items()
                  if feature.missing_indicator}
    result = VerifyResult(export_dir or "TransformLayer", table.num_rows, unseen.num_rows, features,
                          unchecked=unchecked, indicators=indicators)
    missing = _with_missing(table, optional)
    if missing.num_rows:
        title = f"{missing.num_rows} rows with their optional columns missing, as tf.Examples"
        result.groups[title] = _compare_paths(title, batch, examples, missing, left_out, unchecked)
        floats = [c.name for c in job_plan.columns if c.name in optional and c.kind == "float"]
        dense = _without_missing(_with_missing(table, floats), set(optional) - set(floats))
        if dense.num_rows and not _has_lists(config):
            title = f"{dense.num_rows} rows with NaN for their optional floats, through predict_raw's rule"
            result.groups[title] = _compare_paths(title, batch, _dense_path(graph_dir), dense, {label}, unchecked)
    result.groups = {title: checks for title, checks in result.groups.items() if checks is not None}
    if source_rows:
        try:
            result.source = check_source_rows(run_dir, config, job_plan, source_rows, export_dir, native)
            unchecked.update({f"{path}, rows as the source holds them": why
                              for path, why in result.source.unchecked.items()})
        except ConfigError:
            pass  # an input with no source but a generator of its own (the synthetic set): nothing held to compare
        except Exception as error:  # noqa: BLE001 - any failure of a check is reported, not raised
            unchecked["rows as the source holds them"] = one_line_reason(error)
    if native:
        rows = pa.concat_tables([sampled, missing]).to_pylist()
        try:  # real rows only (sample=0): no synthetic probe a user's preprocessing_fn could reject
            result.native = check_preprocessor(run_dir, rows=rows, sample=0)
        except Exception as error:  # noqa: BLE001 - any failure of a check is reported, not raised
            unchecked["native Keras preprocessor"] = one_line_reason(error)
    return result


def _check_graph(run: RunDirectory) -> None:
    """InputError naming the graph when the run's transform graph is missing or does not load."""
    if not os.path.isdir(run.transform_fn_dir):
        raise InputError(f"{run.graph_dir}: the run's transform graph is missing (no transform_fn/ folder)")
    try:
        tf.saved_model.load(run.transform_fn_dir)
    except Exception as error:  # noqa: BLE001 - protobuf, OSError, TensorFlow's own: all say the graph is damaged
        raise InputError(f"{run.transform_fn_dir}: cannot load the run's transform graph ({one_line_reason(error)})") from None


def _compare_paths(title, batch, served, rows: pa.Table, left_out: set, unchecked: dict) -> list[FeatureCheck] | None:
    """The batch and a serving path on the same rows, compared feature by feature; None if one cannot run."""
    try:
        batch_out, served_out = batch(rows), served(rows)
    except Exception as error:  # noqa: BLE001 - e.g. a user preprocessing_fn rejecting these rows
        unchecked[title] = one_line_reason(error)
        return None
    checks = [_compare(name, batch_out[name], served_out[name]) for name in sorted(batch_out) if name in served_out]
    missing = sorted(set(batch_out) - set(served_out) - left_out)
    checks += [FeatureCheck(name, str(batch_out[name].dtype), len(batch_out[name]), len(batch_out[name]), None)
               for name in missing]
    return checks


def _optional_columns(graph_dir: str, label: str | None) -> list[str]:
    spec = tft.TFTransformOutput(graph_dir).raw_feature_spec()
    return [name for name, feature in spec.items() if isinstance(feature, tf.io.VarLenFeature) and name != label]


def _with_missing(table: pa.Table, columns: list[str]) -> pa.Table:
    """Copies of the first `MISSING_ROWS` rows with `columns` null (missing), if any of them is in the table."""
    columns = [name for name in columns if name in table.column_names]
    if not columns:
        return table.slice(0, 0)
    rows = table.slice(0, MISSING_ROWS)
    for name in columns:
        index = rows.schema.get_field_index(name)
        rows = rows.set_column(index, name, pa.nulls(rows.num_rows, rows.schema.field(name).type))
    return rows


def _without_missing(table: pa.Table, columns: set) -> pa.Table:
    """The rows with a value in each of `columns` (predict_raw has no missing int or string)."""
    keep = pa.array([True] * table.num_rows, pa.bool_())
    for name in columns & set(table.column_names):
        keep = pc.and_(keep, pc.is_valid(table[name]))
    return table.filter(keep)


def _has_lists(config) -> bool:
    """List and sequence features: predict_raw takes one value per row and feature, so it cannot serve them."""
    return any(feature.is_list or feature.sequence for feature in config.features.values())


def _dense_path(graph_dir: str):
    def transform(rows: pa.Table):
        return transform_raw_rows_dense(graph_dir, rows.to_pylist())

    return transform


def _with_unseen_categories(table: pa.Table, categorical: list[str]) -> pa.Table:
    rows = min(table.num_rows, 50)
    unseen = table.slice(0, rows)
    for name in categorical:
        values = pa.array([f"{UNSEEN_PREFIX}{name}-{i}".encode() for i in range(rows)], pa.binary())
        depth = _list_depth(unseen.schema.field(name).type)  # a list column: one unseen value per row,
        for _ in range(depth):                                 # a feature list: one step of one
            values = pa.ListArray.from_arrays(pa.array(range(rows + 1), pa.int32()), values)
        unseen = unseen.set_column(unseen.schema.get_field_index(name), name, values)
    return unseen


def _list_depth(arrow_type: pa.DataType) -> int:
    depth = 0
    while pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        arrow_type, depth = arrow_type.value_type, depth + 1
    return depth


def _batch_path(run_dir: str, columns, table: pa.Table, output_format: str) -> dict[str, np.ndarray]:
    graph_dir = RunDirectory.of(run_dir).graph_dir

    with tempfile.TemporaryDirectory() as folder:
        prefix = os.path.join(folder, "batch")
        # flags=[]: without it Beam parses the process's own command line (`skewless verify ...`) and warns
        with runners.pipeline(PipelineOptions(flags=[])) as pipeline:
            _ = (
                pipeline
                | beam.Create([table])
                | beam.ParDo(TransformTablesFn(graph_dir, columns, output_format))
                | beam.io.WriteToTFRecord(prefix, shard_name_template="")
            )
        spec = tft.TFTransformOutput(graph_dir).transformed_feature_spec()
        records = list(tf.data.TFRecordDataset(prefix).batch(1 << 20).take(1))[0]
        parsed = record_parser(run_dir, spec)(records)
        # var-len features zero-padded (feature lists: their steps and values), as the serving path gives them
        return {name: padded(value).numpy() for name, value in parsed.items()}


def _serving_path(graph_dir: str, export_dir: str | None, table: pa.Table) -> dict[str, np.ndarray]:
    rows = table.to_pylist()
    if export_dir is not None:
        return transform_raw_rows_exported(export_dir, rows)
    return transform_raw_rows(graph_dir, rows)


def _compare(name: str, batch: np.ndarray, served: np.ndarray) -> FeatureCheck:
    served = np.asarray(served).reshape(batch.shape) if np.asarray(served).size == batch.size else np.asarray(served)
    if served.shape != batch.shape:
        return FeatureCheck(name, str(batch.dtype), len(batch), len(batch), None)
    if batch.dtype.kind == "f":
        # bit-identical: compare the float32 bit patterns (NaN == NaN when the bits agree)
        left = batch.astype(np.float32).view(np.uint32)
        right = served.astype(np.float32).view(np.uint32)
        different = left != right
        # initial: a var-len feature missing in every row has no values at all (rows with missing values)
        gap = float(np.max(np.abs(batch.astype(np.float64) - served.astype(np.float64)), initial=0.0))
    else:
        different = batch != served
        gap = None
    differences = int(np.count_nonzero(different.reshape(len(batch), -1).any(axis=1)))
    return FeatureCheck(name, str(batch.dtype), len(batch), differences, gap)
