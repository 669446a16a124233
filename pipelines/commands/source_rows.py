"""The input's rows as the source holds them, for `skewless verify`, each paired with what the job did with it.

`source_rows` reads the input's first rows as the source holds them (`InputFormat.held_rows`: CSV text untrimmed,
JSON values, the values of Parquet, TFRecord and SQL, what a generator yields), independently of the job's reader.
`job_verdicts` then reads the same input with the job's own reader and says, row by row, whether the job wrote the
row (to which split, at which position of the split's shards), quarantined it (why), or left it out (no label).

`request_row` makes a raw row the request a client sends, serialized by `serialize_raw_examples` (the export's
clients' helper, which parses a number's text): a boolean as 1/0, a CSV list split at `input.list_delimiter`, empty
text and NA tokens of a numeric feature left out; a value no request can carry is a `RefusedValue`.
"""

from __future__ import annotations

import datetime
import itertools
import math
import re
from dataclasses import dataclass

import numpy as np
import tensorflow as tf

from skewless.errors import InputError
from skewless.input_formats import reader_of
from skewless.layers import serialize_raw_examples
from skewless.pipelines.reading.held_rows import HeldRow
from skewless.pipelines.reading.sources import RowReader
from skewless.pipelines.reading.split_rule import split_of
from skewless.sequence_specs import split_raw_spec


@dataclass(frozen=True)
class Verdict:
    """What the job did with a row: "written" (to `split`, record `position` of its shards), "quarantined"
    (`reason`) or "unlabeled" (left out, label.missing: drop)."""

    outcome: str
    split: str | None = None
    position: int | None = None
    reason: str | None = None


class AlignmentError(Exception):
    """The raw rows and the job reader's rows do not pair up (so they cannot be compared row by row)."""


class RefusedValue(ValueError):
    """A raw value no request of its feature's type can carry (text that is no number in a numeric feature)."""


def source_rows(job_plan, limit: int) -> list[HeldRow]:
    """The first `limit` rows of the run's input, in the job's order, as the source holds them (`InputFormat.held_rows`).

    Raises ConfigError for an input with no source but a generator of its own (the synthetic set)."""
    input_config = job_plan.input_config  # resolved: a CSV header's columns filled in
    return list(itertools.islice(reader_of(input_config.format).held_rows(input_config, job_plan.units), limit))


def job_verdicts(config, job_plan, rows: list[HeldRow]) -> list[Verdict]:
    """What the job's reader makes of each of `rows` (the input's first rows, in order), and where the job wrote
    it: its split and its position among the split's rows (the shards hold each split's rows in input order)."""
    reader = RowReader.for_job(config, job_plan.input_config, job_plan.columns)
    bad, keys, unlabeled, read = {}, [], 0, 0
    for unit in job_plan.units:
        for chunk in reader.read(unit):
            bad.update({(row.source, row.line): row.reason for row in chunk.bad})
            keys.append(np.asarray(chunk.keys, np.uint64))
            unlabeled += chunk.unlabeled
            read += chunk.rows_read
            if read >= len(rows):
                break
        if read >= len(rows):
            break
    keys = np.concatenate(keys) if keys else np.zeros(0, np.uint64)
    splits = list(config.output.splits)
    split_index = split_of(keys, list(config.output.splits.values()))
    label = config.label.column if config.label is not None and unlabeled else None
    tokens = config.input.missing_tokens(label) if label else frozenset()
    verdicts, good, positions = [], 0, dict.fromkeys(splits, 0)
    for row in rows:
        reason = bad.get((row.source, row.number))
        if reason is not None:
            verdicts.append(Verdict("quarantined", reason=reason))
        elif label is not None and _is_missing(row.values.get(label), tokens):
            verdicts.append(Verdict("unlabeled"))
        else:
            if good >= len(keys):
                raise AlignmentError(f"{row.where}: the job's reader gave fewer good rows than the source holds")
            split = splits[split_index[good]]
            verdicts.append(Verdict("written", split, positions[split]))
            positions[split] += 1
            good += 1
    return verdicts


def _is_missing(value, tokens: frozenset) -> bool:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return True
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
    return isinstance(text, str) and (not text.strip() or text.strip().encode() in tokens)


def request_row(row: HeldRow, raw_spec: dict, lists: set, input_config) -> dict:
    """`row` as a client's request: {feature: value or list of values, None where absent}, serialized as a raw
    Example by `serialize_raw_examples` (the export's clients' helper, which parses a number's text).

    Raises `RefusedValue` (naming the feature) for a value no request of its type can carry.
    """
    request = {}
    for name, spec in raw_spec.items():
        value = row.values.get(name)
        if name in lists:
            if isinstance(value, str):  # a CSV list is text: its items are what the delimiter cuts
                value = value.split(input_config.list_delimiter)
            elif value is not None and not isinstance(value, (list, tuple, np.ndarray)):
                value = [value]
        tokens = input_config.missing_tokens(name) if spec.dtype != tf.string else frozenset()
        if isinstance(value, (list, tuple, np.ndarray)):
            items = [_typed(item, spec.dtype, tokens) for item in value]
            request[name] = [item for item in items if item is not None] or None
        else:
            request[name] = _typed(value, spec.dtype, tokens)
    try:
        [serialized] = serialize_raw_examples([request], raw_spec)
    except InputError as error:
        named = re.search(r"raw feature '([^']+)' = (.*)", str(error))
        raise RefusedValue(f"{named.group(1)}: {named.group(2)}" if named else str(error)) from None
    if split_raw_spec(raw_spec)[1]:
        return request  # a SequenceExample's steps: served as they are
    # typed as the Example holds them (numbers parsed from their text), for the paths that take no Example
    features = tf.train.Example.FromString(serialized).features.feature
    typed = {}
    for name in raw_spec:
        held = features[name] if name in features else None
        values = None if held is None else list(held.bytes_list.value or held.float_list.value or held.int64_list.value)
        typed[name] = values if values is None or name in lists else values[0]
    return typed


def _typed(value, dtype: tf.DType, tokens: frozenset):
    """One raw value as a client holds it for a request of `dtype`; None: absent (a client sends no value).

    A number request cannot carry text that is no number: empty text and the column's NA `tokens` are left out
    (missing), as the job reads them; other text is left for `serialize_raw_examples` to parse."""
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)):
        value = int(value)  # a boolean is 1/0 in every format (docs/values.md)
    if isinstance(value, datetime.datetime):
        value = value.timestamp() if value.tzinfo else value.replace(tzinfo=datetime.timezone.utc).timestamp()
    elif isinstance(value, datetime.date):
        value = value.isoformat()
    if dtype == tf.string:
        return value if isinstance(value, (bytes, str)) else str(value)
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="backslashreplace")
    if isinstance(value, str) and (not value.strip() or value.strip().encode() in tokens):
        return None
    return value
