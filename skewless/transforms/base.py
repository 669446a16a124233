"""What a transform kind is: the one description every part of skewless reads.

A `Transform` says which options a feature of its kind takes (pydantic fields, with their defaults and
limits), which raw columns it accepts, how tf.Transform computes it (`build`), and how native Keras
layers reproduce it (`native`, or `native_reason` why none do). Config validation, the preprocessing_fn,
the native preprocessor, the job's run.json, inspect and the report ask the registry
(`skewless.transforms`) instead of naming transforms. Nothing here imports TensorFlow at module level:
loading a config reads these descriptions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic.fields import FieldInfo

from skewless.errors import ConfigError
from skewless.lazy_imports import lazy_import
from skewless.ops.lists import pad_or_truncate
from skewless.transforms.categorical import with_buckets

# on first use: loading a config reads this registry without TensorFlow; a builder loads what it calls
tft = lazy_import("tensorflow_transform")


def not_built_by(transform: str) -> str:
    """Why a feature whose graph lacks the ops or constants of tf.Transform's `transform` has no native layers."""
    return f"the graph does not compute it as tf.Transform's {transform} does (changed by a preprocessing_fn?)"


@dataclass(frozen=True)
class Option:
    """One feature option: its config key (`alias` where the field name differs), type, pydantic field and doc."""

    name: str
    annotation: Any
    field: FieldInfo
    doc: str

    @property
    def key(self) -> str:
        """The key a config writes."""
        return self.field.alias or self.name


class Transform:
    """A transform kind. Subclasses set the class attributes and override what their kind does differently.

    - `options`: the transform's own options, in the order a dumped config lists them; `required`: those
      without a default it cannot do without.
    - `needs`: "number", "string" or None: the raw column kind it takes (others are refused, naming the feature).
    - `lists`: whether `list`/`sequence` apply (each value transformed); `missing`: whether `default`, `fill`,
      `missing_indicator`, `max_length` and `pad_value` apply.
    - `shapes`: whether `shape` applies (a numeric column of a fixed shape, each value transformed).
    - `categories`: its raw values are categories whatever their type (run.json: kind categorical).
    - `ids`: its output is ids with a known bucket count (kept when `max_length` pads them).
    - `image`: its raw values are encoded images (no top values; probes draw a real image).
    - `unit_scale`: its number output is of unit scale already (a z-score, [0, 1], the config's range): `model_inputs`
      feeds it as it is and standardizes the other numbers (`unit_scale_outputs`).
    - `new_output`: the feature is a new output computed from `columns`, not a raw column (cross).
    - `counts_oov`: the job counts the rows its vocabulary does not know.
    - `label_transform`: it may transform a regression label, which the export serves back inverted.
    - `reads_as`: how config errors name the columns `reads` gives (noun, verb).
    - `native_ops`: the ops tf.Transform 1.21 emits for it, which `native` reads; None with `native_reason`.
    - `native_reason`: why it has no native layers (with `native_ops`: why its extra outputs have none).
    - `native_options`: its options the native layers reproduce (any other set option refuses the feature).
    - `native_layers`: the Keras layers that reproduce it and how exactly (docs/portable.md's table).
    - `report_options`: its options the report shows beside its name.
    - `quantile_buckets`: the option holding how many buckets it cuts the raw values into at quantiles (the
      report warns of buckets likely empty); None when it cuts none.
    """

    name: str = ""
    doc: str = ""
    options: tuple[Option, ...] = ()
    required: tuple[str, ...] = ()
    needs: str | None = None
    lists: bool = True
    missing: bool = True
    shapes: bool = False
    categories: bool = False
    ids: bool = False
    image: bool = False
    unit_scale: bool = False
    new_output: bool = False
    counts_oov: bool = False
    # whether it may transform a regression label (`label.transform`): `label_statistics` and `original_units`
    label_transform: bool = False
    # how config errors name what `reads` gives: (noun, verb), e.g. "key of the label column", "cannot key by itself"
    reads_as: tuple[str, str] = ("key", "key by")
    native_ops: frozenset[str] | None = None
    native_reason: str | None = None
    native_options: tuple[str, ...] = ()
    native_layers: str = ""
    report_options: tuple[str, ...] = ()
    quantile_buckets: str | None = None

    def validate(self, feature) -> str | None:
        """What is wrong with a `feature` of this kind beyond its options' own limits, or None."""
        for option in self.required:
            if getattr(feature, option) is None:
                return f"transform {self.name} needs {option}"
        return self.check(feature)

    def check(self, feature) -> str | None:
        """What `validate` adds for this kind once its required options are there."""
        return None

    def check_columns(self, name: str, feature, kinds: dict[str, str]) -> None:
        """Refuses (ConfigError) a raw column whose kind (`kinds`: column -> int|float|bytes) it cannot take."""
        column = feature.raw_column(name)
        kind = kinds[column]
        if self.needs == "number" and kind == "bytes":
            raise ConfigError(f"features.{name}: transform {self.name} needs a numeric column, {column} holds strings")
        if self.needs == "string" and kind != "bytes":
            raise ConfigError(f"features.{name}: transform {self.name} needs a string (bytes) column, {column} is "
                              f"{kind}")

    def row_wise(self, feature) -> bool:
        """Whether each of its outputs for a row is a function of that row's own raw value alone, bit for bit
        wherever the row sits in a batch (no float op whose result may depend on the row's place: SIMD lanes),
        so that the job may compute it once per distinct value of a chunk (pipelines/write/distinct_values.py)."""
        return False

    def never_negative(self, feature) -> bool:
        """Whether none of its outputs is ever negative, whatever the row (an unseen value, a missing one): the
        serving export then gathers its ids from a table without Keras 3's negative-id mapping (layers/export.py).
        A schema's int domain cannot tell: ids from 0 are recorded where an unseen value is -1 (categorical.py)."""
        return False

    def pads_single_values(self, feature) -> bool:
        """Whether `max_length` applies to a feature of one value per row (text ids do)."""
        return False

    def reads(self, feature) -> list[str]:
        """The raw columns besides its own it computes from (a cross: its `columns`; per-key statistics: the
        `key`) of `feature` (a FeatureConfig)."""
        return []

    def label_statistics(self, graph) -> dict[str, float] | None:
        """As a regression label's transform (`label.transform`): the statistics the graph scaled the label with,
        from its `GraphFeature` (skewless/layers/graph_analyzers.py); None when the transform cannot be one."""
        return None

    def original_units(self, value, statistics: dict):
        """As a regression label's transform: a float64 tensor of transformed label values in the label's units."""
        raise NotImplementedError(f"transform {self.name} is no label transform")

    def uses_label(self, feature) -> bool:
        """Whether its analysis reads the label column (a vocabulary ordered by mutual information with it)."""
        return False

    def extra_outputs(self, name: str, feature) -> list[str]:
        """Transformed features it writes besides `name`."""
        return []

    def unit_scale_outputs(self, name: str, feature) -> list[str]:
        """Its number outputs that are of unit scale already (`unit_scale`), which `model_inputs` feeds as they are."""
        return [name] if self.unit_scale else []

    def raw_above(self, feature) -> float | None:
        """A bound its raw values must be above (else the row goes to quarantine), or None."""
        return None

    def raw_check(self, feature):
        """None, or a function of a raw Arrow column giving {row: why} for the values it cannot take (those rows
        go to quarantine): for what no schema domain can say, e.g. text that must parse."""
        return None

    def probe_texts(self, count: int, rng) -> list[bytes] | None:
        """`count` raw texts its `raw_check` takes, for probes (the graph refuses the others, failing the probe
        batch), or None: any text will do."""
        return None

    def own_analyzer(self, options: dict) -> bool:
        """Whether its vocabulary needs a `tft.vocabulary` of its own (`label_vocabulary`), not the shared
        analyzer's plain counts (pipelines/analyze/vocabularies.py)."""
        return False

    def vocabulary_tokens(self, value, options: dict):
        """The tokens a vocabulary is computed over (the filled raw `value`), or None: no vocabulary."""
        return None

    def build(self, name: str, value, options: dict, vocabulary=None, columns=None) -> dict:
        """tf.Transform: {output name: tensor} from the filled raw `value` (its tokens when it has a
        vocabulary, then `vocabulary` is the vocabulary file's deferred path; None for a new output).
        `options` holds every option by field name, defaults included; `columns` the values of the columns
        `reads` names, filled where they are features."""
        output = self.transform(value, options, vocabulary, columns)
        if options.get("max_length") is not None:
            padded = pad_or_truncate(output, options["max_length"], options["pad_value"])
            if self.ids:  # the ids' domain, lost by padding
                padded = with_buckets(padded, tft.get_num_buckets_for_transformed_feature(output))
            output = padded
        return {name: output}

    def transform(self, value, options: dict, vocabulary=None, columns=None):
        """The one output tensor of a transform of each value (lists: each value, statistics over all)."""
        raise NotImplementedError(f"transform {self.name} builds its outputs in build()")

    def native(self, plan, graph) -> str | None:
        """Sets `plan.layers` (and `plan.probe`) from the graph's analyzer values; returns why not, or None."""
        return self.native_reason

    def run_fields(self, name: str, feature, graph) -> dict:
        """Fields of its run.json entry beyond the statistics (`graph`: the run's TFTransformOutput)."""
        return {}

    def float32_risk(self, feature, statistics: dict) -> bool:
        """Whether tf.Transform's float32 analyzers may overflow on a raw column of these statistics (run.json's,
        float64): the job then reads the graph's results back (`float32_problem`) before it publishes."""
        return False

    def float32_problem(self, graph_feature) -> str | None:
        """What is wrong with the graph's analyzer results for this feature (its `GraphFeature`), or None."""
        return None

    def dates_in(self, feature) -> str | None:
        """The time zone on whose wall clock its raw values are dates (the statistics show their date range), or
        None: its values are no dates."""
        return None
