"""`transform: hash`: ids in [0, hash_buckets) from FarmHash64 of each value's text, or from SipHash with the
config's `key` (`tft.hash_strings`)."""

from __future__ import annotations

from pydantic import Field

from skewless.lazy_imports import lazy_import
from skewless.transforms.base import Option, Transform, not_built_by
from skewless.transforms.categorical import with_buckets
from skewless.transforms.encoded import (
    ENCODINGS,
    OUTPUT_VALUES,
    check_encoding,
    encode,
    list_width,
    native_encoding,
)
from skewless.ops.values import as_strings
from skewless.transforms.numeric import KEY

# on first use: loading a config reads this registry without TensorFlow; a builder loads what it calls
tft = lazy_import("tensorflow_transform")
keras = lazy_import("keras")

HASH_BUCKETS = Option("hash_buckets", int | None, Field(default=None, ge=1), "how many ids (required)")
# the per-key statistics' `key` field (numeric.py), here two numbers: TensorFlow takes them as int64
HASH_KEY = Option(KEY.name, KEY.annotation, KEY.field,
                  "`[k0, k1]`, integers in [0, 2^63): keyed SipHash (`tft.hash_strings(key=...)`), ids an outsider "
                  "without the key cannot predict")

HASH_OUTPUT = Option("output", OUTPUT_VALUES, Field(default="ids"),
                     "`ids`, or the ids encoded as `CategoryEncoding` does: `one_hot` (one value per row), "
                     "`multi_hot` or `count` (lists), float32 `[hash_buckets]`")


class Hash(Transform):
    name = "hash"
    doc = "`tft.hash_strings` of each value's text: int64 ids in [0, hash_buckets)"
    options = (HASH_BUCKETS, HASH_KEY, HASH_OUTPUT)
    required = ("hash_buckets",)
    categories = True
    ids = True
    # a list's output multi_hot / count: densified (RaggedTensorToTensor), summed (Sum), capped at 1 (Minimum)
    native_ops = frozenset({"AsString", "StringToHashBucketFast", "StringToHashBucketStrong", "OneHot",
                            "RaggedTensorToTensor", "Sum", "Minimum"})
    native_layers = ('Keras `Hashing(num_bins)`; with `key`, `Hashing(num_bins, salt=key)` (SipHash); with `output: '
                     'one_hot`, `CategoryEncoding`; a `list`\'s `output: multi_hot | count`, `PresentValues`, '
                     '`Hashing(output_mode=...)`: exactly (float values are refused: Keras hashes `int64(x)`; a '
                     "list's var-len ids are refused: the preprocessor gives dense tensors)")
    native_options = ("hash_buckets", "key", "output", "is_list")
    report_options = ("hash_buckets",)

    def check(self, feature) -> str | None:
        key = feature.key
        if key is not None and (not isinstance(key, list) or len(key) != 2 or not all(0 <= k < 2**63 for k in key)):
            return f"key {key!r} of transform hash must be two integers in [0, 2^63): [k0, k1]"
        return check_encoding(feature, ("ids", *ENCODINGS))

    def row_wise(self, feature) -> bool:
        return True  # a hash of each value; one_hot: 0.0 and 1.0

    def never_negative(self, feature) -> bool:
        return True  # ids in [0, hash_buckets); one_hot: 0.0 and 1.0

    def transform(self, value, options: dict, vocabulary=None, columns=None):
        buckets = options["hash_buckets"]
        ids = with_buckets(tft.hash_strings(as_strings(value), buckets, key=options["key"]), buckets)
        return encode(ids, buckets, options["output"]) if options["output"] in ENCODINGS else ids

    def native(self, plan, graph) -> str | None:
        """Hashing(num_bins) hashes strings, and integers' decimal text, with FarmHash64 as tft.hash_strings does;
        with `salt`, keyed SipHash (`to_hash_bucket_strong`) as tft.hash_strings(key=...) does. A list's
        `PresentValues` (plan_feature's) go through Hashing(output_mode=multi_hot | count)."""
        if len(graph.hash_buckets) != 1 or len(graph.hash_keys) > 1:
            return not_built_by("hash_strings")
        if plan.raw_dtype.is_floating:
            return "hashing float values: Keras Hashing truncates them to integers, tf.Transform hashes their text"
        salt = graph.hash_keys[0] if graph.hash_keys else None
        buckets = graph.hash_buckets[0]
        if not plan.options.get("is_list"):
            plan.layers = [keras.layers.Hashing(num_bins=buckets, salt=salt, name=f"{plan.layer_name}_hashing")]
            return native_encoding(plan, graph)
        # a list: Hashing encodes the ids itself, its bins being the graph's columns
        width, reason = list_width(plan, graph)
        if reason is not None or width != buckets:
            return reason or not_built_by("hash_strings")
        plan.layers = [keras.layers.Hashing(num_bins=buckets, salt=salt, output_mode=plan.options["output"],
                                            name=f"{plan.layer_name}_hashing")]
        return None


TRANSFORM = Hash()
