"""Portable preprocessing: a run's tf.Transform analysis compiled into built-in Keras 3 layers.

`keras_preprocessor` builds a `NativePreprocessor` (Keras' Discretization, StringLookup,
IntegerLookup and Hashing, plus small skewless layers written with keras.ops where Keras has no
exact equivalent, see `native_plan`) initialized with the analyzer outputs the Beam job put into
the transform graph. It saves to a small ``.keras`` file with no TF
graph inside that loads on any Keras backend. `check_preprocessor` proves it equal to the graph on
the current backend: integers and strings equal, floats bit-identical. `export_keras_preprocessor`
writes the preprocessor with only the features that passed, and says why the others did not.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from typing import Iterable, Mapping

import keras
import numpy as np
import tensorflow as tf

from skewless.config import load_config
from skewless.errors import InputError, NotPortableError
from skewless.layers.export import parse_raw_examples, serialize_raw_examples, transform_raw_rows
from skewless.layers.graph_analyzers import read_graph_features
from skewless.layers.input_forms import input_forms
from skewless.layers.fill_missing import FillMissing
from skewless.layers.native_plan import FeaturePlan, plan_feature, plan_missing_indicator, refused
from skewless.layers.native_preprocessor import NativePreprocessor
from skewless.layers.probe_rows import probe_rows
from skewless.layers.transform_graph import find_graph_dir
from skewless.layers.transform_layer import TransformLayer
from skewless.lazy_imports import lazy_import
from skewless.run_directory import CONFIG_FILE, RunDirectory
from skewless.safe_names import missing_indicator_name

# tf.Transform (seconds to import) on first use: the functions that read a graph need it, `import skewless.layers`
# alone does not
tft = lazy_import("tensorflow_transform")

# Besides each transform's `native_options`, the options native layers reproduce (FillMissing holds the
# default or the fill value the graph computed, MissingIndicator the indicator); any other option set in the
# config refuses the feature.
HANDLED_OPTIONS = ("transform", "default", "fill", "missing_indicator", "column")


@dataclass
class NativeFeatureCheck:
    """One transformed feature: ``status`` is "exact", "different" or "unsupported" (then ``reason``).

    ``rows`` compared (0 when unsupported), ``differences``: rows whose value differs (floats: bits).
    """

    name: str
    transform: str
    status: str
    rows: int
    differences: int
    max_abs_difference: float | None = None
    reason: str | None = None


@dataclass
class PreprocessorCheck:
    """The native layers against the transform graph, per feature, on one Keras backend."""

    backend: str
    rows: int
    features: list[NativeFeatureCheck]
    path: str | None = None  # where export_keras_preprocessor wrote the preprocessor

    @property
    def exact(self) -> bool:
        """Every feature has native layers and they agree with the graph on every row."""
        return all(feature.status == "exact" for feature in self.features)

    def not_exact(self) -> dict[str, str]:
        """``{feature: reason}`` for the features without exact native layers."""
        return {f.name: f.reason for f in self.features if f.status != "exact"}

    def to_dict(self) -> dict:
        return asdict(self)


def keras_preprocessor(run_dir: str | os.PathLike, strict: bool = True) -> NativePreprocessor:
    """The run's declarative transforms as built-in Keras layers, initialized from its transform graph.

    A transform without an exact Keras equivalent raises `NotPortableError` naming the feature and
    why; with ``strict=False`` such features are left out instead and listed in the result's
    ``unsupported`` (``{feature: reason}``). Features computed from the label are left out (serving
    has no label), as are those a ``preprocessing_fn`` adds (reported as unsupported).

    Examples:
        After ``skewless run configs/example.yaml -o out/example``, the preprocessor gives what the graph gives:

        >>> import keras
        >>> import numpy as np
        >>> from skewless.layers import TransformLayer, keras_preprocessor
        >>> preprocessor = keras_preprocessor("out/example")
        >>> preprocessor.unsupported   # every feature has an exact Keras equivalent
        {}
        >>> preprocessor.save("preprocessor.keras")        # loads on the JAX backend too
        >>> loaded = keras.saving.load_model("preprocessor.keras")
        >>> batch = {"age": np.array([25, 61]), "workclass": np.array(["Private", "Unheard-of"])}
        >>> native = loaded.transform_features(batch, ["age", "workclass"])
        >>> keras.ops.convert_to_numpy(native["workclass"]).tolist()   # Private is vocabulary line 0; unseen: OOV
        [0, 7]
        >>> graph = TransformLayer("out/example")({**batch, "hours_per_week": np.array([40, 40]),
        ...     "fnlwgt": np.array([1e5, 1e5], "float32"), "education": np.array(["HS-grad"] * 2),
        ...     "native_country": np.array(["Cuba"] * 2)})
        >>> bool((keras.ops.convert_to_numpy(native["age"]) == graph["age"].numpy()).all())   # bit for bit
        True
    """
    plans = plan_preprocessor(run_dir)
    unsupported = {name: plan for name, plan in plans.items() if plan.layers is None}
    if unsupported and strict:
        reasons = "; ".join(f"feature {name!r} ({plan.transform}): {plan.reason}" for name, plan in unsupported.items())
        raise NotPortableError(
            f"{os.fspath(run_dir)}: no exact Keras equivalent for {reasons}"
            " (use TransformLayer, or keras_preprocessor(..., strict=False) to leave them out)"
        )
    return _build(plans)


def plan_preprocessor(run_dir: str | os.PathLike) -> dict[str, FeaturePlan]:
    """Per transformed feature (label outputs excepted): its Keras layers or why it has none."""
    run_dir = os.fspath(run_dir)
    config_path = RunDirectory(run_dir).config_file
    if not os.path.exists(config_path):
        raise InputError(f"{run_dir}: not a run directory (no {CONFIG_FILE})")
    config = load_config(config_path)
    graph_dir = find_graph_dir(run_dir)
    raw_spec = tft.TFTransformOutput(graph_dir).raw_feature_spec()
    label = config.label.column if config.label else None
    plans = {}
    # the outputs a feature writes besides its own (a datetime's parts, a missing indicator): a transform that
    # says why it has no native layers says it for them too
    owners = {output: (name, config.features[name]) for name in config.features
              for output in config.features[name].outputs(name) if output != name}
    graphs = read_graph_features(graph_dir)
    for name, graph in sorted(graphs.items()):
        if name == label or label in graph.raw_inputs:
            continue
        feature, (source, owner) = config.features.get(name), owners.get(name, (None, None))
        if feature is not None and feature.transform_kind.native_ops is None:
            plans[name] = refused(name, feature.transform, graph, raw_spec.get(name),
                                  feature.transform_kind.native_reason)
        elif owner is not None and owner.transform_kind.native_reason is not None:
            # a text's bag-of-words or TF-IDF weights, a datetime's parts: named by the feature that writes them
            reason = f"{_output_of(name, source, owner)}: {owner.transform_kind.native_reason}"
            plans[name] = refused(name, owner.transform, graph, None, reason)
        elif owner is not None and name == missing_indicator_name(source):
            column = owner.raw_column(source)
            plans[name] = plan_missing_indicator(name, column, graph, raw_spec[column])
        elif owner is not None:
            reason = f"{_output_of(name, source, owner)}: no exact Keras equivalent in skewless yet"
            plans[name] = refused(name, owner.transform, graph, None, reason)
        elif feature is not None:
            options = unhandled_options(feature)
            if options:
                reason = f"option {', '.join(options)} has no exact Keras equivalent in skewless yet"
                plans[name] = refused(name, feature.transform, graph, raw_spec.get(name), reason)
            else:
                plans[name] = plan_feature(name, feature.transform, graph, raw_spec.get(feature.raw_column(name)),
                                           dict(feature))
        else:
            reason = "not a declared feature of the config (an extra output"
            reason += f" of preprocessing_fn {config.preprocessing_fn})" if config.preprocessing_fn else ")"
            plans[name] = refused(name, "preprocessing_fn", graph, raw_spec.get(name), reason)
    for name, plan in plans.items():
        feature = config.features.get(name)
        if plan.layers is not None and feature is not None and feature.transform_kind.new_output:
            _plan_inputs(plan, feature.transform_kind.reads(feature), plans, raw_spec)
    return plans


def _output_of(output: str, owner_name: str, owner) -> str:
    """What `output` is, named by the feature that writes it: "the missing indicator of feature 'w'"."""
    if output == missing_indicator_name(owner_name):
        return f"the missing indicator of feature {owner_name!r}"
    if output == f"{owner_name}_weights":
        return f"the {owner.output} weights of feature {owner_name!r}"
    return f"an output of feature {owner_name!r}"
def unhandled_options(feature) -> list[str]:
    """The options `feature` (a FeatureConfig) sets that its native layers do not reproduce, as a config writes
    them (``range``, ``list``: not the field names)."""
    handled = {*HANDLED_OPTIONS, *feature.transform_kind.native_options}
    fields = type(feature).model_fields
    unhandled = sorted(set(feature.model_dump(exclude_defaults=True)) - handled)
    return [fields[option].alias or option for option in unhandled]


def _plan_inputs(plan: FeaturePlan, columns: list[str], plans: dict, raw_spec) -> None:
    """The raw columns a new output (a cross) reads, each filled as the column's own feature fills it."""
    plan.inputs = list(columns)
    for column in columns:
        if not isinstance(raw_spec[column], tf.io.VarLenFeature):
            continue
        own = plans.get(column)
        fill = own.layers[0] if own is not None and own.layers and isinstance(own.layers[0], FillMissing) else None
        if fill is None:
            plan.layers, plan.reason = None, (f"column {column!r} may be missing and its own feature has no native "
                                              "fill of it")
            return
        config = {**fill.get_config(), "name": f"{plan.layer_name}_{fill.name}"}
        plan.input_layers[column] = [FillMissing.from_config(config)]


def check_preprocessor(
    run_dir: str | os.PathLike,
    rows: Iterable[Mapping] | None = None,
    sample: int = 1000,
    seed: int = 0,
    preprocessor: NativePreprocessor | None = None,
) -> PreprocessorCheck:
    """Compares the native layers with the run's transform graph on the current Keras backend.

    The rows are `rows` (raw rows as dicts, e.g. a sample of the input) plus `sample` rows drawn
    from the analyzer outputs (`probe_rows`: every vocabulary entry, unseen categories, missing
    optional values, NA tokens, values on and around each boundary). The graph transforms them as serving
    does (`transform_raw_rows`); the native layers take them in every form a user may pass (`input_forms`:
    sparse and ragged tensors, dense NumPy arrays, pandas columns and tensors holding NaN, ``""`` or NA tokens
    where a value is missing), and each must give the graph's values: integers and strings equal, floats
    bit-identical (NaN equals NaN). A feature's reason names the form it differs on. `preprocessor` defaults to ``keras_preprocessor(run_dir, strict=False)``.

    Examples:
        After ``skewless run configs/example.yaml -o out/example``:

        >>> from skewless.layers import check_preprocessor
        >>> check = check_preprocessor("out/example", sample=200)
        >>> check.rows, check.not_exact()
        (200, {})
        >>> [(f.name, f.status, f.differences) for f in check.features][:3]
        [('age', 'exact', 0), ('capital_gain', 'exact', 0), ('education', 'exact', 0)]
    """
    plans = plan_preprocessor(run_dir)
    return _check(run_dir, plans, preprocessor or _build(plans), rows, sample, seed)


def export_keras_preprocessor(
    run_dir: str | os.PathLike,
    path: str | os.PathLike | None = None,
    rows: Iterable[Mapping] | None = None,
    sample: int = 1000,
    seed: int = 0,
) -> PreprocessorCheck:
    """Checks the native layers (`check_preprocessor`) and saves the exact ones as a ``.keras`` file.

    A feature that is unsupported or differs from the graph on any row is left out of the file
    (never emitted silently different); the returned check says which and why. `path` defaults
    to ``RUN_DIR/keras_preprocessor.keras``.
    """
    plans = plan_preprocessor(run_dir)
    check = _check(run_dir, plans, _build(plans), rows, sample, seed)
    for feature in check.features:
        plan = plans[feature.name]
        if feature.status == "different":
            plan.layers, plan.reason = None, feature.reason
    check.path = os.fspath(path or RunDirectory.of(run_dir).keras_preprocessor_file)
    _build(plans).save(check.path)
    return check


def raw_feature_batch(rows: Iterable[Mapping], raw_spec: Mapping) -> dict:
    """Raw rows (dicts) as a preprocessor's input: NumPy arrays, ``tf.SparseTensor`` for optional features.

    The rows go through ``tf.train.Example`` and `parse_raw_examples` as a serving request does.
    """
    spec = dict(raw_spec)
    parsed = parse_raw_examples(tf.constant(serialize_raw_examples(rows, spec), tf.string), spec)
    return {name: value if isinstance(value, (tf.SparseTensor, tf.RaggedTensor)) else value.numpy()
            for name, value in parsed.items()}


def _build(plans: dict[str, FeaturePlan]) -> NativePreprocessor:
    features = {
        name: {"transform": plan.transform, "dtype": plan.dtype, "layers": plan.layers,
               "inputs": plan.inputs, "input_layers": plan.input_layers}
        for name, plan in plans.items()
        if plan.layers is not None
    }
    unsupported = {name: plan.reason for name, plan in plans.items() if plan.layers is None}
    return NativePreprocessor(features, unsupported, name="native_preprocessor")


def _check(run_dir, plans, preprocessor, rows, sample, seed) -> PreprocessorCheck:
    graph = TransformLayer(run_dir)
    raw_spec = {name: spec for name, spec in graph.raw_feature_spec.items() if name != graph.label}
    rows, expected = _served(graph, list(rows or []) + probe_rows(raw_spec, plans, sample, seed))
    computed = set(preprocessor.feature_layers)
    forms = input_forms(rows, raw_spec, raw_feature_batch(rows, raw_spec))
    native = {form: preprocessor.transform_features(batch, sorted(computed)) for form, batch in forms.items()}
    features = []
    for name, plan in plans.items():
        if name not in computed:
            reason = plan.reason or preprocessor.unsupported.get(name, "left out of the preprocessor")
            features.append(NativeFeatureCheck(name, plan.transform, "unsupported", 0, 0, None, reason))
            continue
        # the first form the native layers differ on is the feature's verdict (sparse, as a request parses, first)
        compared = [(form, _compare(name, plan.transform, expected[name], keras.ops.convert_to_numpy(outputs[name])))
                    for form, outputs in native.items()]
        form, check = next(((form, check) for form, check in compared if check.status != "exact"), compared[0])
        if check.status != "exact":
            check.reason = f"given {form}: {check.reason}"
        features.append(check)
    return PreprocessorCheck(keras.backend.backend(), len(rows), features)


def _served(graph: TransformLayer, rows: list) -> tuple[list, dict]:
    """(the rows the graph serves, what it gives for them). A row holding a value the job quarantines (outside a
    domain: docs/values.md) fails a whole request, so when the batch fails its rows are tried one by one and
    the refused ones left out: the native layers are compared where the graph gives a value."""
    try:
        return rows, transform_raw_rows(graph, rows)
    except tf.errors.InvalidArgumentError:
        kept = [row for row in rows if _serves(graph, row)]
        return kept, transform_raw_rows(graph, kept)


def _serves(graph: TransformLayer, row: Mapping) -> bool:
    try:
        transform_raw_rows(graph, [row])
    except tf.errors.InvalidArgumentError:
        return False
    return True


def _compare(name: str, transform: str, expected: np.ndarray, actual: np.ndarray) -> NativeFeatureCheck:
    rows = len(expected)
    if actual.shape != expected.shape:
        reason = f"shape {actual.shape}, the graph gives {expected.shape}"
        return NativeFeatureCheck(name, transform, "different", rows, rows, None, reason)
    if keras.backend.backend() == "tensorflow" and actual.dtype != expected.dtype:
        reason = f"dtype {actual.dtype}, the graph gives {expected.dtype}"
        return NativeFeatureCheck(name, transform, "different", rows, rows, None, reason)
    gap = None
    if expected.dtype.kind == "f":
        actual = actual.astype(expected.dtype)
        bits = np.dtype(f"u{expected.itemsize}")
        same = (expected.view(bits) == actual.view(bits)) | (np.isnan(expected) & np.isnan(actual))
        finite = np.isfinite(expected) & np.isfinite(actual)
        gap = float(np.max(np.abs(expected[finite].astype(np.float64) - actual[finite]), initial=0.0))
    elif expected.dtype.kind in "iu":
        same = expected.astype(np.int64) == actual.astype(np.int64)
    else:
        same = expected == actual
    differences = int(np.count_nonzero(~same))
    if differences == 0:
        return NativeFeatureCheck(name, transform, "exact", rows, 0, gap)
    first = int(np.argmax(~same))
    reason = (f"differs from the graph on {differences} of {rows} rows"
              f" (row {first}: {actual[first]!r}, the graph gives {expected[first]!r})")
    return NativeFeatureCheck(name, transform, "different", rows, differences, gap, reason)
