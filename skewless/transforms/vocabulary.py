"""`transform: vocabulary`: ids from a tf.Transform vocabulary of the column's values over the whole dataset."""

from __future__ import annotations

import numpy as np
from pydantic import Field

from skewless.errors import ConfigError
from skewless.lazy_imports import lazy_import
from skewless.references import import_function
from skewless.safe_names import shared_vocabulary_filename, vocabulary_filename
from skewless.transforms.base import Option, Transform, not_built_by
from skewless.transforms.categorical import vocabulary_ids
from skewless.transforms.encoded import (
    ENCODINGS,
    OUTPUT_VALUES,
    check_encoding,
    encode,
    list_width,
    native_encoding,
)
from skewless.ops.values import as_strings

# on first use: loading a config reads this registry without TensorFlow; a builder loads what it calls
tf = lazy_import("tensorflow")
tft = lazy_import("tensorflow_transform")
vocabulary_first_layers = lazy_import("skewless.layers.vocabulary_first")
keras = lazy_import("keras")

TOP_K = Option("top_k", int | None, Field(default=None, ge=1), "keep the k most frequent values")
FREQUENCY_THRESHOLD = Option("frequency_threshold", int | None, Field(default=None, ge=0),
                             "keep values seen at least this often")
NUM_OOV_BUCKETS = Option("num_oov_buckets", int, Field(default=1, ge=0),
                         "ids after the vocabulary for unseen values (hashed)")
DEFAULT_VALUE = Option("default_value", int | None, Field(default=None),
                       "with `num_oov_buckets: 0`, the id of a value the vocabulary lacks (none: -1)")

LABELS = Option("labels", bool, Field(default=False),
                "order the vocabulary by mutual information with the label, not by count (`tft.vocabulary(labels=)`; "
                "the label must be classes: an int column, or strings with `label.map` or `transform: vocabulary`); "
                "`top_k` keeps the most informative values")
ADJUSTED_MUTUAL_INFO = Option("adjusted_mutual_info", bool, Field(default=False),
                              "with `labels`: adjusted mutual information (`use_adjusted_mutual_info`)")
MIN_DIFF_FROM_AVG = Option("min_diff_from_avg", float | None, Field(default=None, ge=0),
                           "with `labels`: a value's mutual information is 0 where its count differs from the "
                           "expected one by less (none: tf.Transform's choice from the dataset's size)")
WEIGHTS = Option("weights", str | None, Field(default=None),
                 "a raw numeric column: each row counts with its weight, not 1 (`tft.vocabulary(weights=)`)")
RESERVED_TOKENS = Option("reserved_tokens", list[str] | None, Field(default=None, min_length=1),
                         "`[t0, t1, ...]`: the vocabulary's first entries in this order (ids 0, 1, ...), seen in the "
                         "data or not; `top_k` and `frequency_threshold` choose the others (`tft.vocabulary("
                         "reserved_tokens=)`: a reserved token the filters keep takes one of top_k's places)")
SHARED_VOCABULARY = Option("shared_vocabulary", str | None, Field(default=None, min_length=1),
                           "a name: the features giving it share one vocabulary, counted over all their values "
                           "(`tft.vocabulary` of their values together), each feature's ids from it; they give the "
                           "same `top_k`, `frequency_threshold` and `reserved_tokens`")
COVERAGE_TOP_K = Option("coverage_top_k", int | None, Field(default=None, ge=1),
                        "with `coverage_key`: also keep the k most frequent values of each key (tf.Transform's "
                        "coverage arm, added to the vocabulary `top_k` and `frequency_threshold` keep)")
COVERAGE_FREQUENCY_THRESHOLD = Option("coverage_frequency_threshold", int | None, Field(default=None, ge=0),
                                      "with `coverage_key`: the coverage arm keeps values seen at least this often")
COVERAGE_KEY = Option("coverage_key", str | None, Field(default=None),
                      "`module.path:function` of a value (bytes) giving its key for `coverage_top_k` and "
                      "`coverage_frequency_threshold` (`tft.vocabulary(key_fn=)`)")

OUTPUT = Option("output", OUTPUT_VALUES, Field(default="ids"),
                "`ids`, or the ids encoded as `CategoryEncoding` does: `one_hot` (one value per row), `multi_hot` or "
                "`count` (lists), float32 `[top_k + reserved tokens + num_oov_buckets]`: needs `top_k`")


class Vocabulary(Transform):
    name = "vocabulary"
    doc = "`tft.compute_and_apply_vocabulary` (one shared analyzer): int64 ids, most frequent first"
    options = (TOP_K, FREQUENCY_THRESHOLD, RESERVED_TOKENS, SHARED_VOCABULARY, COVERAGE_TOP_K,
               COVERAGE_FREQUENCY_THRESHOLD, COVERAGE_KEY, NUM_OOV_BUCKETS, DEFAULT_VALUE, LABELS,
               ADJUSTED_MUTUAL_INFO, MIN_DIFF_FROM_AVG, WEIGHTS, OUTPUT)
    categories = True
    ids = True
    counts_oov = True
    reads_as = ("weights", "weigh by")
    # a list's output multi_hot / count: densified (RaggedTensorToTensor), summed (Sum), capped at 1 (Minimum)
    native_ops = frozenset({"AsString", "LookupTableFindV2", "LookupTableSizeV2", "NotEqual", "StringToHashBucketFast",
                            "AddV2", "SelectV2", "OneHot", "RaggedTensorToTensor", "Sum", "Minimum"})
    native_layers = ('Keras `StringLookup` / `IntegerLookup(oov_method="farmhash")`, `VocabularyFirst`; with `output: '
                     'one_hot`, `CategoryEncoding`; a `list`\'s `output: multi_hot | count`, `PresentValues`, the '
                     'lookup with `output_mode`, `VocabularyFirstColumns`: exactly, unseen values included (float '
                     "values are refused: tf.Transform looks up their text; a list's var-len ids are refused: the "
                     "preprocessor gives dense tensors)")
    # the native layers read the lookup table whatever ordered it (count, mutual information, weights)
    native_options = ("top_k", "frequency_threshold", "reserved_tokens", "shared_vocabulary", "coverage_top_k",
                      "coverage_frequency_threshold", "coverage_key", "num_oov_buckets", "default_value", "labels",
                      "adjusted_mutual_info", "min_diff_from_avg", "weights", "output", "is_list")
    report_options = ("top_k", "frequency_threshold", "reserved_tokens", "shared_vocabulary", "num_oov_buckets",
                      "labels", "weights")

    def check(self, feature) -> str | None:
        problem = check_reserved_tokens(feature.reserved_tokens)
        if problem is not None:
            return problem
        if feature.default_value is not None and feature.num_oov_buckets != 0:
            return (f"default_value needs num_oov_buckets: 0 (with {feature.num_oov_buckets} OOV buckets an unseen "
                    "value gets a hashed id)")
        if not feature.labels and (feature.adjusted_mutual_info or feature.min_diff_from_avg is not None):
            return "adjusted_mutual_info and min_diff_from_avg need labels: true (they weigh mutual information)"
        if feature.labels and feature.frequency_threshold is not None:
            return ("frequency_threshold with labels: true would be a mutual information threshold in tf.Transform, "
                    "not a count; keep the most informative values with top_k")
        coverage = feature.coverage_top_k is not None or feature.coverage_frequency_threshold is not None
        if coverage != (feature.coverage_key is not None):
            return ("coverage_top_k and coverage_frequency_threshold need coverage_key (a function of a value giving "
                    "its key), and coverage_key needs one of them")
        if feature.coverage_key is not None and ":" not in feature.coverage_key:
            return "coverage_key must be 'module.path:function'"
        if feature.shared_vocabulary is not None and coverage:
            return "shared_vocabulary takes no coverage options (tf.Transform's coverage arm is one feature's)"
        if feature.shared_vocabulary is not None and (feature.labels or feature.weights is not None):
            return ("shared_vocabulary counts the values of several features; labels and weights order one "
                    "feature's own vocabulary")
        if feature.sequence and (feature.labels or feature.weights is not None):
            return "labels and weights take one label or weight per row; a feature list (sequence: true) has steps"
        if feature.weights is not None and feature.is_list:
            return "weights: one weight per row cannot weigh a list's values (tft.vocabulary needs one per value)"
        if feature.output in ENCODINGS and feature.top_k is None:
            return (f"output {feature.output} needs top_k: its width, top_k + reserved tokens + num_oov_buckets, "
                    "must be known before the analysis")
        return check_encoding(feature, ("ids", *ENCODINGS))

    def unseen_id(self, feature) -> int | None:
        """The id a value the vocabulary lacks gets without OOV buckets (`default_value`, or -1), where the written
        rows tell it from a vocabulary id: negative (a default_value past the vocabulary is counted as an OOV
        bucket is), and not a padded list's `pad_value`, nor a list's encoded columns (an unseen value adds
        none). None otherwise: run.json's `oov_rows` then counts the OOV buckets' rows only."""
        default = -1 if feature.default_value is None else feature.default_value
        if feature.num_oov_buckets != 0 or default >= 0:
            return None
        if feature.is_list and feature.output in ENCODINGS:
            return None
        if feature.max_length is not None and (-1 if feature.pad_value is None else feature.pad_value) == default:
            return None
        return default

    def row_wise(self, feature) -> bool:
        return True  # a lookup of each value in a fixed table; one_hot: 0.0 and 1.0

    def never_negative(self, feature) -> bool:
        return bool(feature.num_oov_buckets)  # an unseen value takes an OOV bucket; without one, default_value (-1)

    def uses_label(self, feature) -> bool:
        return feature.labels

    def reads(self, feature) -> list[str]:
        return [feature.weights] if feature.weights is not None else []

    def check_columns(self, name: str, feature, kinds: dict[str, str]) -> None:
        super().check_columns(name, feature, kinds)
        if feature.weights is not None and kinds[feature.weights] == "bytes":
            raise ConfigError(f"features.{name}.weights: {feature.weights} holds strings; weights are numbers")

    def own_analyzer(self, options: dict) -> bool:
        # the shared analyzer counts plain occurrences: no label, weights or coverage arm
        return options["labels"] or options["weights"] is not None or options["coverage_key"] is not None

    def label_vocabulary(self, tokens, options: dict, file: str, labels=None, weights=None):
        """The deferred path of the vocabulary file `file` of `tokens` ordered by mutual information with
        `labels` (int64 class ids, one per row), counted with `weights` (one per row) and/or with a coverage arm:
        an analyzer of its own (`own_analyzer`)."""
        return tft.vocabulary(
            tokens, top_k=options["top_k"], frequency_threshold=options["frequency_threshold"], vocab_filename=file,
            weights=None if weights is None else tf.cast(weights, tf.float32),
            labels=labels if options["labels"] else None, use_adjusted_mutual_info=options["adjusted_mutual_info"],
            min_diff_from_avg=options["min_diff_from_avg"], reserved_tokens=options["reserved_tokens"],
            coverage_top_k=options["coverage_top_k"],
            coverage_frequency_threshold=options["coverage_frequency_threshold"],
            key_fn=None if options["coverage_key"] is None else import_function(options["coverage_key"],
                                                                                 "coverage_key"))

    def vocabulary_tokens(self, value, options: dict):
        return as_strings(value)

    def transform(self, value, options: dict, vocabulary=None, columns=None):
        # tf.Transform's own default, -1, when the config names none
        default = -1 if options["default_value"] is None else options["default_value"]
        ids = vocabulary_ids(tft.apply_vocabulary(value, vocabulary, default_value=default,
                                                  num_oov_buckets=options["num_oov_buckets"]))
        if options["output"] in ENCODINGS:
            width = options["top_k"] + len(options["reserved_tokens"] or ()) + options["num_oov_buckets"]
            return encode(ids, width, options["output"])
        return ids

    def run_fields(self, name: str, feature, graph) -> dict:
        return vocabulary_fields(name, feature, graph)

    def native(self, plan, graph) -> str | None:
        """`native_lookup`, then `VocabularyFirst` (tf.Transform's index order). A list's `PresentValues`
        (plan_feature's) go through the lookup with ``output_mode`` multi_hot or count, then
        `VocabularyFirstColumns`."""
        width, mode = None, "int"
        if plan.options.get("is_list"):
            width, reason = list_width(plan, graph)
            if reason is not None:
                return reason
            mode = plan.options["output"]
        found = native_lookup(plan, graph, mode)
        if isinstance(found, str):
            return found
        lookup, size, num_oov, default = found
        if width is not None:
            if width < size + num_oov:
                return not_built_by("compute_and_apply_vocabulary")
            plan.layers = [lookup, vocabulary_first_layers.VocabularyFirstColumns(
                size, num_oov, width, default, mode, name=f"{plan.layer_name}_vocabulary_first")]
            return None
        plan.layers = [lookup, vocabulary_first_layers.VocabularyFirst(size, num_oov, default,
                                                                       name=f"{plan.layer_name}_vocabulary_first")]
        return native_encoding(plan, graph)


def check_reserved_tokens(tokens: list[str] | None) -> str | None:
    """What is wrong with `reserved_tokens` (one a line of the vocabulary file: none empty, none repeated, no line
    break in one), or None."""
    for token in tokens or ():
        if not token or "\n" in token or "\r" in token:
            return (f"reserved_tokens: {token!r} cannot be a vocabulary entry (one a line of its file: not empty, no "
                    "line break)")
        if tokens.count(token) > 1:
            return f"reserved_tokens: {token!r} is given twice"
    return None


def native_lookup(plan, graph, mode: str = "int", text_keys: bool = False):
    """(Keras' StringLookup / IntegerLookup of the graph's one vocabulary table with ``output_mode`` `mode`, the
    vocabulary's size, its OOV bucket count, the id of an unseen value without OOV buckets), or why there is none.

    Keras hashes an unseen value into OOV bucket FarmHash64(value) % k as tf.Transform does (IntegerLookup: with
    ``oov_method="farmhash"``, of the decimal text), but numbers the buckets first. Float values are refused:
    tf.Transform looks up their as_string text, which no Keras lookup does. With `text_keys` the values come as
    text whatever the raw column holds (a text_vocabulary's tokens): a StringLookup. Sets ``plan.probe["tokens"]``
    (the raw column's values)."""
    if len(graph.tables) != 1:
        return not_built_by("compute_and_apply_vocabulary")
    keys, ids = graph.tables[0]
    if not np.array_equal(ids, np.arange(len(keys))):
        return "its lookup table does not number the vocabulary 0..n-1"
    if len(graph.hash_buckets) > 1:
        return not_built_by("compute_and_apply_vocabulary")
    num_oov = graph.hash_buckets[0] if graph.hash_buckets else 0
    lookup_oov = max(num_oov, 1)
    if plan.raw_dtype == tf.string or text_keys:
        try:
            vocabulary = [key.decode("utf-8") for key in keys]
        except UnicodeDecodeError:
            return "its vocabulary has entries that are not UTF-8 (Keras StringLookup stores text)"
        lookup = keras.layers.StringLookup(
            vocabulary=vocabulary, num_oov_indices=lookup_oov, oov_token=_unused_token(vocabulary, "[UNK]"),
            output_mode=mode, name=f"{plan.layer_name}_lookup")
    elif plan.raw_dtype.is_integer:
        try:
            vocabulary = [int(key) for key in keys]
        except ValueError:
            return "its vocabulary of an integer feature has entries that are not integers"
        lookup = keras.layers.IntegerLookup(
            vocabulary=vocabulary, num_oov_indices=lookup_oov, oov_token=_unused_token(vocabulary, -1),
            oov_method="farmhash", output_mode=mode, name=f"{plan.layer_name}_lookup")
    else:
        return "a vocabulary of float values: tf.Transform looks up their as_string text, which no Keras lookup does"
    # an unseen value's id without OOV buckets (with them, it gets a hashed one)
    default = graph.constant("LookupTableFindV2", 2) if num_oov == 0 else -1
    if default is None:
        return not_built_by("compute_and_apply_vocabulary")
    plan.probe = {"tokens": vocabulary if plan.raw_dtype == tf.string or not text_keys else
                  [int(key) for key in vocabulary if key.lstrip("-").isdigit()]}
    return lookup, len(vocabulary), num_oov, int(default)


def vocabulary_fields(name: str, feature, graph) -> dict:
    """run.json's fields of a feature with a vocabulary: its file (in transform_graph/transform_fn/assets/),
    its size and OOV buckets."""
    shared = getattr(feature, "shared_vocabulary", None)  # a text_vocabulary has none
    file = vocabulary_filename(name) if shared is None else shared_vocabulary_filename(shared)
    return {"vocabulary_file": file, "vocabulary_size": graph.vocabulary_size_by_name(file),
            "num_oov_buckets": feature.num_oov_buckets}


def _unused_token(vocabulary: list, preferred):
    """An OOV token Keras will not mistake for the vocabulary's own first entries.

    Keras drops leading vocabulary entries equal to its OOV token (it takes them for its own).
    """
    token = preferred
    while token in vocabulary[:1]:
        token = token + "_" if isinstance(token, str) else token - 1
    return token


TRANSFORM = Vocabulary()
