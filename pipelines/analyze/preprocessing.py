"""The tf.Transform `preprocessing_fn` built from the config's declarative transforms.

This module orchestrates: missing values filled, indicators, the shared vocabularies, the label and the
user function; each transform's own tf.Transform calls are its module's `build` (skewless/transforms/).
Every transform is a tf.Transform call, so its statistics come from tf.Transform analyzers over the
whole dataset and the same graph runs at serving time. A user `preprocessing_fn` (``module:function``)
is called with the raw features and the declarative outputs; what it returns is added to (or
replaces) them.
"""

from __future__ import annotations

from typing import Callable

import tensorflow as tf
import tensorflow_transform as tft

from skewless.config import JobConfig
from skewless.errors import ConfigError
from skewless.pipelines.analyze.vocabularies import VocabularySpec, share_vocabulary, shared_vocabularies
from skewless.references import import_function
from skewless.safe_names import missing_indicator_name, shared_vocabulary_filename, vocabulary_filename
from skewless.pipelines.reading.columns import RawColumn
from skewless.pipelines.reading.sources import judged_schema, value_domains
from skewless.pipelines.analyze.distinct_limits import vocabulary_limit
from skewless.pipelines.analyze.missing import fill_missing, missing_indicator
from skewless.transforms import TRANSFORMS
from skewless.transforms.categorical import vocabulary_ids
from skewless.ops.values import as_strings
from skewless.value_rules import checked_raw_value, refuse_outside_domain

# set on a function `build_preprocessing_fn` returns without a hook: the repr of everything it reads, which keys
# its traced SavedModels for reuse (pipelines/analyze/saved_model_reuse.py)
REUSE_KEY_ATTRIBUTE = "skewless_reuse_key"


def build_preprocessing_fn(config: JobConfig, columns: list[RawColumn]) -> Callable:
    """Returns the preprocessing_fn for tf.Transform; it closes over plain data only, so it pickles."""
    by_name = {column.name: column for column in columns}
    # every option by field name, defaults included (model_dump leaves the defaults out)
    features = {name: dict(feature) for name, feature in config.features.items()}
    # the raw columns each feature computes from besides its own (a cross's columns, a per-key statistic's key)
    reads = {name: feature.transform_kind.reads(feature) for name, feature in config.features.items()}
    # the raw column each feature transforms (`column:`, else its name); a new output has none
    sources = {name: feature.raw_column(name) for name, feature in config.features.items()}
    kinds = {column.name: column.kind for column in columns}
    for name, feature in config.features.items():
        feature.transform_kind.check_columns(name, feature, kinds)
        if feature.transform_kind.uses_label(feature):
            _check_class_label(name, config, kinds)
    label = config.label.model_dump() if config.label else None
    user_fn = config.preprocessing_fn
    nonfinite = config.input.nonfinite
    label_column = config.label.column if config.label else None
    max_vocabulary = config.analysis.max_vocabulary
    na_tokens = {column.name: config.input.missing_tokens(column.name) for column in columns}
    # the values the job quarantines as outside a domain (the schema's, log's -1), refused at serving too
    domains = {name: domain for name, domain in value_domains(judged_schema(config, columns)).items()
               if name != label_column}

    def preprocessing_fn(inputs):
        # the job's value rules first, so that serving refuses and fills what the batch job does; not on the
        # label, which serving never has (tf.Transform feeds placeholder values for it, which would be refused)
        inputs = {name: value if name == label_column else checked_raw_value(
                      value, name, nonfinite, na_tokens.get(name, frozenset()),
                      by_name[name].is_list if name in by_name else False)
                  for name, value in inputs.items()}
        inputs = {name: refuse_outside_domain(value, name, **domains[name]) if name in domains else value
                  for name, value in inputs.items()}
        outputs = {}
        filled = {}
        for name, options in features.items():
            if TRANSFORMS[options["transform"]].new_output:
                continue
            raw = inputs[sources[name]]
            filled[name] = fill_missing(raw, by_name[sources[name]], options, nonfinite,
                                        vocabulary_limit(f"features.{name}: its fill most_frequent", max_vocabulary))
            if options["missing_indicator"]:
                outputs[missing_indicator_name(name)] = missing_indicator(raw, nonfinite)
        label_value = None
        if label is not None:
            column = by_name[label["column"]]
            label_value = fill_missing(inputs[column.name], column, {}, nonfinite)
        tokens, vocabularies = _vocabularies(features, filled, inputs, label, label_value, max_vocabulary)
        for name, options in features.items():
            transform = TRANSFORMS[options["transform"]]
            # a new output has no value of its own: it is computed from the columns it reads
            value = None if transform.new_output else tokens.get(vocabulary_filename(name), filled[name])
            columns = {column: filled[column] if column in filled else inputs[column] for column in reads[name]}
            outputs.update(transform.build(name, value, options, vocabularies.get(vocabulary_filename(name)), columns))
        if label is not None:
            file = vocabulary_filename(label["column"])
            outputs[label["column"]] = _label(tokens.get(file, label_value), label, vocabularies.get(file))
        if user_fn is not None:
            extra = import_function(user_fn, "preprocessing_fn")(dict(inputs), dict(outputs))
            if not isinstance(extra, dict):
                raise ConfigError(f"preprocessing_fn {user_fn!r} must return a dict of tensors")
            outputs.update(extra)
        return outputs

    # a most_frequent fill reads its top-1 vocabulary by path (missing.py), a temporary file of the run that
    # traced the graph and outside its SavedModel: a kept graph would read a file of another run, maybe gone
    reads_a_run_file = any(options["fill"] == "most_frequent" for options in features.values())
    # a coverage key is user code like a hook, which the analysis runs: not data the key could hold
    user_code = user_fn is not None or any(options["coverage_key"] is not None for options in features.values())
    if not user_code and not reads_a_run_file:
        # everything the function above reads, by value: the key of its traced graphs
        # (saved_model_reuse); a hook's code is not data it closes over, so with one there is no key
        key = (features, reads, sources, kinds, label, nonfinite, na_tokens, columns, label_column, domains,
               max_vocabulary)
        setattr(preprocessing_fn, REUSE_KEY_ATTRIBUTE, repr(key))
    return preprocessing_fn


def _check_class_label(name: str, config: JobConfig, kinds: dict[str, str]) -> None:
    """Refuses `labels: true` on feature `name` unless the label is classes tf.Transform can take: int64 ids."""
    label = config.label
    if label is None:
        return  # the config refused it already (JobConfig)
    if label.class_ids or kinds[label.column] == "int":
        return
    raise ConfigError(f"features.{name}.labels: the label column {label.column!r} holds "
                      f"{'strings' if kinds[label.column] == 'bytes' else 'floats'}; mutual information needs "
                      "classes: an int label, or a string label with label.map or label.transform: vocabulary")


def _vocabularies(features: dict, filled: dict, inputs: dict, label: dict | None, label_value,
                  max_vocabulary: int) -> tuple[dict, dict]:
    """({vocabulary file name: its string tokens}, {vocabulary file name: deferred path}) of the features'
    and the label's vocabularies, from as few tf.Transform analyzers as the graph allows
    (pipelines/analyze/vocabularies.py).

    A vocabulary of values filled by an analyzer (`fill`) can only be counted once that analyzer has
    run, so those share a second analyzer: with the others, all would wait for it. A vocabulary ordered by
    the label or counted with weights is an analyzer of its own (`tft.vocabulary`), given the label as the
    job writes it (class ids: after its map or its vocabulary). A vocabulary counted here may count at most
    `max_vocabulary` distinct tokens (the others are counted on their raw column: distinct_limits.py). The
    features of a `shared_vocabulary` give their tokens to one vocabulary, whose path is each one's.
    """
    tokens, specs, after_fill, alone = {}, [], set(), []
    # a shared vocabulary's file -> the tokens of each of its features, and the features' own file names
    shared_tokens: dict[str, list] = {}
    shared_by: dict[str, list[str]] = {}
    for name, options in features.items():
        transform = TRANSFORMS[options["transform"]]
        if transform.new_output:
            continue
        feature_tokens = transform.vocabulary_tokens(filled[name], options)
        if feature_tokens is None:
            continue
        file = vocabulary_filename(name)
        tokens[file] = feature_tokens
        if transform.own_analyzer(options):
            alone.append(name)
            continue
        counted = file
        if options["shared_vocabulary"] is not None:
            counted = shared_vocabulary_filename(options["shared_vocabulary"])
            shared_tokens.setdefault(counted, []).append(feature_tokens)
            shared_by.setdefault(counted, []).append(file)
        if counted == file or len(shared_by[counted]) == 1:  # one spec a vocabulary (the config checked they agree)
            reserved = tuple(token.encode() for token in options["reserved_tokens"] or ())
            specs.append(VocabularySpec(counted, options["top_k"], options["frequency_threshold"], reserved,
                                        vocabulary_limit(f"features.{name}: its vocabulary", max_vocabulary)))
        if options["fill"] is not None:
            after_fill.add(counted)
    if label is not None and label["map"] is None and label["transform"] == "vocabulary":
        file = vocabulary_filename(label["column"])
        tokens[file] = as_strings(label_value)
        specs.append(VocabularySpec(file, limit=vocabulary_limit(f"label.column {label['column']}: its vocabulary",
                                                                 max_vocabulary)))
    paths = {}
    for waits in (False, True):
        paths.update(shared_vocabularies({**tokens, **shared_tokens},
                                         [spec for spec in specs if (spec.name in after_fill) == waits]))
    for counted, files in shared_by.items():
        # each feature's ids from the shared file
        paths.update(share_vocabulary(counted, files, paths[counted]))
    label_ids = None
    if any(features[name]["labels"] for name in alone):
        file = vocabulary_filename(label["column"])
        label_ids = _label(tokens.get(file, label_value), label, paths.get(file))
    for name in alone:
        options, file = features[name], vocabulary_filename(name)
        column = options["weights"]
        weights = None if column is None else filled.get(column, inputs[column])
        paths[file] = TRANSFORMS[options["transform"]].label_vocabulary(tokens[file], options, file, label_ids, weights)
    return tokens, paths


def _label(value, label: dict, vocabulary=None):
    """The label's output: `map`ped ids, ids from its vocabulary (`value` is then its tokens), its numeric
    transform, or itself."""
    if label["map"] is not None:
        value = as_strings(value)
        keys = tf.constant(list(label["map"]))
        ids = tf.constant(list(label["map"].values()), dtype=tf.int64)
        # -1 marks a label the map does not know; the job quarantines such rows before they get here
        matches = tf.equal(tf.expand_dims(value, 1), tf.expand_dims(keys, 0))
        return tf.where(tf.reduce_any(matches, axis=1), tf.gather(ids, tf.argmax(tf.cast(matches, tf.int64), axis=1)),
                        tf.constant(-1, tf.int64))
    if label["transform"] == "vocabulary":
        return vocabulary_ids(tft.apply_vocabulary(value, vocabulary, num_oov_buckets=0))
    if label["transform"] is not None:
        # a regression label scaled as a feature of that transform is, with its statistics over the whole
        # dataset; the export's signatures invert it (layers/label_scale.py)
        return TRANSFORMS[label["transform"]].transform(value, {"clip": None, "key": None})
    return value
