"""`skewless verify` on rows as the source holds them: the job's shards against every serving path, row by row.

The first rows of the run's input are read as the source holds them (`source_rows`: CSV text untrimmed, JSON
booleans, NA tokens, lists, dates, out-of-range values) and paired with what the job did with each (`job_verdicts`):

- a row the job wrote: its record in the run's shards (the job's batch output) must equal the row's raw values
  sent as a client sends them through the `TransformLayer` (a serving request), predict_raw's rule (one dense
  value per feature, NaN for a missing float), an export's ``transform_features`` (``--export``) and the native
  Keras preprocessor fed dense arrays (NaN, "" and NA tokens as a user's NumPy/pandas data holds them) and
  sparse tensors; serving must not refuse it;
- a row the job quarantined: serving must refuse it alone (an InvalidArgumentError), never transform it;
- with ``--export``: each row's ``serving_default`` output alone must equal its output in the batch.

Each difference names the path, the feature (or output) and the rows (file:line).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass, field

import numpy as np
import tensorflow as tf
import tensorflow_transform as tft

from skewless.input_formats import reader_of
from skewless.lazy_imports import lazy_import
from skewless.layers import (
    TransformLayer,
    keras_preprocessor,
    parse_raw_examples,
    raw_feature_batch,
    read_spec_file,
    serialize_raw_examples,
    transform_raw_rows_dense,
)
from skewless.pipelines.commands.source_rows import (
    AlignmentError,
    RefusedValue,
    Verdict,
    job_verdicts,
    request_row,
    source_rows,
)
from skewless.pipelines.reading.held_rows import HeldRow
from skewless.pipelines.reading.sources import BadRow
from skewless.pipelines.tfdata.dataset import record_parser
from skewless.run_directory import RunDirectory
from skewless.run_summary import RunSummary

# on first use: `skewless predict` (Beam's RunInference, tensorflow_hub) runs only when verify checks an --export
batch_prediction = lazy_import("skewless.pipelines.score.batch_prediction")

# quarantined rows served one by one (each a request of its own)
QUARANTINED_ROWS = 50
# rows named in a difference's line; the count says how many more
NAMED_ROWS = 5
_FEATURE_IN_ERROR = re.compile(r"(?:raw )?feature '([^']+)'")


@dataclass
class RowDifference:
    path: str  # the serving path compared with the shards
    feature: str  # a transformed feature, a raw one (a refused value), or an export's output
    rows: list[str]  # where, file:line
    detail: str  # the first row's two values, or why

    def line(self) -> str:
        shown = ", ".join(self.rows[:NAMED_ROWS]) + (f" (+{len(self.rows) - NAMED_ROWS} more)"
                                                     if len(self.rows) > NAMED_ROWS else "")
        return f"{self.path}: {self.feature}: {len(self.rows)} rows ({shown}): {self.detail}"


@dataclass
class SourceCheck:
    rows: int  # raw rows read
    written: int  # of them, rows the job wrote (compared with the shards)
    quarantined: int  # rows the job quarantined (served alone, must be refused)
    differences: list[RowDifference] = field(default_factory=list)
    unchecked: dict[str, str] = field(default_factory=dict)  # paths that could not run: why
    # the written rows compared: each as a client's request, where it is, and the shards' values by feature
    requests: list[dict] = field(default_factory=list)
    wheres: list[str] = field(default_factory=list)
    batch: dict[str, list] = field(default_factory=dict)


def check_source_rows(run_dir: str, config, job_plan, limit: int, export_dir: str | None = None,
                      native: bool = True) -> SourceCheck:
    """The shards against every serving path on the input's first `limit` rows as the source holds them."""
    rows = source_rows(job_plan, limit)
    verdicts = job_verdicts(config, job_plan, rows)
    layer = TransformLayer(run_dir)
    spec = {name: feature for name, feature in layer.raw_feature_spec.items() if name != layer.label}
    lists = {column.name for column in job_plan.columns if column.is_list}
    written = [(row, verdict) for row, verdict in zip(rows, verdicts) if verdict.outcome == "written"]
    quarantined = [(row, verdict) for row, verdict in zip(rows, verdicts) if verdict.outcome == "quarantined"]
    check = SourceCheck(len(rows), len(written), len(quarantined))
    requests, kept = [], []
    for row, verdict in written:
        try:
            requests.append(request_row(row, spec, lists, job_plan.input_config))
            kept.append((row, verdict))
        except RefusedValue as refused:
            feature, _, detail = str(refused).partition(": ")
            _add(check, "request", feature, row, f"the job wrote this row; no request can carry {detail}")
    batch = _shard_rows(run_dir, [verdict for _, verdict in kept])
    wheres = [row.where for row, _ in kept]

    def compare(path: str, transform, requests=requests, wheres=wheres, batch=batch):
        try:
            served = _served_rows(transform, requests, wheres, check, path)
        except Exception as error:  # noqa: BLE001 - a path that cannot run is reported, not raised
            check.unchecked[path] = one_line_reason(error)
            return
        _compare_rows(check, path, batch, served, wheres)

    check.requests, check.wheres, check.batch = requests, wheres, batch
    compare("TransformLayer", lambda requests: _layer_outputs(layer, spec, requests))
    compare("TransformLayer, each row alone", lambda requests: _each_alone(
        lambda one: _layer_outputs(layer, spec, one), requests))
    if export_dir is not None:
        compare("transform_features", lambda requests: _exported_outputs(export_dir, requests))
    if not any(feature.sequence for feature in config.features.values()):
        dense = [i for i, request in enumerate(requests) if _one_value_each(request, spec) is not None]
        if dense:
            picked = [_one_value_each(requests[i], spec) for i in dense]
            compare("predict_raw", lambda requests: _predict_raw(layer, requests), picked,
                    [wheres[i] for i in dense], {name: [values[i] for i in dense] for name, values in batch.items()})
            if export_dir is not None:
                _check_predict_raw(check, export_dir, picked, [wheres[i] for i in dense])
    if native:
        _check_native(check, run_dir, spec, requests, wheres, batch, compare)
    # serving takes no label: a row quarantined for its label alone is served as any other
    refusable = [(row, verdict) for row, verdict in quarantined if not _for_the_label(verdict, layer.label)]
    _check_refused(check, layer, spec, export_dir, refusable, lists, job_plan.input_config)
    if export_dir is not None:
        _check_alone_vs_batched(check, export_dir, requests, wheres)
        try:
            _check_predict(check, export_dir, job_plan.input_config, rows, verdicts, dict(zip(wheres, requests)),
                           layer.label)
        except Exception as error:  # noqa: BLE001 - reported, the other paths ran
            check.unchecked["skewless predict"] = one_line_reason(error)
    return check


def _add(check: SourceCheck, path: str, feature: str, row_or_where, detail: str) -> None:
    where = row_or_where.where if isinstance(row_or_where, HeldRow) else row_or_where
    for difference in check.differences:
        if difference.path == path and difference.feature == feature:
            difference.rows.append(where)
            return
    check.differences.append(RowDifference(path, feature, [where], detail))


def one_line_reason(error: Exception) -> str:
    """One line saying why: a TF op's own message (the line above its ``[[{{node ...}}]]``), else the first."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    for above, line in zip(lines, lines[1:]):
        if line.startswith("[["):
            return above[:300]
    return f"{type(error).__name__}: {lines[0] if lines else ''}"[:300]


# ---------------------------------------------------------------------------------------------- the shards


def _shard_rows(run_dir: str, verdicts: list[Verdict]) -> dict[str, list]:
    """{transformed feature: per row, its values as the run's shards hold them} for rows the job wrote."""
    run = RunDirectory.of(run_dir)
    summary = RunSummary.from_json(open(run.summary_file, "rb").read(), run.summary_file)
    spec = tft.TFTransformOutput(run.graph_dir).transformed_feature_spec()
    parse = record_parser(run_dir, spec)
    compression = "GZIP" if summary.compression == "gzip" else ""
    by_split = {}
    for split in {verdict.split for verdict in verdicts}:
        count = 1 + max(verdict.position for verdict in verdicts if verdict.split == split)
        paths = [os.path.join(run_dir, shard.path) for shard in summary.shards[split]]
        records = list(tf.data.TFRecordDataset(paths, compression_type=compression).take(count))
        if len(records) < count:
            raise AlignmentError(f"the {split} shards hold {len(records)} rows, the input's first rows need {count}")
        by_split[split] = _per_row(parse(tf.stack(records)))
    return {name: [by_split[verdict.split][name][verdict.position] for verdict in verdicts] for name in spec}


def _per_row(tensors: dict) -> dict[str, list]:
    """Each feature's values row by row (a var-len row: its values only), as NumPy arrays."""
    rows = {}
    for name, value in tensors.items():
        if isinstance(value, tf.SparseTensor):
            value = tf.RaggedTensor.from_sparse(value)
        if isinstance(value, tf.RaggedTensor):
            rows[name] = [np.asarray(row) for row in value.to_list()]
        else:
            rows[name] = list(np.asarray(value))
    return rows


# ----------------------------------------------------------------------------------------- serving paths


def _layer_outputs(layer, spec: dict, requests: list[dict]) -> dict[str, list]:
    examples = tf.constant(serialize_raw_examples(requests, spec), tf.string)
    return _per_row(layer(parse_raw_examples(examples, spec)))


def _each_alone(transform, requests: list[dict]) -> dict[str, list]:
    """`transform` called on each request alone: a row's values must not depend on its batch-mates."""
    outputs: dict[str, list] = {}
    for request in requests:
        for name, values in transform([request]).items():
            outputs.setdefault(name, []).append(values[0])
    return outputs


def _exported_outputs(export_dir: str, requests: list[dict]) -> dict[str, list]:
    loaded = _loaded(export_dir)
    examples = tf.constant(serialize_raw_examples(requests, read_spec_file(export_dir)["raw"]), tf.string)
    return _per_row(loaded.signatures["transform_features"](examples=examples))


def _one_value_each(request: dict, spec: dict) -> dict | None:
    """`request` as predict_raw takes it (one value per feature, NaN for a missing float), or None if it cannot:
    a missing int or string, a list of other than one value."""
    dense = {}
    for name, feature in spec.items():
        value = request.get(name)
        if isinstance(value, list):
            if len(value) != 1:
                return None
            value = value[0]
        if value is None and not feature.dtype.is_floating:
            return None
        dense[name] = value
    return dense


def _predict_raw(layer, requests: list[dict]) -> dict[str, list]:
    return {name: list(values) for name, values in transform_raw_rows_dense(layer, requests).items()}


_LOADED: dict = {}


def _loaded(export_dir: str):
    if export_dir not in _LOADED:
        _LOADED.clear()
        _LOADED[export_dir] = tf.saved_model.load(export_dir)
    return _LOADED[export_dir]


def _served_rows(transform, requests: list[dict], wheres: list[str], check: SourceCheck, path: str) -> list:
    """Per row, the path's outputs ({feature: values}); None for a row the path refused (reported)."""
    if not requests:
        return []
    try:
        outputs = transform(requests)
        return [{name: values[i] for name, values in outputs.items()} for i in range(len(requests))]
    except (tf.errors.InvalidArgumentError, ValueError):
        pass  # some row is refused: find which, one request per row
    served = []
    for request, where in zip(requests, wheres):
        try:
            outputs = transform([request])
            served.append({name: values[0] for name, values in outputs.items()})
        except (tf.errors.InvalidArgumentError, ValueError) as error:
            reason = one_line_reason(error)
            named = _FEATURE_IN_ERROR.search(reason)
            _add(check, path, named.group(1) if named else "(row)", where,
                 f"the job wrote this row; {path} refused it: {reason}")
            served.append(None)
    return served


def _compare_rows(check: SourceCheck, path: str, batch: dict[str, list], served: list, wheres: list[str]) -> None:
    for i, (outputs, where) in enumerate(zip(served, wheres)):
        if outputs is None:
            continue
        for name in sorted(set(batch) & set(outputs)):
            if not _same(batch[name][i], outputs[name]):
                _add(check, path, name, where, f"batch {_show(batch[name][i])}, {path} {_show(outputs[name])}")


def _same(batch, served) -> bool:
    """Equal values (floats bit-identical, NaN equal to NaN); a var-len row compared with its zero padding."""
    left, right = np.asarray(batch).reshape(-1), np.asarray(served).reshape(-1)
    if left.size != right.size:
        width = max(left.size, right.size)
        left, right = _pad(left, width), _pad(right, width)
    if left.dtype.kind == "f" or right.dtype.kind == "f":
        if left.dtype.kind not in "fiub" or right.dtype.kind not in "fiub":
            return False
        return bool(np.array_equal(left.astype(np.float32).view(np.uint32), right.astype(np.float32).view(np.uint32)))
    return bool(np.array_equal(left, right))


def _pad(values: np.ndarray, width: int) -> np.ndarray:
    fill = b"" if values.dtype.kind in "SO" else 0
    return np.concatenate([values, np.full(width - values.size, fill, dtype=values.dtype)])


def _show(values) -> str:
    values = np.asarray(values)
    text = repr(values.item() if values.size == 1 else values.tolist())
    return text if len(text) <= 60 else text[:57] + "..."


# ----------------------------------------------------------------------------- the native Keras preprocessor


def _check_native(check: SourceCheck, run_dir: str, spec: dict, requests, wheres, batch, compare) -> None:
    """The native layers fed the rows as dense arrays (NaN for a missing float, "" for a missing string: what
    NumPy and pandas hold) and as sparse tensors (a serving request's parse)."""
    try:
        preprocessor = keras_preprocessor(run_dir, strict=False)
    except Exception as error:  # noqa: BLE001 - reported, the other paths still run
        check.unchecked["native Keras preprocessor"] = one_line_reason(error)
        return
    if not preprocessor.feature_specs:
        return

    def outputs(inputs) -> dict[str, list]:
        return _per_row({name: np.asarray(value) for name, value in preprocessor(inputs).items()})

    compare("native Keras preprocessor (sparse input)", lambda rows: outputs(raw_feature_batch(rows, spec)))
    dense = [i for i, request in enumerate(requests)
             if all(request.get(name) is not None or spec[name].dtype.is_floating or spec[name].dtype.name == "string"
                    for name in spec) and not any(isinstance(request.get(name), list) for name in spec)]
    if dense:
        compare("native Keras preprocessor (dense input)", lambda rows: outputs(dense_inputs(rows, spec)),
                [requests[i] for i in dense], [wheres[i] for i in dense],
                {name: [values[i] for i in dense] for name, values in batch.items()})


def dense_inputs(rows: list[dict], spec: dict) -> dict[str, np.ndarray]:
    """One NumPy array per raw feature, a missing float NaN and a missing string "" (as a DataFrame holds them);
    text as bytes, as it is held (an image's bytes are no UTF-8)."""
    inputs = {}
    for name, feature in spec.items():
        values = [row.get(name) for row in rows]
        if feature.dtype.is_floating:
            inputs[name] = np.array([np.nan if v is None else v for v in values], np.float32)
        elif feature.dtype.name == "string":
            inputs[name] = np.array([b"" if v is None else v.encode() if isinstance(v, str) else v for v in values],
                                    dtype=object)
        else:
            inputs[name] = np.array(values, np.int64)
    return inputs


# ------------------------------------------------------------------------------ what the job quarantined


def _check_refused(check: SourceCheck, layer, spec: dict, export_dir, quarantined, lists, input_config) -> None:
    """Each row the job quarantined, served alone, must be refused (by the request or by serving)."""
    for row, verdict in quarantined[:QUARANTINED_ROWS]:
        if not row.values:
            continue  # a line that did not split into columns: there is no request to make of it
        try:
            request = request_row(row, spec, lists, input_config)
            examples = tf.constant(serialize_raw_examples([request], spec), tf.string)
            layer(parse_raw_examples(examples, spec))
            if export_dir is not None:
                _exported_outputs(export_dir, [request])
        except (RefusedValue, tf.errors.InvalidArgumentError, ValueError):
            continue
        feature = verdict.reason.split(":", 1)[0] if ":" in verdict.reason else "(row)"
        _add(check, "serving", feature, row, f"quarantined by the job ({verdict.reason}) but served")


def _for_the_label(verdict: Verdict, label: str | None) -> bool:
    """Whether the job quarantined the row for its label (a reason names its column first)."""
    return label is not None and verdict.reason.startswith(f"{label}: ")


# --------------------------------------------------------------------------------- an export's signatures


def _check_predict_raw(check: SourceCheck, export_dir: str, requests: list[dict], wheres: list[str]) -> None:
    """An export's predict_raw (one tensor per feature, NaN for a missing float) against its serving_default."""
    signatures = _loaded(export_dir).signatures
    if "predict_raw" not in signatures:
        return
    served = read_spec_file(export_dir)
    arguments = {served["predict_raw_arguments"][name]: tf.constant(
        [np.nan if request[name] is None else request[name] for request in requests], spec.dtype)
        for name, spec in served["raw"].items()}
    examples = tf.constant(serialize_raw_examples(requests, served["raw"]), tf.string)
    try:
        dense = signatures["predict_raw"](**arguments)
        together = signatures["serving_default"](examples=examples)
    except tf.errors.InvalidArgumentError as error:
        check.unchecked["predict_raw (export)"] = one_line_reason(error)
        return
    for name, value in together.items():
        for i, where in enumerate(wheres):
            if not _same(value.numpy()[i], dense[name].numpy()[i]):
                _add(check, "predict_raw (export)", name, where,
                     f"serving_default {_show(value.numpy()[i])}, predict_raw {_show(dense[name].numpy()[i])}")


# -------------------------------------------------------------------------------------- skewless predict


def _check_predict(check: SourceCheck, export_dir: str, input_config, rows: list[HeldRow], verdicts: list[Verdict],
                   requests: dict[str, dict], label: str | None) -> None:
    """`skewless predict` on the first input file's first rows (copied as the file holds them) against
    serving_default on the same rows' requests: it scores what the job wrote, as serving does, and nothing else
    but rows the job quarantined for their `label` alone (predict reads no label)."""
    if not rows:
        return
    first = [(row, verdict) for row, verdict in zip(rows, verdicts) if row.source == rows[0].source]
    with tempfile.TemporaryDirectory() as folder:
        head = os.path.join(folder, "head" + os.path.splitext(rows[0].source)[1])
        if not reader_of(input_config.format).copy_head(rows[0].source, head, first[-1][0].number):
            return  # predict reads files: a database or a generator has none to give it
        # a headerless CSV's column names (any other format names its columns itself)
        columns = None if getattr(input_config, "header", True) else input_config.columns
        scored_dir, _ = batch_prediction.score(export_dir, [head], os.path.join(folder, "scored"),
                                               output_format="jsonl", input_format=input_config.format,
                                               columns=columns)
        refused = {row.line: row.reason for row in _quarantine(scored_dir)}
        scored = [json.loads(line) for path in sorted(tf.io.gfile.glob(os.path.join(scored_dir,
                                                                                   "predictions-*.jsonl")))
                  for line in open(path, encoding="utf-8") if line.strip()]
    scored_rows = iter(scored)
    written = [row for row, verdict in first if verdict.outcome == "written" and row.where in requests]
    served = _loaded(export_dir).signatures["serving_default"]
    examples = serialize_raw_examples([requests[row.where] for row in written], read_spec_file(export_dir)["raw"])
    try:
        outputs = {name: value.numpy() for name, value in served(examples=tf.constant(examples)).items()}
    except tf.errors.InvalidArgumentError:  # a row serving refuses (reported above): predict's verdicts still count
        outputs = {}
    index = {row.where: i for i, row in enumerate(written)}
    for row, verdict in first:
        reason = refused.get(row.number)
        predicted = None if reason is not None else next(scored_rows, None)
        if verdict.outcome == "written" and reason is not None:
            _add(check, "skewless predict", reason.split(":", 1)[0], row, f"the job wrote this row; predict: {reason}")
        elif verdict.outcome == "quarantined" and predicted is not None and not _for_the_label(verdict, label):
            _add(check, "skewless predict", verdict.reason.split(":", 1)[0], row,
                 f"quarantined by the job ({verdict.reason}) but scored")
        elif predicted is not None and row.where in requests:
            for name, values in outputs.items():
                expected = values[index[row.where]]
                if not np.allclose(np.asarray(predicted[name], np.float64), expected, rtol=1e-5, atol=1e-6,
                                   equal_nan=True):
                    _add(check, "skewless predict", name, row,
                         f"predict {_show(predicted[name])}, serving_default {_show(expected)}")


def _quarantine(output_dir: str) -> list:
    found = []
    for path in RunDirectory.of(output_dir).quarantine_files:
        with open(path, encoding="utf-8") as handle:
            found += [BadRow(**json.loads(line)) for line in handle if line.strip()]
    return found


# --------------------------------------------------------------------------------- alone vs in a batch


def _check_alone_vs_batched(check: SourceCheck, export_dir: str, requests: list[dict], wheres: list[str]) -> None:
    """An export's serving_default: each row's output alone equals its output among the others."""
    if len(requests) < 2:
        return
    loaded = _loaded(export_dir)
    served = loaded.signatures["serving_default"]
    examples = serialize_raw_examples(requests, read_spec_file(export_dir)["raw"])
    try:
        together = {name: value.numpy() for name, value in served(examples=tf.constant(examples)).items()}
    except tf.errors.InvalidArgumentError as error:
        check.unchecked["serving_default alone vs batched"] = one_line_reason(error)
        return
    for i, (example, where) in enumerate(zip(examples, wheres)):
        alone = served(examples=tf.constant([example]))
        for name, value in alone.items():
            if not np.allclose(value.numpy()[0], together[name][i], rtol=1e-5, atol=1e-6, equal_nan=True):
                _add(check, "serving_default alone vs batched", name, where,
                     f"alone {_show(value.numpy()[0])}, in a batch of {len(requests)} {_show(together[name][i])}")
