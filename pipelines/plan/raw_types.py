"""The raw columns of a job and their types: from the config's schema when it has one, else from the data.

Inference reads a sample of the input (CSV and JSON Lines: about 1 MB of lines from places spread over the
files, `lines.sample_lines`; a Parquet file's schema; the first TFRecord examples or generated rows). A text
column takes the kind most of its values parse as (`schemas.infer.majority_kind`), and a CSV column whose
transform needs numbers (z_score, scale_*, log, bucketize) is numeric whatever its text; a value that does not
fit goes to quarantine with its reason, so nothing is lost silently. `input.types` pins some columns' types, a
schema all of them. `skewless schema infer` types columns with `infer_types` too, so it says what the job reads.
"""

from __future__ import annotations

from skewless.config import NUMERIC_LABEL_TRANSFORMS, InputConfig, JobConfig
from skewless.errors import ConfigError
from skewless.input_formats import INPUT_FORMATS, reader_of
from skewless.pipelines.reading.columns import RawColumn
from skewless.schemas import load_schema, schema_types
from skewless.schemas.schema_io import feature_list_names


def resolve_columns(config: JobConfig, input_config: InputConfig, paths: list[str]) -> list[RawColumn]:
    feature_lists = None  # the feature lists the schema declares, when there is one
    if config.schema_path:
        schema = load_schema(config.schema_path)
        types = schema_types(schema)
        feature_lists = set(feature_list_names(schema))
        source = config.schema_path
    else:
        lists = [f.raw_column(n) for n, f in config.features.items() if f.is_list or f.shape is not None]
        text = INPUT_FORMATS[input_config.format].parses_strings
        types = infer_types(input_config, paths, lists, wanted=set(config.raw_columns))
        source = paths[0] if paths else "the synthetic dataset"
        declared = input_config.declared_kinds()
        for name, feature in config.features.items():
            column = feature.raw_column(name)
            if text and types.get(column) == "bytes" and feature.transform_kind.needs == "number" \
                    and column not in declared:
                types[column] = "float"  # its text is mostly not numbers: those rows go to quarantine
    check_named_columns(config, input_config, list(types), source)
    reader_of(input_config.format).check_columns(input_config, paths, config.raw_columns)
    _check_declared_lists(config, input_config, paths)
    columns = []
    for name in config.raw_columns:
        key = _config_key(config, name)
        feature = config.raw_feature(name)
        default = feature.default if feature else None
        kind = types[name]
        if config.label and name == config.label.column and config.label.map is not None and kind != "bytes":
            # the map's keys are strings and only a string column is checked against them: a number
            # outside the map would silently become -1 instead of going to quarantine
            raise ConfigError(
                f"label.map: the label column {name!r} holds {kind} values in {source}; a map needs string "
                "labels (declare the column BYTES in the schema, or drop the map to use the numbers as they are)"
            )
        if config.label and name == config.label.column and config.label.transform in NUMERIC_LABEL_TRANSFORMS \
                and kind == "bytes":
            raise ConfigError(
                f"label.transform: {config.label.transform} needs a numeric label, and the label column {name!r} "
                f"holds strings in {source} (a string label takes label.map or transform: vocabulary)"
            )
        for reader in config.features_of(name):  # each feature of the column fills it its own way
            own = config.features[reader]
            if own.default is not None and kind != "bytes" and not isinstance(own.default, (int, float)):
                raise ConfigError(f"features.{reader}.default: {own.default!r} is not a number, and {name} is {kind}")
            if own.fill in ("mean", "median") and kind == "bytes":
                raise ConfigError(f"features.{reader}.fill: {own.fill} needs a numeric column, and {name} holds "
                                  "strings")
        is_list = feature is not None and feature.is_list
        sequence = feature is not None and feature.sequence
        if feature_lists is not None and sequence != (name in feature_lists):
            declared = "a feature list (in its STRUCT)" if name in feature_lists else "a context feature"
            raise ConfigError(f"{key}: {source} declares {name!r} {declared}; "
                              f"the config says sequence: {str(sequence).lower()}")
        shape = tuple(feature.shape) if feature is not None and feature.shape is not None else None
        if shape is not None and kind == "bytes":
            raise ConfigError(f"{key}.shape: a fixed shape needs a numeric column, and {name} holds strings in "
                              f"{source}")
        optional = (feature is not None and feature.may_be_missing()) or is_list or sequence
        image = feature is not None and feature.transform_kind.image
        # a fixed shape is read as a list (of exactly its values, checked against the job's schema)
        columns.append(RawColumn(name, kind, optional=optional, default=default, is_list=is_list or shape is not None,
                                 image=image, sequence=sequence, shape=shape))
    return columns


def check_named_columns(config: JobConfig, input_config: InputConfig, names: list[str], source: str) -> None:
    """Refuses a feature or the label that names no column of the input (`names`, found in `source`), with the
    format's hint where it has one (a CSV header that another delimiter would split)."""
    for name in config.raw_columns:
        if name not in names:
            hint = reader_of(input_config.format).column_hint(input_config, names, name)
            raise ConfigError(f"{_config_key(config, name)}: no column {name!r} in {source} "
                              f"(columns: {', '.join(names)}){hint}")


def _check_declared_lists(config: JobConfig, input_config: InputConfig, paths: list[str]) -> None:
    """A feature read as one value per row whose column the input declares a list: said now, naming the key,
    rather than after the whole pass as every row's "has 3 values, expected 1..1"."""
    declared = reader_of(input_config.format).list_columns(input_config, paths) if paths else {}
    for name, feature in config.features.items():
        column = feature.raw_column(name)
        if column in declared and not (feature.is_list or feature.sequence or feature.shape is not None):
            raise ConfigError(f"features.{name}: {paths[0]} declares {column!r} a list column ({declared[column]}); "
                              f"add `list: true` to the feature (0..n values per row), or `shape:` for a fixed "
                              "number of values")


def _config_key(config: JobConfig, name: str) -> str:
    """The config key that reads raw column `name` (the first feature that transforms it, for errors)."""
    if config.label and name == config.label.column:
        return f"label.column {name!r}"
    features = config.features_of(name)
    return f"features.{features[0]}" if features else f"features.{name}"


def infer_types(input_config: InputConfig, paths: list[str], lists: list[str] = (), wanted=None) -> dict[str, str]:
    """Column -> "int" | "float" | "bytes"; a list column's kind is its values' (CSV `lists` are split first).

    `wanted` (names): the columns the job reads; a format may refuse only those (a Parquet column's type).
    A column of `input.types` has the type given there.
    """
    declared = input_config.declared_kinds()
    inferred = reader_of(input_config.format).infer_types(input_config, paths, lists, wanted)
    return {name: declared.get(name, kind) for name, kind in inferred.items()}
