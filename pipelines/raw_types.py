"""The raw columns of a job and their types: from the config's schema when it has one, else from the data.

Inference looks at the head of the first input only (a CSV's first MB, a Parquet file's schema, the
first TFRecord examples). A CSV column takes the kind most of its values parse as
(`schemas.infer.majority_kind`), and a CSV column whose transform needs numbers (z_score, scale_*,
log, bucketize) is numeric whatever its text; a value that does not fit goes to
quarantine with its reason, so nothing is lost silently. Give a schema to pin the types.
"""

from __future__ import annotations

import collections

import pyarrow as pa
import pyarrow.compute as pc

from skewless.config import NUMERIC_LABEL_TRANSFORMS, InputConfig, JobConfig
from skewless.errors import ConfigError, InputError
from skewless.pipelines.columns import RawColumn

SAMPLE_BYTES = 1 << 20
SAMPLE_RECORDS = 1000


def resolve_columns(config: JobConfig, input_config: InputConfig, paths: list[str]) -> list[RawColumn]:
    feature_lists = None  # the feature lists the schema declares, when there is one
    if config.schema_path:
        from skewless.schemas import load_schema, schema_types
        from skewless.schemas.schema_io import feature_list_names

        schema = load_schema(config.schema_path)
        types = schema_types(schema)
        feature_lists = set(feature_list_names(schema))
        source = config.schema_path
    else:
        lists = [n for n, f in config.features.items() if f.is_list]
        types = infer_types(input_config, paths, lists, wanted=set(config.raw_columns))
        source = paths[0] if paths else "the synthetic dataset"
        for name, feature in config.features.items():
            if input_config.format == "csv" and types.get(name) == "bytes" and feature.transform_kind.needs == "number":
                types[name] = "float"  # its text is mostly not numbers: those rows go to quarantine
    if input_config.format == "parquet":
        _check_parquet_types(paths, config.raw_columns)
    columns = []
    for name in config.raw_columns:
        key = f"label.column {name!r}" if config.label and name == config.label.column else f"features.{name}"
        if name not in types:
            raise ConfigError(f"{key}: no column {name!r} in {source} (columns: {', '.join(types)})")
        feature = config.features.get(name)
        default = feature.default if feature else None
        fill = feature.fill if feature else None
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
        if default is not None and kind != "bytes" and not isinstance(default, (int, float)):
            raise ConfigError(f"features.{name}.default: {default!r} is not a number, and {name} is {kind}")
        if fill in ("mean", "median") and kind == "bytes":
            raise ConfigError(f"features.{name}.fill: {fill} needs a numeric column, and {name} holds strings")
        is_list = feature is not None and feature.is_list
        sequence = feature is not None and feature.sequence
        if feature_lists is not None and sequence != (name in feature_lists):
            declared = "a feature list (in its STRUCT)" if name in feature_lists else "a context feature"
            raise ConfigError(f"{key}: {source} declares {name!r} {declared}; "
                              f"the config says sequence: {str(sequence).lower()}")
        optional = default is not None or fill is not None or is_list or sequence
        image = feature is not None and feature.transform_kind.image
        columns.append(RawColumn(name, kind, optional=optional, default=default, is_list=is_list, image=image,
                                 sequence=sequence))
    return columns


def infer_types(input_config: InputConfig, paths: list[str], lists: list[str] = (), wanted=None) -> dict[str, str]:
    """Column -> "int" | "float" | "bytes"; a list column's kind is its values' (CSV `lists` are split first).

    A Parquet column of a type `plain_type` refuses is an error only when `wanted` (names) holds it:
    columns the job does not read may have any type.
    """
    if input_config.format == "synthetic":
        from skewless.pipelines.synthetic import COLUMNS

        return dict(COLUMNS)
    if input_config.format == "parquet":
        from skewless.pipelines.reading.parquet import parquet_file, plain_type

        with parquet_file(paths[0]) as parquet:
            arrow = parquet.schema_arrow
        kinds = {}
        for field in arrow:
            try:
                kinds[field.name] = _kind(plain_type(field.type, f"{paths[0]}: column {field.name!r}"))
            except InputError:
                if wanted is None or field.name in wanted:
                    raise
        return kinds
    if input_config.format == "tfrecord":
        return _tfrecord_types(paths[0], input_config.record)
    if input_config.format == "python":
        return _generator_types(input_config)
    return _csv_types(input_config, paths[0], lists)


def _check_parquet_types(paths: list[str], names: list[str]) -> None:
    """Refuses, before any worker starts, a read column whose Arrow type no plain type takes, in any input."""
    from skewless.pipelines.reading.parquet import parquet_file, plain_type

    for path in paths:
        with parquet_file(path) as parquet:
            arrow = parquet.schema_arrow
        for field in arrow:
            if field.name in names:
                plain_type(field.type, f"{path}: column {field.name!r}")


def _generator_types(input_config: InputConfig) -> dict[str, str]:
    """Types from the first rows of shard 0 of 1: int, float (any float seen), else bytes."""
    import itertools

    from skewless.references import import_function

    generator = import_function(input_config.generator, "input.generator")
    kinds: dict[str, str] = {}
    order = {"int": 0, "float": 1, "bytes": 2}
    for row in itertools.islice(generator(shard=0, num_shards=1, **input_config.args), SAMPLE_RECORDS):
        if not isinstance(row, dict):
            raise InputError(f"input.generator {input_config.generator!r} yields {type(row).__name__}, not dicts")
        for name, value in row.items():
            if value is None:
                continue
            kind = "int" if isinstance(value, int) else "float" if isinstance(value, float) else "bytes"
            previous = kinds.get(name)
            if previous is None or order[kind] > order[previous]:
                kinds[name] = kind
    if not kinds:
        raise InputError(f"input.generator {input_config.generator!r} yields no rows for shard 0 of 1")
    return kinds


def _values_type(arrow_type: pa.DataType) -> pa.DataType:
    while pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        arrow_type = arrow_type.value_type
    return arrow_type


def _kind(arrow_type: pa.DataType) -> str:
    while pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        arrow_type = arrow_type.value_type
    if pa.types.is_integer(arrow_type) or pa.types.is_boolean(arrow_type):
        return "int"
    if pa.types.is_floating(arrow_type):
        return "float"
    return "bytes"


def _csv_types(input_config: InputConfig, path: str, lists=()) -> dict[str, str]:
    """Kinds of the columns of the file's first MB, split and typed as the job reads them: lines that are not
    UTF-8 or not well-formed are left out, and a column takes the kind most of its values parse as."""
    from skewless.pipelines.reading.csv import parse_csv_block, read_head
    from skewless.schemas.infer import majority_kind, text_counts

    head = read_head(path, input_config, SAMPLE_BYTES)
    names = list(input_config.columns or [])
    table = parse_csv_block(head, names, input_config.delimiter, input_config.skip_initial_space).batch
    types = {}
    for name in names:
        values = table.column(name)
        if name in lists:
            values = pc.utf8_trim_whitespace(pc.list_flatten(pc.split_pattern(values, input_config.list_delimiter)))
        types[name] = majority_kind(text_counts(values, input_config.missing_tokens(name)))
    return types


def _tfrecord_types(path: str, record: str) -> dict[str, str]:
    """Kinds of the features (context features and feature lists alike) of the file's first records."""
    from skewless.pipelines.reading.tfrecord import decode_examples, read_records, record_decoder
    from skewless.sequence_specs import SEQUENCE_COLUMN

    records = list(read_records(path, 0, SAMPLE_RECORDS))  # damage is an InputError with the offset
    decoder, message = record_decoder(record)
    # records that do not decode are left out here (the job quarantines them)
    batches = [source.batch for source in decode_examples(decoder, records, path, 1, message) if source.batch.num_rows]
    if records and not batches:
        raise InputError(f"{path}: none of the first {len(records)} records is a {message}")
    # a feature's kind is the one most of its records hold, as a CSV column's type is its values' majority
    # ("Types without a schema"): the records of another kind are then quarantined, not a crash here
    rows: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for batch in batches:
        fields = [field for field in batch.schema if field.name != SEQUENCE_COLUMN]
        if SEQUENCE_COLUMN in batch.schema.names:
            fields += list(batch.schema.field(SEQUENCE_COLUMN).type)
        for field in fields:
            if not pa.types.is_null(_values_type(field.type)):  # a feature with no value in any of these records
                rows[field.name][_kind(field.type)] += batch.num_rows
    names = dict.fromkeys(field.name for batch in batches for field in batch.schema if field.name != SEQUENCE_COLUMN)
    names.update(dict.fromkeys(rows))  # in the order the records first name them, feature lists last
    return {name: rows[name].most_common(1)[0][0] if rows[name] else "bytes" for name in names}
