"""`skewless verify`: the proof that training and serving do not skew.

N raw rows of the run's input (plus copies with unseen categories, which must land in the OOV buckets
the same way) are transformed twice:

- the batch path: a Beam pipeline running the job's own `ChunkTransformer` (tf.Transform graph,
  the job's encoder) into serialized tf.train.Examples (or SequenceExamples), parsed as `make_dataset` parses them;
- the serving path: the rows serialized as raw tf.train.Examples (SequenceExamples for a run of
  them) through `TransformLayer`, or through an export's `transform_features` signature.

Integers and strings must be equal and floats bit-identical: it is the same graph.
"""

from __future__ import annotations

import math
import os
import tempfile
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from skewless.errors import InputError

UNSEEN_PREFIX = "skewless-unseen-"


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
    features: list[FeatureCheck]
    native: object = None  # skewless.layers.PreprocessorCheck: the native Keras layers against the graph

    @property
    def differences(self) -> int:
        native = sum(f.differences for f in self.native.features if f.status == "different") if self.native else 0
        return sum(f.differences for f in self.features) + native


def verify(run_dir: str, sample: int = 1000, export_dir: str | None = None, native: bool = True) -> VerifyResult:
    """Compares the batch and serving transforms of `sample` raw rows of the run (plus unseen-category rows).

    With `native`, the run's native Keras preprocessor (`skewless.layers.keras_preprocessor`) is checked
    against the graph on the same rows too; features it cannot reproduce are reported, not counted.
    """
    from skewless.config import load_config
    from skewless.pipelines.job import plan

    config_path = os.path.join(run_dir, "config.yaml")
    if not os.path.exists(config_path):
        raise InputError(f"{run_dir}: not a run directory (no config.yaml)")
    config = load_config(config_path)
    job_plan = plan(config)
    table = sample_rows(config, job_plan, sample)
    if table.num_rows == 0:
        raise InputError(f"{run_dir}: the run's input gave no valid rows to sample")
    categorical = [c.name for c in job_plan.columns
                   if c.kind == "bytes" and c.name in config.features and config.features[c.name].transform != "image"]
    unseen = _with_unseen_categories(table, categorical)
    table = pa.concat_tables([table, unseen])
    graph_dir = os.path.join(run_dir, "transform_graph")
    batch = _batch_path(run_dir, job_plan.columns, table, config.output.format)
    served = _serving_path(graph_dir, export_dir, table)
    checks = [_compare(name, batch[name], served[name]) for name in sorted(batch) if name in served]
    # an export serves requests without the label, so it leaves the label's own output out by design
    label = config.label.column if config.label else None
    missing = sorted(set(batch) - set(served) - ({label} if export_dir else set()))
    checks += [FeatureCheck(name, str(batch[name].dtype), len(batch[name]), len(batch[name]), None) for name in missing]
    result = VerifyResult(export_dir or "TransformLayer", table.num_rows - unseen.num_rows, unseen.num_rows, checks)
    if native:
        from skewless.layers import check_preprocessor

        result.native = check_preprocessor(run_dir, rows=table.to_pylist(), sample=200)
    return result


def sample_rows(config, job_plan, sample: int) -> pa.Table:
    """Valid rows (as the job judges them) spread over the work units: an equal share from the start of each."""
    from skewless.pipelines.sources import RowReader

    reader = RowReader.for_job(config, job_plan.input_config, job_plan.columns)
    share = math.ceil(sample / len(job_plan.units))
    tables = []
    for unit in job_plan.units:
        taken = 0
        for chunk in reader.read(unit):
            tables.append(chunk.table.slice(0, share - taken))
            taken += tables[-1].num_rows
            if taken >= share:
                break
    return pa.concat_tables(tables).slice(0, sample)


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
    import apache_beam as beam
    import tensorflow as tf
    import tensorflow_transform as tft
    from apache_beam.options.pipeline_options import PipelineOptions

    from skewless.layers.export import padded
    from skewless.pipelines import runners
    from skewless.pipelines.dataset import record_parser
    from skewless.pipelines.transform import ChunkTransformer, tensors_to_record_batch

    graph_dir = os.path.join(run_dir, "transform_graph")

    class TransformSampleFn(beam.DoFn):
        def process(self, sample_table):
            transformer = ChunkTransformer(graph_dir, columns, output_format)
            yield from transformer.encode(tensors_to_record_batch(transformer.transform(sample_table))).to_list()

    with tempfile.TemporaryDirectory() as folder:
        prefix = os.path.join(folder, "batch")
        with runners.pipeline(PipelineOptions()) as pipeline:
            _ = (
                pipeline
                | beam.Create([table])
                | beam.ParDo(TransformSampleFn())
                | beam.io.WriteToTFRecord(prefix, shard_name_template="")
            )
        spec = tft.TFTransformOutput(graph_dir).transformed_feature_spec()
        records = list(tf.data.TFRecordDataset(prefix).batch(1 << 20).take(1))[0]
        parsed = record_parser(run_dir, spec)(records)
        # var-len features zero-padded (feature lists: their steps and values), as the serving path gives them
        return {name: padded(value).numpy() for name, value in parsed.items()}


def _serving_path(graph_dir: str, export_dir: str | None, table: pa.Table) -> dict[str, np.ndarray]:
    from skewless.layers import transform_raw_rows, transform_raw_rows_exported

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
        gap = float(np.max(np.abs(batch.astype(np.float64) - served.astype(np.float64)))) if len(batch) else 0.0
    else:
        different = batch != served
        gap = None
    differences = int(np.count_nonzero(different.reshape(len(batch), -1).any(axis=1)))
    return FeatureCheck(name, str(batch.dtype), len(batch), differences, gap)


def print_result(result: VerifyResult, console=None) -> None:
    from rich.console import Console
    from rich.table import Table

    console = console or Console()
    table = Table(title=f"skew check: batch (Beam + tf.Transform) vs serving ({result.path})")
    for column in ("feature", "dtype", "rows", "differences", "max |diff|"):
        table.add_column(column, justify="left" if column in ("feature", "dtype") else "right")
    for check in result.features:
        gap = "" if check.max_abs_difference is None else f"{check.max_abs_difference:.3g}"
        style = "red" if check.differences else None
        table.add_row(check.name, check.dtype, str(check.rows), str(check.differences), gap, style=style)
    console.print(table)
    if result.native is not None:
        native = Table(title=f"native Keras preprocessor ({result.native.backend} backend) vs the graph")
        for column in ("feature", "transform", "status", "differences", "reason"):
            native.add_column(column, justify="right" if column == "differences" else "left")
        for check in result.native.features:
            style = "red" if check.status == "different" else "dim" if check.status == "unsupported" else None
            native.add_row(check.name, check.transform, check.status, str(check.differences), check.reason or "",
                           style=style)
        console.print(native)
    verdict = "no differences" if not result.differences else f"{result.differences} differences"
    console.print(f"{result.rows} sampled rows + {result.unseen_rows} with unseen categories: {verdict}")
