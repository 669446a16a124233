"""`transform: text_vocabulary`: text to token ids, bags of words or TF-IDF (skewless/transforms/text.py).

With `list: true` the column is a list of tokens already, e.g. integer item ids: its values (integers by their
decimal text) are the tokens, as tft.tfidf and a bag of words take ids, with no lowercasing, stripping,
splitting or n-grams.
"""

from __future__ import annotations

from pydantic import Field

from skewless.errors import ConfigError
from skewless.lazy_imports import lazy_import
from skewless.ops.text import text_tokens
from skewless.ops.values import as_strings
from skewless.transforms.base import Option, Transform
from skewless.transforms.encoded import OUTPUT_VALUES, VAR_LEN_OUTPUT, check_encoding
from skewless.transforms.text import text_features
from skewless.transforms.vocabulary import (FREQUENCY_THRESHOLD, NUM_OOV_BUCKETS, TOP_K, native_lookup,
                                            vocabulary_fields)

# on first use: loading a config reads this registry without TensorFlow; a builder loads what it calls
pad_or_truncate_layers = lazy_import("skewless.layers.pad_or_truncate")
text_token_layers = lazy_import("skewless.layers.text_tokens")
vocabulary_first_layers = lazy_import("skewless.layers.vocabulary_first")

# the default strip_regex: ASCII punctuation (RE2 syntax, as tf.strings.regex_replace takes it)
TEXT_STRIP_REGEX = "[[:punct:]]"

TEXT_OPTIONS = (
    Option("lowercase", bool, Field(default=True), "lowercase the text first"),
    Option("strip_regex", str | None, Field(default=TEXT_STRIP_REGEX),
           "remove what this RE2 pattern matches (default ASCII punctuation; `null` keeps it)"),
    Option("ngram_range", list[int], Field(default_factory=lambda: [1, 1], min_length=2, max_length=2),
           "`[lo, hi]` n-grams of the words (`tft.ngrams`)"),
    Option("ngram_separator", str, Field(default=" "), "joins the words of an n-gram"),
    Option("output", OUTPUT_VALUES, Field(default="ids"),
           "`ids`, `bag_of_words` or `tfidf` (the last two add `<name>_weights`)"),
    Option("smooth", bool, Field(default=True),
           "TF-IDF's inverse document frequency `1 + log((n + 1) / (df + 1))`; `false`: `1 + log(n / df)` "
           "(`tft.tfidf(smooth=...)`)"),
)


class TextVocabulary(Transform):
    name = "text_vocabulary"
    doc = "lowercase, strip, split on whitespace, n-grams, then a vocabulary: token ids, bag of words or TF-IDF"
    options = (TOP_K, FREQUENCY_THRESHOLD, NUM_OOV_BUCKETS, *TEXT_OPTIONS)
    needs = "string"
    # the graph's tokenizer, n-grams, lookup and max_length padding, and the bags' counting and TF-IDF (which
    # `native` refuses by their output, not by their ops)
    native_ops = frozenset({
        "StringLower", "StaticRegexReplace", "StringSplitV2", "RaggedRange", "RaggedTensorToSparse",
        "RaggedTensorToTensor", "StringJoin", "Cumprod", "Cumsum", "Prod", "SegmentSum", "Fill", "Tile", "Range",
        "Shape", "Slice", "Split", "Size", "ConcatV2", "Greater", "Max", "Maximum", "Minimum", "Mul", "Sub", "AddV2",
        "OnesLike", "DenseBincount", "AsString", "LookupTableFindV2", "LookupTableSizeV2", "NotEqual",
        "StringToHashBucketFast", "FloorMod", "SparseCountSparseOutput", "SparseReduceSum", "SparseReduceSumSparse",
        "Log", "RealDiv"})
    native_options = ("top_k", "frequency_threshold", "num_oov_buckets", "lowercase", "strip_regex", "ngram_range",
                      "ngram_separator", "output", "smooth", "is_list", "max_length", "pad_value")
    native_layers = ("`TextTokens` (the graph's own tokenizer: Keras' TextVectorization lowercases ASCII only), "
                     "Keras `StringLookup` (a list's integers by their text, as the graph looks them up), "
                     "`VocabularyFirst`, "
                     "`PadOrTruncate`: output `ids` with `max_length`, exactly; refused: `ids` without `max_length` "
                     "(a var-len list per row) and `bag_of_words` / `tfidf`, whose ids and weights are var-len lists "
                     "(Keras' `StringLookup(output_mode=\"count\" | \"tf_idf\")` gives dense columns per vocabulary "
                     "entry instead, and its TF-IDF, count × idf, lacks tft.tfidf's division by the text's length)")
    # why a bag of words or TF-IDF (both outputs, the weights too) has no native layers
    native_reason = ("output bag_of_words and tfidf write var-len ids and weights, which the native preprocessor "
                     "does not give (one dense tensor per feature); Keras' StringLookup(output_mode=\"count\" | "
                     "\"tf_idf\") gives dense columns per vocabulary entry instead, and its TF-IDF (count × idf) "
                     "lacks tft.tfidf's division by the text's length")

    def check(self, feature) -> str | None:
        low, high = feature.ngram_range
        if not 1 <= low <= high:
            return f"ngram_range [{low}, {high}] needs 1 <= low <= high"
        if not feature.smooth and feature.output != "tfidf":
            return "smooth applies to output: tfidf"
        if feature.sequence:
            return "text_vocabulary takes texts, or lists of tokens (list: true), not feature lists (sequence: true)"
        if feature.is_list and feature.max_length is not None and feature.output != "ids":
            return "max_length pads ids (output: ids), not a bag of words or TF-IDF"
        if feature.is_list:
            text_options = [option.key for option in TEXT_OPTIONS[:4]
                            if getattr(feature, option.name) != option.field.get_default(call_default_factory=True)]
            if text_options:
                return (f"{', '.join(text_options)} apply to texts; with list: true the list's values are the "
                        "tokens (no lowercasing, stripping, splitting or n-grams)")
        return check_encoding(feature, ("ids", "bag_of_words", "tfidf"))

    def check_columns(self, name: str, feature, kinds: dict[str, str]) -> None:
        column = feature.raw_column(name)
        if feature.is_list and kinds[column] == "int":  # integer ids are tokens by their decimal text
            return
        if kinds[column] != "bytes":
            raise ConfigError(f"features.{name}: transform {self.name} needs a string (bytes) column, or a list "
                              f"of integer ids (list: true), {column} is {kinds[column]}")

    def row_wise(self, feature) -> bool:
        # the row's tokens looked up and counted; tfidf's float log of each token's document frequency may round
        # by the token's place in the batch
        return feature.output != "tfidf"

    def pads_single_values(self, feature) -> bool:
        return feature.output == "ids"

    def extra_outputs(self, name: str, feature) -> list[str]:
        return [] if feature.output == "ids" else [f"{name}_weights"]

    def vocabulary_tokens(self, value, options: dict):
        if options["is_list"]:  # a (batch, n) SparseTensor of tokens already
            return as_strings(value)
        return text_tokens(value, options)

    def build(self, name: str, value, options: dict, vocabulary=None, columns=None) -> dict:
        return text_features(name, value, vocabulary, options)

    def run_fields(self, name: str, feature, graph) -> dict:
        return vocabulary_fields(name, feature, graph)

    def native(self, plan, graph) -> str | None:
        """Output ids with max_length: the graph's tokens (`TextTokens`, after a list's `PresentValues` from
        plan_feature), `native_lookup`, `VocabularyFirst`, `PadOrTruncate`. Other outputs are var-len."""
        options = plan.options
        if options["output"] != "ids":
            return self.native_reason
        if options["max_length"] is None:
            return f"output ids without max_length is a var-len list per row, {VAR_LEN_OUTPUT}: set max_length"
        # the tokens are text (a list's integers too): a StringLookup on the graph's table of text keys
        found = native_lookup(plan, graph, text_keys=True)
        if isinstance(found, str):
            return found
        lookup, size, num_oov, default = found
        name = plan.layer_name
        tokens = text_token_layers.TextTokens(options["lowercase"], options["strip_regex"], options["ngram_range"],
                            options["ngram_separator"], is_list=options["is_list"], name=f"{name}_tokens")
        plan.layers = [tokens, lookup,
                       vocabulary_first_layers.VocabularyFirst(size, num_oov, default, name=f"{name}_vocabulary_first"),
                       pad_or_truncate_layers.PadOrTruncate(options["max_length"], options["pad_value"],
                                                            name=f"{name}_pad_or_truncate")]
        return None


TRANSFORM = TextVocabulary()
