"""`transform: hash`: ids in [0, hash_buckets) from FarmHash64 of each value's text (`tft.hash_strings`)."""

from __future__ import annotations

from pydantic import Field

from skewless.transforms.base import Option, Transform
from skewless.transforms.values import as_strings

HASH_BUCKETS = Option("hash_buckets", int | None, Field(default=None, ge=1), "how many ids (required)")


class Hash(Transform):
    name = "hash"
    doc = "`tft.hash_strings` of each value's text: int64 ids in [0, hash_buckets)"
    options = (HASH_BUCKETS,)
    required = ("hash_buckets",)
    categories = True
    ids = True
    native_ops = frozenset({"AsString", "StringToHashBucketFast"})
    native_options = ("hash_buckets",)
    report_options = ("hash_buckets",)

    def transform(self, value, options: dict, vocabulary=None):
        import tensorflow_transform as tft

        from skewless.transforms.categorical import with_buckets

        return with_buckets(tft.hash_strings(as_strings(value), options["hash_buckets"]), options["hash_buckets"])

    def native(self, plan, graph) -> str | None:
        """Hashing(num_bins) hashes strings, and integers' decimal text, with FarmHash64 as tft.hash_strings does."""
        import keras

        from skewless.layers.native_plan import not_built_by

        if len(graph.hash_buckets) != 1:
            return not_built_by("hash_strings")
        if plan.raw_dtype.is_floating:
            return "hashing float values: Keras Hashing truncates them to integers, tf.Transform hashes their text"
        plan.layers = [keras.layers.Hashing(num_bins=graph.hash_buckets[0], name=f"{plan.layer_name}_hashing")]
        return None


TRANSFORM = Hash()
