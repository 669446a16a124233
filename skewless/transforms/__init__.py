"""The registry of transform kinds: each one module of this package (see `base.Transform`).

Config validation, the preprocessing_fn, the native Keras preprocessor, the job's run.json, inspect and
the report read `TRANSFORMS`; adding a transform is one new module listed here (docs/design.md, "Adding a
transform"). The order is the config reference's (docs/config.md) and the one error messages list them in.
"""

from __future__ import annotations

import json

from skewless.transforms import (
    bucketize,
    cross,
    datetime_parts,
    hash,
    image,
    log,
    passthrough,
    quantile_clip,
    scale_0_1,
    scale_by_min_max,
    scale_to_gaussian,
    text_vocabulary,
    vocabulary,
    z_score,
)
from skewless.transforms.base import Option, Transform

TRANSFORMS: dict[str, Transform] = {
    module.TRANSFORM.name: module.TRANSFORM
    for module in (z_score, scale_0_1, scale_by_min_max, scale_to_gaussian, log, bucketize, vocabulary, hash,
                   text_vocabulary, image, cross, passthrough, quantile_clip, datetime_parts)
}

# What every feature may set, by the transforms whose `lists` / `missing` / `shapes` say so (after the transform's
# own options in a dumped config).
COMMON_OPTIONS = ("is_list", "sequence", "max_length", "pad_value", "default", "fill", "missing_indicator", "shape",
                  "column")


def transform_options() -> dict[str, Option]:
    """Every transform's own option by field name, in the order the registry first lists each."""
    options: dict[str, Option] = {}
    for transform in TRANSFORMS.values():
        for option in transform.options:
            options.setdefault(option.name, option)
    return options


def applies_to(option: str) -> tuple[str, ...]:
    """The transforms that take `option` (a field name), in registry order."""
    if option in ("is_list", "sequence"):
        return tuple(name for name, transform in TRANSFORMS.items() if transform.lists)
    if option == "shape":
        return tuple(name for name, transform in TRANSFORMS.items() if transform.shapes)
    if option == "column":  # a new output (cross) reads its `columns`, none of its own
        return tuple(name for name, transform in TRANSFORMS.items() if not transform.new_output)
    if option in COMMON_OPTIONS:
        return tuple(name for name, transform in TRANSFORMS.items() if transform.missing)
    return tuple(name for name, transform in TRANSFORMS.items() if option in {o.name for o in transform.options})


def reference_table() -> str:
    """The config reference's table of transforms (docs/config.md, Markdown): what each computes, its options,
    which common options it takes, whether native Keras layers reproduce it exactly."""
    rows = [("transform", "what it computes", "its options (default)", "common options", "native Keras layers")]
    for transform in TRANSFORMS.values():
        options = "<br>".join(f"`{option.key}` ({_default(option)}): {option.doc}" for option in transform.options)
        common = ("all" if transform.lists and transform.missing and transform.shapes else
                  "all but `shape`" if transform.lists and transform.missing else
                  "all but `list`, `sequence`, `shape`" if transform.missing else "none")
        # native layers for some outputs only (text_vocabulary: ids with max_length) say why the others have none
        native = ("no" if transform.native_ops is None else
                  "exact for some outputs" if transform.native_reason else "exact")
        rows.append((f"`{transform.name}`", transform.doc, options or "-", common, native))
    lines = ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    lines.insert(1, "|---" * len(rows[0]) + "|")
    return "\n".join(lines) + "\n"


def portable_table() -> str:
    """docs/portable.md's table (Markdown): per transform, the native Keras layers that reproduce it and how
    exactly, or why it is refused, and the options the native preprocessor refuses."""
    rows = [("transform", "native Keras layers (TF and JAX)", "options refused")]
    # fill, default, missing_indicator: FillMissing
    common = ("is_list", "sequence", "max_length", "pad_value", "shape")
    for transform in TRANSFORMS.values():
        if transform.native_ops is None:
            rows.append((f"`{transform.name}`", f"refused: {transform.native_reason}", "-"))
            continue
        own = [option.key for option in transform.options if option.name not in transform.native_options]
        shared = [{"is_list": "list"}.get(option, option) for option in common
                  if (transform.lists or option not in ("is_list", "sequence"))
                  and (transform.shapes or option != "shape")
                  and option not in transform.native_options]
        refused = ", ".join(f"`{key}`" for key in own + (shared if transform.missing or transform.lists else []))
        rows.append((f"`{transform.name}`", transform.native_layers, refused or "-"))
    lines = ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    lines.insert(1, "|---" * len(rows[0]) + "|")
    return "\n".join(lines) + "\n"


def _default(option: Option) -> str:
    value = option.field.get_default(call_default_factory=True)
    return "none" if value is None else f"`{json.dumps(value)}`"
