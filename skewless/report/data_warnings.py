"""What a data scientist should look at before training, from the run summary and config: sentinel values
counted as ordinary data, constant columns, quantile buckets that stay empty, vocabularies sized against the
feature's cardinality, and the encoding the rule of skewless.encoding_advice gives each categorical feature.
"""

from __future__ import annotations

import math

from skewless.encoding_advice import EncodingAdvice, advise

# Placeholders that files use for "unknown"; compared after stripping spaces, case-insensitively.
SENTINEL_STRINGS = {"?", "", "-", "na", "n/a", "nan", "null", "none", "unknown", "missing", "-1", "999", "9999",
                    "99999"}
SENTINEL_NUMBERS = (-1.0, 999.0, 9999.0, 99999.0, 999999.0)
# A vocabulary sending more than this share of the rows to OOV buckets drops values the model may need.
OOV_WARNING_SHARE = 0.01


def sentinel_values(feature: dict) -> list[tuple[str, int]]:
    """The feature's top values that look like placeholders for "unknown", with their counts."""
    return [(str(value), int(count)) for value, count in feature.get("top_values", [])
            if str(value).strip().lower() in SENTINEL_STRINGS]


def constant_warning(feature: dict) -> str | None:
    """The sentence of a column whose rows with a value all hold one value (run.json's `constant`), else None."""
    if not feature.get("constant"):
        return None
    top = feature.get("top_values") or []
    value = top[0][0] if top else feature.get("min")
    held = "one value" if value is None else f"one value, {value!r}"
    missing = f" ({feature['missing']:,} rows have none)" if feature.get("missing") else ""
    return f"constant: every row with a value holds {held}{missing}; it tells a model nothing as it is"


def date_range_text(feature: dict) -> str | None:
    """A datetime column's date range as "first .. last (zone)", else None."""
    dates = feature.get("date_range")
    return None if dates is None else f"{dates['min']} .. {dates['max']} ({dates['timezone']})"


def sentinel_extreme(feature: dict) -> tuple[str, float] | None:
    """("max" or "min", value) when a numeric feature's range ends at a placeholder number (-1, 999, 9999...).
    The statistics cannot tell how many rows hold it (their histograms are sketched), so this is a question to
    ask of the data, not a count."""
    for end in ("max", "min"):
        if feature.get(end) in SENTINEL_NUMBERS:
            return end, feature[end]
    return None


def bucket_boundaries(quantiles: list[float], buckets: int) -> list[float]:
    """The `buckets - 1` inner boundaries of equal-frequency buckets, interpolated in the run's quantiles
    (their first and last entries are min and max): an estimate of what tft.bucketize computed."""
    steps = len(quantiles) - 1
    boundaries = []
    for i in range(1, buckets):
        position = i * steps / buckets
        low = math.floor(position)
        high = min(low + 1, steps)
        boundaries.append(quantiles[low] + (quantiles[high] - quantiles[low]) * (position - low))
    return boundaries


def empty_buckets(boundaries: list[float], integers: bool) -> list[int]:
    """Ids of the buckets [b_i, b_i+1) no value can fall in: repeated boundaries, or for an integer feature
    boundaries with no integer between them (tft.bucketize counts the boundaries <= x)."""
    empty = []
    for bucket, (low, high) in enumerate(zip(boundaries[:-1], boundaries[1:]), 1):
        if high <= low or integers and math.ceil(low) >= high:
            empty.append(bucket)
    return empty


def categorical_ids(feature: dict, options: dict) -> int | None:
    """How many ids the feature's transform gives (vocabulary + OOV buckets, hash buckets, buckets)."""
    if "vocabulary_size" in feature:
        return feature["vocabulary_size"] + (feature.get("num_oov_buckets") or 0)
    for option in ("hash_buckets", "num_buckets"):
        if options.get(option):
            return int(options[option])
    if options.get("boundaries"):  # fixed bucket boundaries: one bucket more than them
        return len(options["boundaries"]) + 1
    return None


def encoding_advice(feature: dict, options: dict) -> EncodingAdvice | None:
    ids = categorical_ids(feature, options)
    return advise(ids) if ids else None


def cardinality_warnings(feature: dict, options: dict, oov_share: float | None) -> list[str]:
    """A vocabulary too small for the values (top_k dropping rows to OOV), or an id space sized for an
    embedding over values one-hot would encode."""
    distinct, ids = feature.get("distinct"), categorical_ids(feature, options)
    if not distinct or not ids:
        return []
    warnings = []
    size = feature.get("vocabulary_size")
    if size is not None and distinct > size and oov_share is not None and oov_share > OOV_WARNING_SHARE:
        warnings.append(f"the vocabulary keeps {size:,} of {distinct:,} distinct values: {oov_share:.2%} of the "
                        f"rows become out-of-vocabulary ids (raise top_k, or embed a larger vocabulary)")
    if advise(ids).encoding != advise(distinct).encoding and ids > distinct:
        warnings.append(f"{ids:,} ids for {distinct:,} distinct values: an embedding-sized id space where a "
                        f"vocabulary of the values would be one-hot")
    return warnings
