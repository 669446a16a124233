"""Raw rows that probe a transform where it is easiest to get wrong, drawn from its analyzer outputs.

Numbers sit on and one float32 step around each mean, min, max and bucket boundary, plus random
values across (and beyond) the observed range, zeros of both signs, and the values the graph reads as
missing where a feature may be missing: NaN (infinities too under ``input.nonfinite: missing``). Categories
cover every vocabulary entry, then mix known entries with unseen ones (which land in the OOV buckets) and,
for an optional feature, the empty string and the NA tokens. Optional features are missing in some rows; a list column's rows
are lists of 0..4 of these values, some with a value twice. Values the graph
refuses (docs/values.md: NaN in a required feature, ±inf unless they are missing values, empty text in a
required feature, text that is no date) are never drawn: the graph fails the whole batch on them, as serving must.
A drawn number outside a domain the job quarantines by (a schema's, `log`'s -1) is refused too: the check leaves
such rows out (`keras_preprocessor._served`).
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from skewless.transforms import TRANSFORMS

INT32_LIMIT = 2**31 - 1


def probe_rows(raw_spec: dict, plans: dict, count: int, seed: int = 0) -> list[dict]:
    """`count` raw rows (dicts by raw feature, None = missing) for every feature of `raw_spec`.

    `plans` maps feature names to their `FeaturePlan` (its ``probe`` values guide the draw).
    """
    rng = np.random.default_rng(seed)
    columns = {}
    for name, spec in sorted(raw_spec.items()):
        probe = plans[name].probe if name in plans else {}
        if name in plans and plans[name].transform in TRANSFORMS and TRANSFORMS[plans[name].transform].image:
            # the graph decodes these bytes: any other probe than a real image fails the whole batch
            values = [tf.io.encode_png(tf.zeros([1, 1, 1], tf.uint8)).numpy()] * count
        elif (texts := _probe_texts(plans.get(name), spec, count, rng)) is not None:
            # the graph refuses text its transform cannot read (as the job quarantines it): any other probe fails
            # the batch
            values = texts
        else:
            optional = isinstance(spec, (tf.io.VarLenFeature, tf.io.RaggedFeature))
            values = _column(name, spec.dtype, probe, count, rng, optional,
                             infinite_missing=name in plans and _infinities_are_missing(plans[name]),
                             tokens=_missing_tokens(plans[name]) if name in plans else [])
        if isinstance(spec, tf.io.RaggedFeature):  # a feature list: here one step of one value
            values = [[[value]] for value in values]
        elif isinstance(spec, tf.io.FixedLenFeature) and list(spec.shape):  # a fixed shape: each value in all of it
            values = [[value] * int(np.prod(spec.shape)) for value in values]
        elif name in plans and plans[name].options.get("is_list"):
            values = _lists(values, rng)
        if isinstance(spec, (tf.io.VarLenFeature, tf.io.RaggedFeature)):
            missing = rng.random(count) < 0.15
            values = [None if gone else value for value, gone in zip(values, missing)]
        columns[name] = values
    return [{name: values[index] for name, values in columns.items()} for index in range(count)]


def _infinities_are_missing(plan) -> bool:
    """Whether the feature's graph fills ±inf as missing (``input.nonfinite: missing``: its FillMissing says so)."""
    return any(getattr(layer, "nonfinite", None) == "missing" for layer in plan.layers or [])


def _missing_tokens(plan) -> list[str]:
    """The NA tokens (``input.na_values``) the feature's graph reads as missing, from its FillMissing or PresentValues."""
    return [token for layer in plan.layers or [] for token in getattr(layer, "missing_tokens", [])]


def _column(name: str, dtype: tf.DType, probe: dict, count: int, rng, optional: bool = True,
            infinite_missing: bool = False, tokens=()) -> list:
    if dtype == tf.string:
        known = [token.encode() if isinstance(token, str) else token for token in probe.get("tokens", [])]
        # missing text where it may be missing: empty, and each NA token bare and with whitespace around it
        missing = [b"", *(form.encode() for token in tokens for form in (token, f" {token} "))] if optional else []
        unseen = [f"skewless-probe-{name}-{i}".encode() for i in range(max(count // 4, 1))] + missing
        return _mix(known, unseen, count, rng)
    if "tokens" in probe:
        unseen = rng.integers(-1000, 1000, size=max(count // 4, 1)).tolist()
        return _mix(list(probe["tokens"]), unseen, count, rng)
    points = np.asarray(probe.get("points", [0.0]), dtype=np.float64)
    scale = float(probe.get("scale", 1.0))
    if dtype.is_integer:
        values = _integers(points, scale, count, rng)
        lowest = int(np.floor(probe["above"])) + 1 if "above" in probe else None
    else:
        special = [0.0, -0.0] + ([np.nan] if optional else []) + ([np.inf, -np.inf] if optional and infinite_missing
                                                                  else [])
        values = _floats(points, scale, count, rng, np.array(special, dtype=np.float32))
        lowest = float(np.nextafter(np.float32(probe["above"]), np.float32(np.inf))) if "above" in probe else None
    # values the graph refuses (`log` at or below -1: the job quarantines them) become the lowest it takes, an edge
    return values if lowest is None else [lowest if value <= probe["above"] else value for value in values]


def _probe_texts(plan, spec, count: int, rng) -> list[bytes] | None:
    """The texts a text feature's transform can read (`Transform.probe_texts`), or None: any text will do."""
    transform = TRANSFORMS.get(plan.transform) if plan is not None and spec.dtype == tf.string else None
    return None if transform is None else transform.probe_texts(count, rng)


def _lists(values: list, rng, longest: int = 4) -> list[list]:
    """`values` dealt in turn into one list per value of 0..`longest` items (each value in some list), a third of
    them with their first item again (a count of 2 is not a multi-hot's 1)."""
    lists, position = [], 0
    for _ in values:
        items = [values[(position + offset) % len(values)] for offset in range(rng.integers(longest + 1))]
        position += len(items)
        if items and rng.random() < 1 / 3:
            items.append(items[0])
        lists.append(items)
    return lists


def _mix(known: list, unseen: list, count: int, rng) -> list:
    """Every known value once (as far as `count` allows), then 3 known : 1 unseen at random."""
    values = list(known[:count])
    while len(values) < count:
        pool = known if known and rng.random() < 0.75 else unseen
        values.append(pool[rng.integers(len(pool))])
    rng.shuffle(values)
    return values


def _floats(points: np.ndarray, scale: float, count: int, rng, special: np.ndarray) -> list:
    edges = points.astype(np.float32)
    near = np.concatenate([edges, np.nextafter(edges, np.float32(np.inf)), np.nextafter(edges, np.float32(-np.inf))])
    spread = np.concatenate([
        rng.uniform(points.min() - 0.25 * scale, points.max() + 0.25 * scale, size=count),
        rng.normal(points.mean(), 2 * scale, size=count),
    ]).astype(np.float32)
    return [float(value) for value in _edges_then_random(np.concatenate([special, near]), spread, count, rng)]


def _integers(points: np.ndarray, scale: float, count: int, rng) -> list:
    near = np.concatenate([[0, -1, 1]] + [np.floor(points) + offset for offset in (-1, 0, 1, 2)])
    spread = np.rint(np.concatenate([
        rng.uniform(points.min() - 0.25 * scale, points.max() + 0.25 * scale, size=count),
        rng.normal(points.mean(), 2 * scale, size=count),
    ]))
    # int32 range: JAX (without x64) holds integers as int32
    near, spread = (np.clip(values, -INT32_LIMIT, INT32_LIMIT).astype(np.int64) for values in (near, spread))
    return [int(value) for value in _edges_then_random(near, spread, count, rng)]


def _edges_then_random(edges: np.ndarray, spread: np.ndarray, count: int, rng) -> np.ndarray:
    """All edge cases (as far as `count` allows), the rest drawn from `spread`, shuffled together."""
    head = edges[:count]
    values = np.concatenate([head, rng.choice(spread, size=count - len(head))])
    rng.shuffle(values)
    return values
