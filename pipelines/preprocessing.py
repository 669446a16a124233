"""The tf.Transform `preprocessing_fn` built from the config's declarative transforms.

Every transform is a tf.Transform call, so its statistics come from tf.Transform analyzers over the
whole dataset and the same graph runs at serving time. A user `preprocessing_fn` (``module:function``)
is called with the raw features and the declarative outputs; what it returns is added to (or
replaces) them.
"""

from __future__ import annotations

from typing import Callable

from skewless.config import NUMERIC_TRANSFORMS, JobConfig
from skewless.errors import ConfigError
from skewless.references import import_function
from skewless.pipelines.categorical import with_buckets
from skewless.safe_names import missing_indicator_name, vocabulary_filename
from skewless.pipelines.columns import RawColumn
from skewless.pipelines.images import decode_images
from skewless.pipelines.lists import pad_or_truncate
from skewless.pipelines.missing import fill_missing, missing_indicator
from skewless.pipelines.text import text_features, text_tokens


def build_preprocessing_fn(config: JobConfig, columns: list[RawColumn]) -> Callable:
    """Returns the preprocessing_fn for tf.Transform; it closes over plain data only, so it pickles."""
    by_name = {column.name: column for column in columns}
    # every option by field name, defaults included (model_dump leaves the defaults out)
    features = {name: dict(feature) for name, feature in config.features.items()}
    for name, options in features.items():
        _check_kinds(name, options, by_name)
    label = config.label.model_dump() if config.label else None
    user_fn = config.preprocessing_fn
    nonfinite = config.input.nonfinite

    def preprocessing_fn(inputs):
        import tensorflow as tf
        import tensorflow_transform as tft

        outputs = {}
        filled = {}
        for name, options in features.items():
            if options["transform"] == "cross":
                continue
            filled[name] = fill_missing(inputs[name], by_name[name], options, nonfinite)
            if options["missing_indicator"]:
                outputs[missing_indicator_name(name)] = missing_indicator(inputs[name], nonfinite)
        label_value = None
        if label is not None:
            column = by_name[label["column"]]
            label_value = fill_missing(inputs[column.name], column, {}, nonfinite)
        tokens, vocabularies = _vocabularies(tf, features, filled, label, label_value)
        for name, options in features.items():
            if options["transform"] == "cross":
                crossed = [filled[column] if column in filled else inputs[column] for column in options["columns"]]
                outputs[name] = with_buckets(hashed_cross(crossed, options["hash_buckets"]), options["hash_buckets"])
            else:
                file = vocabulary_filename(name)
                outputs.update(_apply(tf, tft, name, tokens.get(file, filled[name]), options, vocabularies.get(file)))
        if label is not None:
            file = vocabulary_filename(label["column"])
            outputs[label["column"]] = _label(tf, tft, tokens.get(file, label_value), label, vocabularies.get(file))
        if user_fn is not None:
            extra = import_function(user_fn, "preprocessing_fn")(dict(inputs), dict(outputs))
            if not isinstance(extra, dict):
                raise ConfigError(f"preprocessing_fn {user_fn!r} must return a dict of tensors")
            outputs.update(extra)
        return outputs

    return preprocessing_fn


def _vocabularies(tf, features: dict, filled: dict, label: dict | None, label_value) -> tuple[dict, dict]:
    """({vocabulary file name: its string tokens}, {vocabulary file name: deferred path}) of the features'
    and the label's vocabularies, from as few tf.Transform analyzers as the graph allows
    (pipelines/vocabularies.py).

    A vocabulary of values filled by an analyzer (`fill`) can only be counted once that analyzer has
    run, so those share a second analyzer: with the others, all would wait for it.
    """
    from skewless.pipelines.vocabularies import VocabularySpec, shared_vocabularies

    tokens, specs, after_fill = {}, [], set()
    for name, options in features.items():
        if options["transform"] not in ("vocabulary", "text_vocabulary"):
            continue
        file = vocabulary_filename(name)
        if options["transform"] == "text_vocabulary":
            tokens[file] = text_tokens(filled[name], options)
        else:
            tokens[file] = _strings(tf, filled[name])
        specs.append(VocabularySpec(file, options["top_k"], options["frequency_threshold"]))
        if options["fill"] is not None:
            after_fill.add(file)
    if label is not None and label["map"] is None and label["transform"] == "vocabulary":
        file = vocabulary_filename(label["column"])
        tokens[file] = _strings(tf, label_value)
        specs.append(VocabularySpec(file))
    paths = {}
    for waits in (False, True):
        paths.update(shared_vocabularies(tokens, [spec for spec in specs if (spec.name in after_fill) == waits]))
    return tokens, paths


def _strings(tf, value):
    """Values as tf.Transform's vocabularies take them: strings (numbers as their decimal text)."""
    return value if value.dtype == tf.string else _each(tf.strings.as_string, value)


def _check_kinds(name: str, options: dict, by_name: dict[str, RawColumn]) -> None:
    """Transforms that need numbers, strings or hashable values refuse other columns, naming the feature."""
    transform = options["transform"]
    if transform == "cross":
        for column in options["columns"]:
            if by_name[column].kind == "float":
                raise ConfigError(
                    f"features.{name}.columns: {column} holds floats; a cross hashes integers or strings "
                    f"(bucketize it in a preprocessing_fn, or cross a categorical column)"
                )
        return
    kind = by_name[name].kind
    if transform in NUMERIC_TRANSFORMS and kind == "bytes":
        raise ConfigError(f"features.{name}: transform {transform} needs a numeric column, {name} holds strings")
    if transform in ("text_vocabulary", "image") and kind != "bytes":
        raise ConfigError(f"features.{name}: transform {transform} needs a string (bytes) column, {name} is {kind}")


def hashed_cross(values: list, hash_buckets: int):
    """The hashed cross of single-valued columns, as Keras' HashedCrossing computes it: one id per row.

    `tf.sparse.cross_hashed` fingerprints the values of a row together (FarmHash of each, combined in
    order) and takes the result modulo `hash_buckets`.
    """
    import tensorflow as tf
    import tensorflow_transform as tft

    crossed = tf.sparse.cross_hashed([tf.expand_dims(value, 1) for value in values], num_buckets=hash_buckets)
    return tf.squeeze(tft.sparse_tensor_to_dense_with_shape(crossed, [None, 1]), axis=1)


def _apply(tf, tft, name: str, value, options: dict, vocabulary=None) -> dict:
    """The transformed features of one raw column: {name: tensor}, plus `name`_weights for a bag of words.

    A list column arrives as a (batch, n) SparseTensor, a feature list as a (batch, steps, values)
    RaggedTensor; every transform then applies to each value (statistics over all values, as
    tf.Transform 1.21 computes them for sparse and ragged tensors), and `max_length` makes a list's
    result a dense (batch, max_length). `value` is a vocabulary's tokens for the two vocabulary
    transforms, and `vocabulary` the deferred path of their vocabulary file.
    """
    transform = options["transform"]
    if transform == "text_vocabulary":
        return text_features(name, value, vocabulary, options)
    if transform == "image":
        return {name: decode_images(value, options["size"], options["channels"])}
    if transform == "passthrough":
        output = value
    elif transform in NUMERIC_TRANSFORMS:
        output = _numeric(tf, tft, value, options)
    elif transform == "vocabulary":
        output = tft.apply_vocabulary(value, vocabulary, num_oov_buckets=options["num_oov_buckets"])
    else:
        output = with_buckets(tft.hash_strings(_strings(tf, value), options["hash_buckets"]), options["hash_buckets"])
    if options["max_length"] is not None:
        padded = pad_or_truncate(output, options["max_length"], options["pad_value"])
        if transform in ("vocabulary", "hash", "bucketize"):  # the ids' domain, lost by padding
            padded = with_buckets(padded, tft.get_num_buckets_for_transformed_feature(output))
        output = padded
    return {name: output}


def _each(function, value, *args):
    """`function` applied to each value of a dense, sparse or ragged tensor (a list column is sparse, a
    feature list ragged)."""
    import tensorflow as tf

    if isinstance(value, tf.SparseTensor):
        return tf.sparse.map_values(function, value, *args)
    if isinstance(value, tf.RaggedTensor):
        return tf.ragged.map_flat_values(function, value, *args)
    return function(value, *args)


def _numeric(tf, tft, value, options: dict):
    """Clip (when asked), then one tf.Transform scaling."""
    transform = options["transform"]
    value = _each(tf.cast, value, tf.float32)
    if options["clip"] is not None:
        low, high = options["clip"]
        value = _each(tf.clip_by_value, value, low, high)
    if transform == "z_score":
        return tft.scale_to_z_score(value)
    if transform == "log":
        # float32 log1p gives values an ulp apart depending on where a row sits in the batch (SIMD lanes
        # against the scalar tail), so serving one row would skew; float64 rounded to float32 does not
        def log1p(x):
            return tf.cast(tf.math.log1p(tf.cast(x, tf.float64)), tf.float32)

        return tft.scale_to_z_score(_each(log1p, value))
    if transform == "scale_0_1":
        return tft.scale_to_0_1(value)
    if transform == "scale_by_min_max":
        low, high = options["output_range"] or (0.0, 1.0)
        return tft.scale_by_min_max(value, output_min=low, output_max=high)
    return tft.bucketize(value, options["num_buckets"])


def _label(tf, tft, value, label: dict, vocabulary=None):
    """The label's output: `map`ped ids, ids from its vocabulary (`value` is then its tokens), or itself."""
    if label["map"] is not None:
        value = _strings(tf, value)
        keys = tf.constant(list(label["map"]))
        ids = tf.constant(list(label["map"].values()), dtype=tf.int64)
        # -1 marks a label the map does not know; the job quarantines such rows before they get here
        matches = tf.equal(tf.expand_dims(value, 1), tf.expand_dims(keys, 0))
        return tf.where(tf.reduce_any(matches, axis=1), tf.gather(ids, tf.argmax(tf.cast(matches, tf.int64), axis=1)),
                        tf.constant(-1, tf.int64))
    if label["transform"] == "vocabulary":
        return tft.apply_vocabulary(value, vocabulary, num_oov_buckets=0)
    return value
