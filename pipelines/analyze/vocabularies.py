"""The job's vocabularies, many from one tf.Transform analyzer.

Each `tft.vocabulary` call is an analyzer of its own: about 13 Beam stages, plus its share of pipeline
construction and of the analysis graph. On the census benchmark that cost about 1 s per vocabulary
whatever the data size, so the job's 8 vocabularies were a third of its time. `shared_vocabularies`
asks tf.Transform for any number of them with one cacheable analyzer (pipelines/analyze/preprocessing.py: the
config's vocabularies, in a second analyzer those of analyzer-filled values; pipelines/analyze/missing.py: each
`fill: most_frequent`):

    each batch, in the graph ──> per vocabulary: its distinct tokens and how often each occurs
    CountTokens (Beam)       ──> per vocabulary: every token's count over the dataset (the cached part)
    WriteVocabularies (Beam) ──> one file per vocabulary, written by `tft.vocabulary`'s rules:

- tokens that are empty or hold a newline or a carriage return are left out (one token per line);
- `frequency_threshold` keeps the tokens counted at least that often;
- entries are ordered by count, most frequent first, ties by token bytes, larger first; `top_k` keeps
  the first k;
- `reserved_tokens` come first, in their order, and the entries kept above lose those among them;
- a vocabulary left empty holds tf.Transform's placeholder token, so its lookup table still builds;
- every token ends in a newline.

Counts are exact integers. Each file is named after its vocabulary (`safe_file_name`: whatever the
feature's name, the file stays in its folder) and registered with `tft.annotate_asset`, so
`TFTransformOutput.vocabulary_file_by_name` finds it, and ids come from `tft.apply_vocabulary`, the
lookup `tft.compute_and_apply_vocabulary` builds. tests/pipelines/test_vocabularies.py compares files and ids with
`tft.compute_and_apply_vocabulary`'s.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass

import apache_beam as beam
import numpy as np
import tensorflow as tf
import tensorflow_transform as tft
from tensorflow_transform import analyzer_nodes, nodes
from tensorflow_transform.beam.experimental import PTransformAnalyzer

from skewless.pipelines.analyze.distinct_limits import DistinctLimit
from skewless.pipelines.output import files
from skewless.safe_names import safe_file_name


@dataclass(frozen=True)
class VocabularySpec:
    name: str  # the file name, and the key `vocabulary_file_by_name` takes
    top_k: int | None = None
    frequency_threshold: int | None = None
    reserved_tokens: tuple[bytes, ...] = ()  # the first entries, in this order
    # the most distinct tokens it may count (analysis.max_vocabulary): past it the job is refused
    limit: DistinctLimit | None = None


def shared_vocabularies(tokens: dict, specs: list[VocabularySpec]) -> dict:
    """{spec.name: string tokens (dense, sparse or ragged), or a list of such counted together} -> {spec.name:
    deferred path of its vocabulary file}."""
    if not specs:
        return {}
    inputs = []
    for spec in specs:
        inputs.extend(_batch_counts(tf, tokens[spec.name]))
    paths = _analyzer(tf, inputs, specs)
    for spec in specs:
        tft.annotate_asset(spec.name, safe_file_name(spec.name))
    return {spec.name: path for spec, path in zip(specs, paths)}


def share_vocabulary(name: str, names: list[str], path) -> dict:
    """{each of `names`: `path`}, the deferred path of vocabulary `name`, each registered as another name of its
    file: `TFTransformOutput.vocabulary_file_by_name` finds it by a feature's own vocabulary name too."""
    for other in names:
        tft.annotate_asset(other, safe_file_name(name))
    return dict.fromkeys(names, path)


def _analyzer(tf, inputs: list, specs: list[VocabularySpec]) -> list:
    """The analyzer's steps, as `tft.experimental.ptransform_analyzer` builds a `CacheablePTransformAnalyzer`'s
    (make accumulators, merge them per dataset: what the cache holds, merge all, extract), except that only
    the last step has one output per vocabulary.

    tf.Transform gives every step of a `CacheablePTransformAnalyzer` the analyzer's output count, and
    caches only single-output steps ("Cacheable OperationDefs must have exactly 1 output"), so through
    `ptransform_analyzer` an analyzer with several outputs could not use the analyzer cache.
    """
    accumulator = [analyzer_nodes.TensorInfo(tf.string, [], None)]  # never a tensor: only the count matters
    placeholder = analyzer_nodes.TemporaryAssetInfo(_empty_vocabulary(), "text")  # the file while tracing
    vocabulary_file = analyzer_nodes.TensorInfo(tf.string, [], placeholder)

    def step(scope: str, inputs, ptransform, outputs: list, **options):
        with tf.compat.v1.name_scope(scope):
            return nodes.apply_multi_output_operation(
                analyzer_nodes.PTransform, *inputs, ptransform=ptransform, output_tensor_info_list=outputs, **options
            )

    with tf.compat.v1.name_scope("vocabularies"):
        values = analyzer_nodes.get_input_tensors_value_nodes(inputs)
        limits = [spec.limit for spec in specs]
        made = step("make_accumulators", [values], CountTokens(limits), accumulator, is_partitionable=True)
        cached = step("local_merge_accumulators", made, MergeCounts(limits), accumulator, is_partitionable=True,
                      cache_coder=CountsCoder())
        merged = step("global_merge_accumulators", cached, MergeCounts(limits), accumulator, is_partitionable=False)
        files_written = step("extract_output", merged, WriteVocabularies(specs), [vocabulary_file] * len(specs),
                             is_partitionable=False)
    return [analyzer_nodes.wrap_as_tensor(node) for node in files_written]


def _batch_counts(tf, tokens) -> list:
    """[distinct tokens, int64 counts] of a batch (of several tensors counted together: a list).

    The tokens a vocabulary file cannot hold are dropped from the distinct ones, in Python (`writable`), not by
    a regex and a mask in the graph: those ran over every token of every row on the analysis pass's single
    thread and added ~20 ops per vocabulary to each trace of the graph."""
    tokens = tf.concat([_flat(tf, one) for one in tokens], 0) if isinstance(tokens, list) else _flat(tf, tokens)
    distinct, _, counts = tf.unique_with_counts(tokens, out_idx=tf.int64)
    return [distinct, counts]


def writable(token: bytes) -> bool:
    """Whether a vocabulary file can hold `token` as one line: `tft.vocabulary` drops the empty tokens and those
    holding a newline or a carriage return (`get_vocab_newline_characters_regex`; a test holds the two equal)."""
    return bool(token) and b"\n" not in token and b"\r" not in token


def _flat(tf, tokens):
    """The values of dense, sparse or ragged `tokens`, as one vector."""
    if isinstance(tokens, tf.SparseTensor):
        tokens = tokens.values
    elif isinstance(tokens, tf.RaggedTensor):
        tokens = tokens.flat_values
    return tf.reshape(tokens, [-1])


def _empty_vocabulary() -> bytes:
    """What tf.Transform writes for a vocabulary with no entries (a lookup table cannot be empty)."""
    return tft.analyzers.get_empy_vocabulary_dummy_value(tf.string)[1]


class _SumCounts(beam.CombineFn):
    """Per vocabulary, {token: count}; inputs are a batch's (distinct, counts) pairs, or accumulators. A vocabulary
    counting more distinct tokens than its limit fails the pipeline, batch by batch, before its counts grow
    further."""

    def __init__(self, limits: list[DistinctLimit | None], accumulators: bool = False):
        self._limits = limits
        self._vocabularies = None if accumulators else len(limits)  # None: the inputs are accumulators

    def create_accumulator(self):
        return [{} for _ in range(self._vocabularies or 0)]

    def add_input(self, accumulator, element):
        if self._vocabularies is None:
            # an accumulator of the step before, which tf.Transform also encodes for its cache: read, not changed
            if not accumulator:
                accumulator = [{} for _ in element]
            _add_counts(accumulator, (counts.items() for counts in element), self._limits)
            return accumulator
        batch = (
            [(token, count) for token, count in zip(distinct.tolist(), counts.tolist()) if writable(token)]
            for distinct, counts in zip(element[0::2], element[1::2])
        )
        _add_counts(accumulator, batch, self._limits)
        return accumulator

    def merge_accumulators(self, accumulators):
        merged = []
        for accumulator in accumulators:  # all this CombineFn's own: the first that knows its vocabularies is reused
            if not merged:
                merged = accumulator
            else:
                _add_counts(merged, (counts.items() for counts in accumulator), self._limits)
        return merged

    def extract_output(self, accumulator):
        return accumulator


def _add_counts(total: list[dict], pairs: Iterable, limits: list[DistinctLimit | None]) -> None:
    """Adds (token, count) pairs, one iterable of them per vocabulary, into `total`; refuses a vocabulary past its
    limit."""
    for counts, more, limit in zip(total, pairs, limits):
        for token, count in more:
            counts[token] = counts.get(token, 0) + count
        if limit is not None:
            limit.check(len(counts))


class CountTokens(beam.PTransform):
    """Batches of (distinct tokens, counts) per vocabulary -> one accumulator: {token: count} per vocabulary."""

    def __init__(self, limits: list[DistinctLimit | None]):
        super().__init__()
        self._limits = limits  # one per vocabulary

    def expand(self, batches):
        return batches | "SumCounts" >> beam.CombineGlobally(_SumCounts(self._limits))

    def __repr__(self):
        # tf.Transform keys the analyzer cache by the steps' reprs; Beam's holds the object's address. The limits
        # change no count (a job past one fails), so the cache does not key on them
        return f"CountTokens({len(self._limits)})"


class MergeCounts(beam.PTransform):
    """Accumulators (one per dataset or bundle, some from the analyzer cache) -> their sum."""

    def __init__(self, limits: list[DistinctLimit | None]):
        super().__init__()
        self._limits = limits  # one per vocabulary: the datasets' sum may pass a limit none of them did

    def expand(self, accumulators):
        return accumulators | "SumCounts" >> beam.CombineGlobally(_SumCounts(self._limits, accumulators=True))

    def __repr__(self):
        return "MergeCounts()"  # as CountTokens.__repr__


class WriteVocabularies(PTransformAnalyzer):
    """The summed counts -> one vocabulary file per spec; a path per output."""

    def __init__(self, specs: list[VocabularySpec]):
        super().__init__()
        self._specs = specs

    def expand(self, accumulators):
        # tf.Transform's temp dir, not the folder of its own that this analyzer is given: tf.Transform names
        # each lookup table after its file's path, and a per-run folder in it would make identical runs
        # write different graphs (`tft.vocabulary` writes there too)
        folder = os.path.dirname(self.base_temp_dir)
        paths = accumulators | "Write" >> beam.Map(lambda counts: _write_all(self._specs, counts, folder))
        return tuple(
            paths | f"Path[{spec.name}]" >> beam.Map(lambda written, i=i: written[i])
            for i, spec in enumerate(self._specs)
        )


def _write_all(specs: list[VocabularySpec], counts: list[dict], folder: str) -> list:
    paths = []
    for spec, token_counts in zip(specs, counts or [{}] * len(specs)):
        path = os.path.join(folder, safe_file_name(spec.name))  # never outside `folder`, whatever the name
        files.write_bytes(path, b"".join(token + b"\n" for token in ordered_tokens(token_counts, spec)))
        paths.append(np.array(path))
    return paths


def ordered_tokens(counts: dict, spec: VocabularySpec) -> list[bytes]:
    """A vocabulary's entries from its token counts, in `tft.vocabulary`'s order and with its filters."""
    threshold = spec.frequency_threshold or 0
    entries = sorted(((count, token) for token, count in counts.items() if count >= threshold), reverse=True)
    if spec.top_k is not None:
        entries = entries[: spec.top_k]
    # as tf.Transform: the filters above count the reserved tokens, which then move to the front
    reserved = set(spec.reserved_tokens)
    kept = [token for _, token in entries if token not in reserved]
    return [*spec.reserved_tokens, *kept] or [_empty_vocabulary()]


class CountsCoder(tft.experimental.PTransformAnalyzerCacheCoder):
    """An accumulator to and from JSON for tf.Transform's analyzer cache (tokens are bytes: base64)."""

    def encode_cache(self, accumulator):
        return json.dumps(
            [{base64.b64encode(token).decode(): count for token, count in counts.items()} for counts in accumulator]
        ).encode()

    def decode_cache(self, encoded):
        return [{base64.b64decode(token): count for token, count in counts.items()} for counts in json.loads(encoded)]
