"""The job config: a YAML file (or a dict) validated into a `JobConfig`.

Errors name the file, the line and the key path, e.g.
``configs/census.yaml:14: features.age.transform: unknown value 'zscore' (expected one of ...)``.
"""

from __future__ import annotations

import copy
import difflib
import math
import os
import re
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    WrapSerializer,
    create_model,
    field_validator,
    model_serializer,
    model_validator,
)

from skewless.errors import ConfigError
from skewless.input_formats import INPUT_FORMATS, formats_taking, option_defaults
from skewless.input_options import InputOptions, absolute_path
from skewless.output_formats import DEFAULT_FORMAT, OUTPUT_FORMATS
from skewless.safe_names import missing_indicator_name
from skewless.terminal_text import printable
from skewless.transforms import COMMON_OPTIONS, TRANSFORMS, applies_to, transform_options

# What a config may cost, checked on the text before anything builds it (docs/errors.md): a real config is a
# few KB and a few hundred values, so these bounds leave room while a hostile one is refused in milliseconds.
# The values count each alias as a copy of what it names, which is what every later step would walk:
# nine levels of ten aliases ("billion laughs") are 10**9 values in 200 bytes.
MAX_CONFIG_BYTES = 1 << 20
MAX_CONFIG_VALUES = 100_000
MAX_CONFIG_DEPTH = 64
# libyaml's parser where PyYAML was built with it: the same events and marks, 20x faster than the pure-Python one
# (100,000 values: 0.15 s against 2.5 s), so a refusal at the bound is quick too
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# what a format's `needs` (skewless/input_formats.py) asks for, said in the error that it is missing
_NEED_HINTS = {
    "paths": " (a list of files or globs)",
    "header|columns": " (without a header line, the column names in order)",
    "generator": ": 'module.path:function'",
}


def _own_options_only(raw: Any) -> Any:
    """The `input` mapping with only the keys its format takes (the union picks the format's model by `format`).

    Another format's key is refused, naming the formats that take it, unless it holds that format's default:
    a run's config.yaml lists every format's keys (`_every_format_key`), and runs written before each format
    declared its own options said `header: false` of Parquet input too. Unknown keys stay, for the model to
    refuse with the nearest known key."""
    if not isinstance(raw, dict) or not isinstance(raw.get("format"), str) or raw["format"] not in INPUT_FORMATS:
        return raw  # a model already, or the union names the missing or unknown format (`_describe`)
    name = raw["format"]
    taken = INPUT_FORMATS[name].options.model_fields
    defaults = option_defaults()
    kept = {}
    for key, value in raw.items():
        if key in taken or key not in defaults:
            kept[key] = value
        elif value != defaults[key]:
            shown = str(value).lower() if isinstance(value, bool) else value
            raise ValueError(f"input.{key} {shown} needs input.format {' or '.join(formats_taking(key))}, not {name}")
    return kept


def _has_what_it_needs(options: InputOptions) -> InputOptions:
    for need in INPUT_FORMATS[options.format].needs:
        keys = need.split("|")
        if not any(getattr(options, key) for key in keys):
            wanted = " or ".join(f"input.{key}" for key in keys)
            raise ValueError(f"input.format {options.format} needs {wanted}{_NEED_HINTS.get(need, '')}")
    return options


# the order of the `input` keys in a dumped config before each format declared its own options (one flat model)
_DUMPED_ORDER = ("format", "paths", "record", "header", "columns", "delimiter", "skip_initial_space", "multiline",
                 "list_delimiter", "nonfinite", "na_values", "types", "max_line_bytes", "keep_parsed", "url", "query",
                 "table", "order_by", "rows", "seed", "generator", "args")


def _every_format_key(options: InputOptions, handler) -> dict:
    """The input as a run's config.yaml has always listed it: every format's keys, the others' at their defaults,
    in `_DUMPED_ORDER` (so that the same config writes the same bytes), then keys declared since."""
    dumped = handler(options)
    every = {**dumped, **{key: default for key, default in option_defaults().items() if key not in dumped}}
    order = [*_DUMPED_ORDER, *(key for key in every if key not in _DUMPED_ORDER)]
    return {key: every[key] for key in order if key in every}


# The `input` section: one model per format (its options, skewless/input_formats.py), chosen by `format`.
InputConfig = Annotated[
    Union[tuple(entry.options for entry in INPUT_FORMATS.values())],
    Field(discriminator="format"),
    BeforeValidator(_own_options_only),
    AfterValidator(_has_what_it_needs),
    WrapSerializer(_every_format_key),
]
_INPUT = TypeAdapter(InputConfig)


def parse_input(**options: Any) -> InputOptions:
    """The `input` section from its keys, validated as a config's (ValidationError naming what is wrong)."""
    return _INPUT.validate_python(options)


# The options every transform kind shares (whether they apply: the kind's `lists` and `missing`).
_COMMON_FIELDS = {
    # a list column: 0..n values per row (CSV: split by input.list_delimiter)
    "is_list": (bool, Field(default=False, alias="list")),
    # a feature list of tf.train.SequenceExample input: a list of steps per row, each step 0..n values
    "sequence": (bool, False),
    # lists and text ids: pad (with pad_value) or truncate to a fixed length
    "max_length": (int | None, Field(default=None, ge=1)),
    "pad_value": (Union[float, int, None], None),
    # Missing values. A feature with `default` or `fill` may be missing in a row; one without requires a value.
    "default": (Union[float, int, str, None], None),
    "fill": (Literal["mean", "median", "most_frequent"] | None, None),
    "missing_indicator": (bool, False),
    # a numeric column of a fixed shape: exactly d0 * d1 * ... values per row, row-major (CSV: split by
    # input.list_delimiter); the graph sees (batch, d0, d1, ...)
    "shape": (list[int] | None, Field(default=None, min_length=1)),
    # the raw column it transforms when that is not its name: several features of one column, read once
    "column": (str | None, Field(default=None, min_length=1)),
}
# the most values a fixed shape may hold a row: a typo like [100000, 100000] is refused in the config, before any
# row is read, rather than found when a row of ten billion values is (each row's values are one list in memory)
MAX_SHAPE_VALUES = 1 << 20


class _Feature(_Strict):
    """What FeatureConfig checks and how it dumps; its fields come from the transform registry."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    @property
    def transform_kind(self):
        """The registry's description of this feature's transform (`skewless.transforms.base.Transform`)."""
        return TRANSFORMS[self.transform]

    @model_validator(mode="after")
    def _check(self) -> "FeatureConfig":
        for option in sorted(self._changed()):
            allowed = applies_to(option)
            if self.transform not in allowed:
                key = self.model_fields[option].alias or option
                raise ValueError(f"{key} only applies to transform {' or '.join(allowed)}, not {self.transform}")
        problem = self.transform_kind.validate(self)
        if problem is not None:
            raise ValueError(problem)
        if self.default is not None and self.fill is not None:
            raise ValueError("give either default or fill, not both")
        if self.missing_indicator and self.default is None and self.fill is None:
            raise ValueError("missing_indicator needs default or fill (a column without them is never missing)")
        if self.is_list and (self.default is not None or self.fill is not None):
            raise ValueError("a list column may be empty; default and fill apply to single values only")
        if self.sequence and (self.is_list or self.default is not None or self.fill is not None
                              or self.max_length is not None):
            raise ValueError("a feature list (sequence: true) is already a list of steps of 0..n values; "
                             "list, default, fill and max_length do not apply to it")
        if self.max_length is not None and not self.is_list and not self.transform_kind.pads_single_values(self):
            raise ValueError("max_length applies to list columns (list: true) and text_vocabulary ids")
        if self.pad_value is not None and self.max_length is None:
            raise ValueError("pad_value needs max_length")
        if self.shape is not None:
            self._check_shape()
        return self

    def _check_shape(self) -> None:
        """Refuses a `shape` with a dimension below 1, or with an option for values that may be missing or vary
        in number (a fixed shape holds exactly its values in every row)."""
        if any(size < 1 for size in self.shape):
            raise ValueError(f"shape {self.shape}: every dimension must be at least 1")
        if math.prod(self.shape) > MAX_SHAPE_VALUES:
            raise ValueError(f"shape {self.shape} holds {math.prod(self.shape):,} values a row; at most "
                             f"{MAX_SHAPE_VALUES:,} (each row's values are one list in memory and one tf.Example)")
        others = {"list": self.is_list, "sequence": self.sequence, "max_length": self.max_length is not None,
                  "default": self.default is not None, "fill": self.fill is not None,
                  "missing_indicator": self.missing_indicator}
        given = [key for key, value in others.items() if value]
        if given:
            verb = "does" if len(given) == 1 else "do"
            raise ValueError(f"shape {self.shape} holds exactly {math.prod(self.shape)} values in every row (a row "
                             f"missing one goes to quarantine); {', '.join(given)} {verb} not apply to it")

    def _changed(self) -> set[str]:
        """The options whose value is not their default (what the config set, as a dumped config shows it)."""
        return {name for name, field in type(self).model_fields.items()
                if name != "transform" and getattr(self, name) != field.get_default(call_default_factory=True)}

    @model_serializer(mode="wrap")
    def _dump_changed(self, handler):
        # a resolved config.yaml lists what each feature sets, not the twenty defaults of other transforms:
        # the transform, its own options in the order it declares them, then the common ones
        dumped = handler(self)
        keep = {"transform"} | self._changed()
        order = ["transform", *(option.name for option in self.transform_kind.options), *COMMON_OPTIONS]
        fields = type(self).model_fields
        return {key: dumped[key] for name in order if name in keep
                for key in dict.fromkeys((name, fields[name].alias)) if key in dumped}

    def raw_column(self, name: str) -> str:
        """The raw column the feature `name` transforms: its `column`, else its name."""
        return self.column or name

    def may_be_missing(self) -> bool:
        """Whether its raw column may lack a value in a row (a `default` or a `fill` fills it)."""
        return self.default is not None or self.fill is not None

    def outputs(self, name: str) -> list[str]:
        """The transformed features this entry writes (besides `name`: e.g. its weights and missing indicator)."""
        names = [name, *self.transform_kind.extra_outputs(name, self)]
        if self.missing_indicator:
            names.append(missing_indicator_name(name))
        return names


FeatureConfig = create_model(
    "FeatureConfig",
    __base__=_Feature,
    __module__=__name__,
    __doc__="""One entry of `features`: its key names a raw column (with `column: RAW`, or for `cross`: the output), its
    value the transform.

    Its fields are the transforms' options (`skewless.transforms`) and the common ones; an option given to a
    transform that does not take it is an error.
    """,
    transform=(Literal[tuple(TRANSFORMS)], ...),
    **{option.name: (option.annotation, option.field) for option in transform_options().values()},
    **_COMMON_FIELDS,
)


# The label transforms of a regression label: written transformed, served back in the label's units
# (skewless/layers/label_scale.py inverts them in the export's signatures)
NUMERIC_LABEL_TRANSFORMS = tuple(name for name, transform in TRANSFORMS.items() if transform.label_transform)


class LabelConfig(_Strict):
    column: str
    map: dict[str, int] | None = None
    # vocabulary: a string label as ids; log, z_score, scale_0_1: a number label as the feature transforms do
    transform: Literal[("vocabulary", *NUMERIC_LABEL_TRANSFORMS)] | None = None

    @property
    def class_ids(self) -> bool:
        """Whether the job writes the label as class ids: through its map or its vocabulary."""
        return self.map is not None or (self.transform is not None and self.transform not in NUMERIC_LABEL_TRANSFORMS)
    # a row without a label: bad data (quarantine), or left out on purpose and counted as rows.unlabeled (drop)
    missing: Literal["quarantine", "drop"] = "quarantine"

    @model_validator(mode="after")
    def _check(self) -> "LabelConfig":
        if self.map is not None and self.transform is not None:
            raise ValueError("label takes either map or transform, not both")
        return self


class OutputConfig(_Strict):
    dir: str
    # what a shard's record is: one of skewless/output_formats.py's formats (checked there when the config is
    # read, not fixed at import, so a format registered later is taken)
    format: str = DEFAULT_FORMAT
    splits: dict[str, float] = Field(default_factory=lambda: {"train": 0.8, "eval": 0.2})
    split_key: str | None = None
    compression: Literal["gzip", "none"] = "gzip"
    # deflate's level for gzip shards: 2 compresses 1M census rows in ~0.27 of level 6's CPU (0.50 against 1.87
    # s, zlib-ng) into 1.42x the bytes, still fewer than stock tf.Transform's; 6 is TensorFlow's own writer's
    # (docs/performance.md, session 22)
    gzip_level: int = Field(default=2, ge=1, le=9)
    shards: Union[Literal["auto"], int] = "auto"
    target_shard_mb: int = Field(default=128, ge=1)
    readers: int = Field(default=1, ge=1)
    max_bad_fraction: float = Field(default=0.01, ge=0.0, le=1.0)
    # also write RUN_DIR/keras_preprocessor.keras: native Keras layers, checked bit-exact against the graph
    keras_preprocessor: bool = False

    @field_validator("format")
    @classmethod
    def _registered_format(cls, name: str) -> str:
        if name not in OUTPUT_FORMATS:
            raise ValueError(f"unknown value {name!r} (one of {', '.join(OUTPUT_FORMATS)})")
        return name

    @field_validator("splits")
    @classmethod
    def _fractions(cls, splits: dict[str, float]) -> dict[str, float]:
        if not splits:
            raise ValueError("output.splits needs at least one split")
        for name, fraction in splits.items():
            if not name.isidentifier():
                raise ValueError(f"split name {name!r} must be a plain identifier (it names files)")
            if not fraction > 0:  # also NaN
                raise ValueError(f"split {name!r} has fraction {fraction}; fractions must be > 0")
        total = sum(splits.values())
        if not abs(total - 1.0) <= 1e-6:
            raise ValueError(f"output.splits fractions sum to {total:g}, not 1")
        return splits

    @field_validator("shards")
    @classmethod
    def _shards(cls, shards: Union[str, int]) -> Union[str, int]:
        if isinstance(shards, int) and shards < 1:
            raise ValueError("output.shards must be 'auto' or an integer >= 1")
        return shards


class DriftConfig(_Strict):
    # raw columns `skewless validate` and the reports leave out of drift and skew (IDs, timestamps: every new
    # batch differs on them by design); listed as left out, not measured
    exclude: list[str] = Field(default_factory=list)


class AnalysisConfig(_Strict):
    # Stated bounds on what the analysis holds in memory (docs/errors.md, "What a value may cost"): a job past one
    # is refused in one line naming the feature and the option, while the analysis pass counts, before the memory
    # grows with it. Per-key statistics hold every distinct key of their key column (about 2 KB each, to the graph)
    max_keys: int = Field(default=1_000_000, ge=1)
    # a vocabulary counts every distinct value (or text token) before top_k keeps the first (about 0.5 KB each)
    max_vocabulary: int = Field(default=5_000_000, ge=1)


class RunnerConfig(_Strict):
    name: str = "DirectRunner"
    options: dict[str, Any] = Field(default_factory=dict)
    # seconds a started job may go without any worker reading a row before it is cancelled (None: wait forever)
    start_timeout: float | None = Field(default=600, gt=0)
    # a bundle's work units parsed and transformed on all cores at once, the next chunk read and gzip on threads
    # of their own, overlapping with the graph and the encoder; false: everything on the worker's thread (the
    # same bytes)
    overlap_stages: bool = True


class JobConfig(_Strict):
    """A job's config, validated: what `load_config` returns and `skewless.pipelines.run` takes. Its keys and
    their meaning: docs/config.md."""

    name: str
    input: InputConfig
    schema_path: str | None = Field(default=None, alias="schema")
    features: dict[str, FeatureConfig] = Field(default_factory=dict)
    label: LabelConfig | None = None
    preprocessing_fn: str | None = None
    output: OutputConfig
    runner: RunnerConfig = Field(default_factory=RunnerConfig)
    analysis: AnalysisConfig = Field(default_factory=AnalysisConfig)
    drift: DriftConfig = Field(default_factory=DriftConfig)
    # tf.Transform's analyzer cache: each input file is analyzed once; reruns read only new or changed files
    cache_dir: str | None = None
    # what one analyzer-cache dataset is: each input `file`, or each `directory` (a dated partition of files)
    cache_key: Literal["file", "directory"] = "file"
    # The folder the config's relative paths were resolved against when it was loaded (the config file's
    # folder, absolute); every path field holds its absolute path from then on.
    base_dir: str = Field(default=".", exclude=True)

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    @model_validator(mode="after")
    def _check(self) -> "JobConfig":
        if not self.features and not self.preprocessing_fn:
            raise ValueError("the config needs features (declarative transforms) or a preprocessing_fn")
        if self.label is not None and self.label.column in self.features:
            raise ValueError(f"column {self.label.column!r} is the label; it cannot also be a feature")
        if self.preprocessing_fn is not None and ":" not in self.preprocessing_fn:
            raise ValueError("preprocessing_fn must be 'module.path:function'")
        self._check_crosses_and_outputs()
        self._check_shared_columns()
        self._check_shared_vocabularies()
        if self.cache_dir is not None and not INPUT_FORMATS[self.input.format].cache_sees_changes:
            raise ValueError(f"cache_dir: an analyzer cache is reused while its input is unchanged, and nothing tells "
                             f"whether input.format {self.input.format}'s rows changed; leave cache_dir out")
        if isinstance(self.input.na_values, dict) and self.features:
            unknown = sorted(set(self.input.na_values) - set(self.raw_columns))
            if unknown:
                raise ValueError(f"input.na_values names {unknown[0]!r}, which is not a raw column of the config")
        if self.input.types and self.schema_path is not None:
            raise ValueError("input.types and schema: the schema gives every column's type; declare it there")
        if self.input.types and self.features:
            unknown = sorted(set(self.input.types) - set(self.raw_columns))
            if unknown:
                raise ValueError(f"input.types names {unknown[0]!r}, which is not a raw column of the config "
                                 f"(those are: {', '.join(self.raw_columns)})")
        if self.drift.exclude and self.features:
            unknown = sorted(set(self.drift.exclude) - set(self.raw_columns))
            if unknown:
                raise ValueError(f"drift.exclude names {unknown[0]!r}, which is not a raw column of the config "
                                 f"(those are: {', '.join(self.raw_columns)})")
        return self

    @model_validator(mode="after")
    def _resolve_paths(self) -> "JobConfig":
        # Once, here: the job, verify, make_raw_dataset and the run's config.yaml then all see the same paths,
        # whatever the working directory of whoever reads them later.
        if "://" not in self.base_dir:
            self.base_dir = os.path.abspath(self.base_dir)
        self.input.resolve_paths(self.base_dir)
        self.output.dir = absolute_path(self.output.dir, self.base_dir)
        if self.schema_path is not None:
            self.schema_path = absolute_path(self.schema_path, self.base_dir)
        if self.cache_dir is not None:
            self.cache_dir = absolute_path(self.cache_dir, self.base_dir)
        return self

    def _check_crosses_and_outputs(self) -> None:
        label = self.label.column if self.label is not None else None
        for name, feature in self.features.items():
            # what a feature reads besides its own column (a cross's columns, a per-key key) is one raw value per row
            noun, use = feature.transform_kind.reads_as
            for column in feature.transform_kind.reads(feature):
                read = self.features.get(column)
                if read is not None and read.raw_column(column) != column:
                    raise ValueError(f"features.{name}: {noun} {column!r} is a feature of raw column "
                                     f"{read.raw_column(column)!r}; name the raw column")
                if read is None and self.features_of(column):
                    # which of its features' fills would the key take? One named after the column says it
                    raise ValueError(f"features.{name}: {noun} {column!r} is a raw column only "
                                     f"features.{self.features_of(column)[0]} transforms (column: {column}); add a "
                                     f"feature named {column!r} or read another")
                if column == label:
                    raise ValueError(f"features.{name}: {noun} of the label column {column!r} "
                                     "(serving has no label)")
                if column == name:
                    raise ValueError(f"features.{name}: cannot {use} itself")
                if read is not None and (read.transform_kind.new_output or read.transform_kind.image
                                         or read.is_list or read.sequence):
                    raise ValueError(f"features.{name}: cannot {use} {column!r} (a cross, an image or a list)")
                if read is not None and read.shape is not None:
                    raise ValueError(f"features.{name}: cannot {use} {column!r} (shape {read.shape}: several "
                                     "values per row)")
        sequences = [name for name, feature in self.features.items() if feature.sequence]
        if sequences and not self.input.sequence_examples:
            raise ValueError(f"features.{sequences[0]} is a feature list (sequence: true): it needs "
                             "input.format tfrecord with input.record sequence_example")
        lists = [name for name, feature in self.features.items() if feature.is_list or feature.shape is not None]
        if lists and INPUT_FORMATS[self.input.format].text and self.input.list_delimiter == self.input.delimiter:
            raise ValueError(f"features.{lists[0]} is a list: input.list_delimiter must differ from input.delimiter "
                             f"({self.input.delimiter!r})")
        for name, feature in self.features.items():
            if not feature.transform_kind.uses_label(feature):
                continue
            if self.label is None:
                raise ValueError(f"features.{name}: labels: true needs a label (label.column)")
            if self.label.transform in NUMERIC_LABEL_TRANSFORMS:
                raise ValueError(f"features.{name}: labels: true needs a class label; label.transform "
                                 f"{self.label.transform} makes {self.label.column!r} a regression label")
        owner: dict[str, str] = {}
        for name, feature in self.features.items():
            for output in feature.outputs(name):
                if output in owner or output == label:
                    raise ValueError(f"features.{name}: output {output!r} is also written by {owner.get(output, 'the label')}")
                owner[output] = f"features.{name}"

    def _check_shared_columns(self) -> None:
        """Features of one raw column (`column:`) read it once: they must see it alike (a list, a feature list, a
        shape, whether it may be missing), and no feature may be named after a raw column it does not read (its
        output and that column would share a name in the run's statistics, verify and serving)."""
        label = self.label.column if self.label is not None else None
        raw = set(self.raw_columns)
        for name, feature in self.features.items():
            column = feature.raw_column(name)
            if column == name:
                continue
            if column == label:
                raise ValueError(f"features.{name}: column {column!r} is the label; it cannot also be a feature")
            if name in raw:
                readers = [f"features.{other}" for other, read in self.features.items()
                           if name in (read.raw_column(other), *read.transform_kind.reads(read))]
                raise ValueError(f"features.{name} transforms raw column {column!r}, but {name!r} is a raw column "
                                 f"too (read by {readers[0] if readers else 'the label'}): name the feature otherwise")
        first: dict[str, str] = {}
        for name, feature in self.features.items():
            if feature.transform_kind.new_output:
                continue
            column = feature.raw_column(name)
            other = first.setdefault(column, name)
            if other == name:
                continue
            seen = self.features[other]
            for key, mine, theirs in (("list", feature.is_list, seen.is_list),
                                      ("sequence", feature.sequence, seen.sequence),
                                      ("shape", feature.shape, seen.shape),
                                      ("default or fill", feature.may_be_missing(), seen.may_be_missing())):
                if mine != theirs:
                    raise ValueError(f"features.{name} and features.{other} both read raw column {column!r}, which "
                                     f"is read once: they must agree on {key} (one says {mine}, the other {theirs})")
            if feature.fill == "most_frequent" and seen.fill == "most_frequent":
                raise ValueError(f"features.{name} and features.{other} both fill raw column {column!r} with its "
                                 "most frequent value: give one of them the fill, the other a default")

    def _check_shared_vocabularies(self) -> None:
        """The features of one `shared_vocabulary` are two or more (one alone is a typo of another's name) and
        ask for the same vocabulary: one `top_k`, `frequency_threshold`, `reserved_tokens`."""
        groups: dict[str, list[str]] = {}
        for name, feature in self.features.items():
            if feature.shared_vocabulary is not None:
                groups.setdefault(feature.shared_vocabulary, []).append(name)
        for shared, names in groups.items():
            if len(names) == 1:
                raise ValueError(f"features.{names[0]}: shared_vocabulary {shared!r} is named by no other feature; "
                                 "a vocabulary of its own needs no name")
            first = self.features[names[0]]
            for name in names[1:]:
                for key in ("top_k", "frequency_threshold", "reserved_tokens"):
                    if getattr(self.features[name], key) != getattr(first, key):
                        raise ValueError(f"features.{name} and features.{names[0]} share vocabulary {shared!r}: "
                                         f"they must give the same {key}")

    def features_of(self, column: str) -> list[str]:
        """The features that transform raw column `column` (themselves, or through `column:`)."""
        return [name for name, feature in self.features.items()
                if not feature.transform_kind.new_output and feature.raw_column(name) == column]

    def raw_feature(self, column: str):
        """The first feature that transforms raw column `column`, or None: what the column is (a list, a shape,
        a feature list, whether it may be missing) is the same for all of them (`_check_shared_columns`)."""
        names = self.features_of(column)
        return self.features[names[0]] if names else None

    @property
    def raw_columns(self) -> list[str]:
        """The raw columns the job feeds to tf.Transform: the features' columns (each once), the columns they
        read (crossed columns, per-key keys), then the label."""
        columns = list(dict.fromkeys(feature.raw_column(name) for name, feature in self.features.items()
                                     if not feature.transform_kind.new_output))
        for feature in self.features.values():
            columns += [column for column in feature.transform_kind.reads(feature) if column not in columns]
        if self.label is not None:
            columns.append(self.label.column)
        return columns


def load_config(
    source: Union[str, os.PathLike, dict],
    overrides: list[str] | None = None,
    output_dir: str | None = None,
) -> JobConfig:
    """Loads and validates a job config from a YAML path or a dict.

    `overrides` are ``key.path=value`` strings (the CLI's ``--set``); the value is parsed as YAML.
    `output_dir` replaces ``output.dir``. Relative paths in a YAML file are relative to its folder.

    Examples:
        >>> import os
        >>> from skewless.config import load_config
        >>> config = load_config("configs/example.yaml", overrides=["input.rows=2000"])
        >>> config.input.rows, config.features["age"].transform, config.output.splits
        (2000, 'z_score', {'train': 0.8, 'eval': 0.2})
        >>> os.path.relpath(config.output.dir)   # "../out/example" in configs/example.yaml
        'out/example'
        >>> load_config("configs/example.yaml", overrides=["features.age.transform=zscore"])
        Traceback (most recent call last):
        ...
        skewless.errors.ConfigError: --set features.age.transform=zscore: unknown value 'zscore' (input should be ...)
    """
    lines: dict[tuple, int] = {}
    if isinstance(source, dict):
        raw = copy.deepcopy(source)
        where, base_dir = "config", "."
    else:
        path = Path(source)
        where, base_dir = str(path), str(path.parent)
        text = _read_config_text(path)
        raw, lines = _parse_yaml(text, where)
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: the config must be a mapping of keys to values")
    for override in overrides or []:
        _apply_override(raw, override)
    if output_dir is not None:
        raw.setdefault("output", {})
        if not isinstance(raw["output"], dict):
            raise ConfigError(f"{where}: output must be a mapping")
        raw["output"]["dir"] = output_dir
    raw.setdefault("base_dir", base_dir)
    try:
        return JobConfig.model_validate(raw)
    except ValidationError as error:
        overridden = {tuple(override.partition("=")[0].split(".")): override for override in overrides or []}
        raise ConfigError(_describe(error, where, lines, overridden)) from None


def _read_config_text(path: Path) -> str:
    """The config file's text, read no further than `MAX_CONFIG_BYTES` (a config named /dev/zero ends too)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found") from None
    except OSError as error:
        raise ConfigError(f"{path}: cannot read config: {error.strerror or error}") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{path}: more than {MAX_CONFIG_BYTES:,} bytes; a config may be at most 1 MiB "
                          "(data belongs in input.paths)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError(f"{path}: cannot read config: not UTF-8 text ({error.reason} at byte {error.start})") from None


def _parse_yaml(text: str, where: str) -> tuple[Any, dict[tuple, int]]:
    """The YAML document in `text` and the line of each key path (`_key_lines`), after `_check_cost` bounded
    what building them walks; ConfigError naming `where` and the line otherwise."""
    try:
        _check_cost(text, where)
        raw = yaml.load(text, Loader=_LOADER)
        lines = _key_lines(yaml.compose(text, Loader=_LOADER), where)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        # a reader error (a control character, bad UTF-8) has no problem text: its first line says it
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise ConfigError(f"{where}{line}: invalid YAML: {problem}") from None
    return raw, lines


def _check_cost(text: str, where: str) -> None:
    """Refuses a YAML text whose document would be bigger than `MAX_CONFIG_VALUES` values or nested deeper
    than `MAX_CONFIG_DEPTH` once its aliases are followed, or whose alias names a node that holds it (a
    cycle). One pass over the parser's events, which the parser produces without recursion, holding a count per
    open collection and per anchor: linear in the text, whatever the aliases multiply."""
    sizes: dict[str, tuple[int, int]] = {}  # anchor -> (values, depth) of the finished node it names
    open_nodes: list[list] = []  # per open collection: [anchor, values, depth below it]
    total = 0

    def count(values: int, depth: int, mark) -> None:
        """A node of `values` values, `depth` levels deep, in the innermost open collection."""
        nonlocal total
        total += values
        if total > MAX_CONFIG_VALUES:
            raise ConfigError(f"{where}:{mark.line + 1}: the config expands to more than {MAX_CONFIG_VALUES:,} "
                              "values (an alias counts as a copy of what it names: an alias bomb?)")
        if len(open_nodes) + depth > MAX_CONFIG_DEPTH:
            raise ConfigError(f"{where}:{mark.line + 1}: nested more than {MAX_CONFIG_DEPTH} levels deep")

    def finished(values: int, depth: int) -> None:
        if open_nodes:
            open_nodes[-1][1] += values
            open_nodes[-1][2] = max(open_nodes[-1][2], depth)

    for event in yaml.parse(text, Loader=_LOADER):
        if isinstance(event, yaml.AliasEvent):
            if any(node[0] == event.anchor for node in open_nodes):
                raise ConfigError(f"{where}:{event.start_mark.line + 1}: alias *{event.anchor} is inside the node "
                                  "it names (a cycle)")
            values, depth = sizes.get(event.anchor, (1, 1))  # an unknown anchor: the composer names it next
            count(values, depth, event.start_mark)
            finished(values, depth)
        elif isinstance(event, yaml.ScalarEvent):
            count(1, 1, event.start_mark)
            finished(1, 1)
            if event.anchor:
                sizes[event.anchor] = (1, 1)
        elif isinstance(event, yaml.CollectionStartEvent):
            count(1, 1, event.start_mark)
            open_nodes.append([event.anchor, 1, 0])
        elif isinstance(event, yaml.CollectionEndEvent):
            anchor, values, depth = open_nodes.pop()
            if anchor:
                sizes[anchor] = (values, depth + 1)
            finished(values, depth + 1)


def _apply_override(raw: dict, override: str) -> None:
    key, sep, value = override.partition("=")
    if not sep or not key:
        raise ConfigError(f"--set {override!r}: expected key.path=value")
    try:
        _check_cost(value, f"--set {key}")
        parsed = yaml.load(value, Loader=_LOADER) if value else ""
    except yaml.YAMLError:
        parsed = value
    node = raw
    parts = key.split(".")
    for part in parts[:-1]:
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise ConfigError(f"--set {override!r}: {part} is not a mapping")
        node = child
    node[parts[-1]] = parsed


def _key_lines(node, where: str, path: tuple = ()) -> dict[tuple, int]:
    """Maps each key path of a composed YAML document to its 1-based line number. A key given twice in one
    mapping is refused (YAML would keep the last one silently, so a pasted-over option would not apply)."""
    lines: dict[tuple, int] = {}
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = path + (key_node.value,)
            line = key_node.start_mark.line + 1
            if key in lines and isinstance(key_node, yaml.ScalarNode) and key_node.value != "<<":
                dotted = printable(".".join(map(str, key)))
                raise ConfigError(f"{where}:{line}: {dotted}: key given twice (first on line {lines[key]})")
            lines[key] = line
            lines.update(_key_lines(value_node, where, key))
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            lines[path + (index,)] = item.start_mark.line + 1
            lines.update(_key_lines(item, where, path + (index,)))
    return lines


def _describe(error: ValidationError, where: str, lines: dict[tuple, int], overridden: dict[tuple, str]) -> str:
    """One line for all of pydantic's errors, each named after the config line it is about, or the `--set`
    override that put the value there (`overridden`: key path -> override)."""
    messages = []
    for item in error.errors():
        loc = tuple("schema" if part == "schema_path" else part for part in item["loc"])
        keys = _real_keys(loc, lines)
        line = _nearest_line(keys, lines)
        message = item["msg"].removeprefix("Value error, ")
        if item["type"] == "union_tag_not_found":  # the union of input formats is chosen by a missing `format`
            keys, message = (*keys, "format"), "Field required"
        elif item["type"] == "union_tag_invalid":
            tags = [repr(tag) for tag in INPUT_FORMATS]
            keys = (*keys, "format")
            message = (f"unknown value {item['ctx']['tag']!r} (input should be {', '.join(tags[:-1])} or {tags[-1]})")
        elif item["type"] == "extra_forbidden":
            message = "unknown key" + _did_you_mean(str(keys[-1]), keys[:-1])
        elif item["type"] == "literal_error":
            message = f"unknown value {item.get('input')!r} ({message[0].lower()}{message[1:]})"
        dotted = ".".join(str(part) for part in keys)
        override = _override_of(keys, overridden)
        if override is not None:
            about = "" if override.partition("=")[0] == dotted else f"{dotted}: "
            messages.append(f"--set {override}: {about}{message}")
            continue
        prefix = f"{where}:{line}" if line else where
        messages.append(f"{prefix}: {dotted}: {message}" if dotted else f"{prefix}: {message}")
    # keys and values are the user's text: a newline or an escape sequence in one must not act on a terminal
    return printable("; ".join(messages))


# how pydantic names a union branch or a validator in a location: `function-after[_check(), FeatureConfig]`
_PYDANTIC_TAG = re.compile(r"[a-z][a-z_-]*\[.*\]", re.S)
# the branch of a union chosen by a key (`input`'s by `format`), which pydantic names by that key's value
_UNION_TAGS = {("input", name) for name in INPUT_FORMATS}


def _real_keys(loc: tuple, lines: dict[tuple, int]) -> tuple:
    """The config's keys in a pydantic location: without the tags pydantic appends (a union branch, a literal),
    but with a key of the config that looks like one (a feature named "ci\x1b[2Jty" or "list[int]")."""
    keys: tuple = ()
    for part in loc:
        tag = isinstance(part, str) and (_PYDANTIC_TAG.fullmatch(part) or keys + (part,) in _UNION_TAGS)
        if tag and keys + (part,) not in lines:
            continue
        keys += (part,)
    return keys


def _did_you_mean(key: str, where: tuple) -> str:
    """A known key of the mapping at `where` close to the unknown `key` (a typo), as "; did you mean ...?"."""
    near = difflib.get_close_matches(key, _known_keys(where), n=1)
    return f"; did you mean {near[0]!r}?" if near else ""


def _known_keys(where: tuple) -> list[str]:
    """The keys the config's models take in the mapping at `where` (("input",), ("features", "age"), ...)."""
    kinds: list = [JobConfig]
    for part in where:
        kinds = [inner for kind in kinds for inner in _inside(kind, part)]
    return sorted({field.alias or name for kind in kinds for model in _alternatives(kind) if _is_model(model)
                   for name, field in model.model_fields.items()})


def _inside(kind, part) -> list:
    """The types a value of type `kind` holds at key or index `part`."""
    found = []
    for alternative in _alternatives(kind):
        if _is_model(alternative):
            found += [field.annotation for name, field in alternative.model_fields.items()
                      if part in (name, field.alias, "schema" if name == "schema_path" else None)]
        elif get_origin(alternative) in (dict, list, tuple) and get_args(alternative):
            found.append(get_args(alternative)[-1])
    return found


def _alternatives(kind) -> tuple:
    """The types of a union (`X | None`), else the type itself."""
    return get_args(kind) if get_origin(kind) in (Union, UnionType) else (kind,)


def _is_model(kind) -> bool:
    return isinstance(kind, type) and issubclass(kind, BaseModel)


def _override_of(keys: tuple, overridden: dict[tuple, str]) -> str | None:
    """The override that set the value at `keys`, or one holding it, or else one inside it (a model check of
    `features.age` fails on `--set features.age.transform=...`)."""
    path = tuple(str(part) for part in keys)
    for end in range(len(path), 0, -1):
        if path[:end] in overridden:
            return overridden[path[:end]]
    inside = [override for key, override in overridden.items() if key[:len(path)] == path]
    return inside[-1] if inside and path else None


def _nearest_line(keys: tuple, lines: dict[tuple, int]) -> int | None:
    for end in range(len(keys), 0, -1):
        if keys[:end] in lines:
            return lines[keys[:end]]
    return None
