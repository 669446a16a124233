"""`transform: cross`: a new output, the hashed cross of two or more raw int or string columns."""

from __future__ import annotations

from pydantic import Field

from skewless.errors import ConfigError
from skewless.lazy_imports import lazy_import
from skewless.transforms.base import Option, Transform, not_built_by
from skewless.transforms.categorical import with_buckets
from skewless.transforms.hash import HASH_BUCKETS

# on first use: loading a config reads this registry without TensorFlow; a builder loads what it calls
tf = lazy_import("tensorflow")
tft = lazy_import("tensorflow_transform")
keras = lazy_import("keras")


class Cross(Transform):
    name = "cross"
    doc = "a new output: `tf.sparse.cross_hashed` of `columns`, ids in [0, hash_buckets) as Keras' HashedCrossing"
    options = (HASH_BUCKETS, Option("columns", list[str] | None, Field(default=None),
                                    "the raw columns (integers or strings) whose values are crossed"))
    required = ("hash_buckets",)
    lists = False
    missing = False
    new_output = True
    reads_as = ("cross", "cross")
    native_ops = frozenset({"SparseCross"})
    native_layers = 'Keras `HashedCrossing(num_bins)` on the columns, each filled as its own feature fills it: exactly'
    native_options = ("hash_buckets", "columns")

    def check(self, feature) -> str | None:
        if feature.columns is None or len(feature.columns) < 2:
            return "transform cross needs columns: the list of (at least two) raw columns it crosses"
        if len(set(feature.columns)) != len(feature.columns):
            return "cross columns must be distinct"
        return None

    def check_columns(self, name: str, feature, kinds: dict[str, str]) -> None:
        for column in feature.columns:
            if kinds[column] == "float":
                raise ConfigError(
                    f"features.{name}.columns: {column} holds floats; a cross hashes integers or strings "
                    f"(bucketize it in a preprocessing_fn, or cross a categorical column)"
                )

    def reads(self, feature) -> list[str]:
        return list(feature.columns)

    def build(self, name: str, value, options: dict, vocabulary=None, columns=None) -> dict:
        """One id per row from the crossed `columns`' (filled) values: `tf.sparse.cross_hashed` fingerprints
        the values of a row together (FarmHash of each, combined in order) modulo hash_buckets."""
        buckets = options["hash_buckets"]
        crossed = tf.sparse.cross_hashed([tf.expand_dims(columns[column], 1) for column in options["columns"]],
                                         num_buckets=buckets)
        return {name: with_buckets(tf.squeeze(tft.sparse_tensor_to_dense_with_shape(crossed, [None, 1]), axis=1),
                                   buckets)}

    def native(self, plan, graph) -> str | None:
        """Keras' `HashedCrossing` runs the same `tf.sparse.cross_hashed` on the (filled) columns."""

        if "SparseCross" not in graph.op_types:
            return not_built_by("cross_hashed")
        plan.layers = [keras.layers.HashedCrossing(num_bins=plan.options["hash_buckets"], output_mode="int",
                                                   name=f"{plan.layer_name}_hashed_crossing")]
        return None

    def run_fields(self, name: str, feature, graph) -> dict:
        return {"columns": feature.columns, "hash_buckets": feature.hash_buckets}


TRANSFORM = Cross()
