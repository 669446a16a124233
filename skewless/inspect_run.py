"""`skewless inspect RUN_DIR`: what a run holds, as tables on a terminal or as JSON.

The schema (raw feature spec) and the transformed spec come from the graph's own schemas, as do the
vocabularies; statistics, shards and row counts come from
the run summary (`RunDirectory.read_summary`). Apache Beam is never imported, and
TensorFlow (seconds) only for a schema with more than plain fixed-shape and variable-length features
(feature lists, ragged or sparse tensors), whose specs tf.Transform's own conversion gives.
"""

from __future__ import annotations

import os

from skewless.errors import InputError
from skewless.report.run_files import (
    format_bytes,
    format_number,
    format_percent,
    format_statistic,
    oov_rate,
    run_statistics,
    split_order,
    vocabulary_file,
)
from skewless.run_directory import RunDirectory
from skewless.safe_names import vocabulary_filename
from skewless.statistics_files import describe_statistics, read_statistics, statistics_splits

# The statistics of run.json that `describe_run` passes through for each feature.
_STATISTICS = ("count", "missing", "missing_fraction", "mean", "std", "min", "max", "quantiles", "distinct",
               "top_values", "histogram", "exact")


def describe_run(run_dir: str | os.PathLike, top: int = 10) -> dict:
    """Everything `inspect` shows, as plain JSON-ready data.

    Keys: name, run_dir, rows, label, raw_features and transformed_features (tf.io specs as
    {"kind": "fixed"|"var", "dtype", "shape", "default"}), features (transform, kind, type, the
    run.json statistics, and for vocabulary features ``vocabulary``: {file, size, num_oov_buckets,
    oov_rows, oov_rate, head: the first `top` entries, most frequent first}), shards,
    split_statistics (per split, `statistics_files.describe_statistics` of its FeatureStats.pb), compression,
    seconds, versions.
    """
    from skewless.pipelines import files, object_store

    shown = os.fspath(run_dir) if not files.is_local(os.fspath(run_dir)) else os.path.abspath(run_dir)
    run_dir = object_store.local_run(run_dir)
    run = RunDirectory.of(run_dir)
    summary = run_statistics(run)
    raw_features, transformed_features = _specs(run)
    features = {}
    for name, stats in summary.features.items():
        entry = {key: stats[key] for key in ("transform", "kind", "type", "default") if key in stats}
        entry.update({key: stats[key] for key in _STATISTICS if key in stats})
        if "vocabulary_size" in stats:
            filename = stats.get("vocabulary_file") or vocabulary_filename(name)  # runs before it was recorded
            values = vocabulary_file(run, filename)
            if values is None:
                raise InputError(f"{run_dir}: the graph has no vocabulary file {filename}")
            entry["vocabulary"] = {
                "file": filename,
                "size": len(values),
                "num_oov_buckets": stats.get("num_oov_buckets"),
                "oov_rows": stats.get("oov_rows"),
                "oov_rate": oov_rate(summary, stats),
                "head": values[:top],
            }
        features[name] = entry
    splits = split_order(summary, run.read_config())
    dumped = summary.model_dump()
    rows = dict(summary.rows.model_dump(exclude_none=True),
                written={split: summary.rows.written[split] for split in splits})
    shards = dumped["shards"]
    return {
        "name": summary.name,
        "run_dir": shown,
        "rows": rows,
        "label": dumped["label"],
        "raw_features": raw_features,
        "transformed_features": transformed_features,
        "features": features,
        "shards": {split: shards[split] for split in splits if split in shards},
        # statistics/Split-*/FeatureStats.pb; {} for runs written before they existed
        "split_statistics": {split: describe_statistics(read_statistics(run_dir, split))
                             for split in splits if split in statistics_splits(run_dir)},
        "compression": summary.compression,
        "seconds": summary.seconds,
        "versions": summary.versions,
    }


def _specs(run: RunDirectory) -> tuple[dict, dict]:
    """The raw and the transformed feature specs of the run's graph, as `spec_to_json` writes them."""
    schemas = [os.path.join(folder, "schema.pbtxt") for folder in (run.raw_metadata_dir, run.transformed_metadata_dir)]
    plain = [_plain_specs(schema) for schema in schemas]
    if None not in plain:
        return plain[0], plain[1]
    import tensorflow_transform as tft

    from skewless.layers.transform_graph import find_graph_dir, specs_to_json

    graph = tft.TFTransformOutput(find_graph_dir(run.path))
    try:
        raw_spec = graph.raw_feature_spec()
    except Exception as error:  # tf.Transform raises plain errors when metadata/ is missing or unreadable
        raise InputError(f"{run.path}: cannot read the raw schema of the graph: {error}") from None
    return specs_to_json(raw_spec), specs_to_json(graph.transformed_feature_spec())


# tf.metadata's feature types -> the dtype tf.Transform parses them as
_DTYPES = {"INT": "int64", "FLOAT": "float32", "BYTES": "string"}


def _plain_specs(schema_path: str) -> dict | None:
    """The specs of a schema whose features are all plain: a fixed shape (FixedLenFeature, no default) or
    none (VarLenFeature), as tf.Transform reads them (tests/cli/test_inspect.py compares). None for anything
    else (no file, feature lists, sparse or ragged tensors): those take tf.Transform's own conversion."""
    from google.protobuf import text_format
    from tensorflow_metadata.proto.v0 import schema_pb2

    try:
        with open(schema_path, encoding="utf-8") as handle:
            schema = text_format.Parse(handle.read(), schema_pb2.Schema())
    except (OSError, text_format.ParseError):
        return None
    if schema.sparse_feature or schema.tensor_representation_group or schema.weighted_feature:
        return None
    specs = {}
    for feature in schema.feature:
        dtype = _DTYPES.get(schema_pb2.FeatureType.Name(feature.type))
        if dtype is None or feature.deprecated or feature.HasField("lifecycle_stage"):
            return None
        if not feature.HasField("shape"):
            specs[feature.name] = {"kind": "var", "dtype": dtype}
        elif all(dim.size >= 0 for dim in feature.shape.dim):
            specs[feature.name] = {"kind": "fixed", "dtype": dtype, "shape": [dim.size for dim in feature.shape.dim],
                                   "default": None}
        else:
            return None
    return dict(sorted(specs.items()))


def print_run(description: dict, console=None) -> None:
    """Prints `describe_run`'s result as rich tables."""
    from rich.console import Console
    from rich.table import Table

    if console is None:
        console = Console()
        if not console.is_terminal:
            # piped into a file or a pager: wide lines beat statistics cut to "185,1…"
            console = Console(width=max(console.width, 160))
    rows = description["rows"]
    written = ", ".join(f"{split} {format_number(n)}" for split, n in rows["written"].items())
    label = (description.get("label") or {}).get("column")
    console.print(
        f"[bold]{_markup(description['name'] or '')}[/bold]  {_markup(description['run_dir'])}\n"
        f"rows read {format_number(rows['read'])}, written {written}, quarantined {format_number(rows['quarantined'])}"
        + (f", unlabeled (left out) {format_number(rows['unlabeled'])}" if rows.get("unlabeled") is not None else "")
        + (f"; label {_markup(label)}" if label else "")
    )

    raw = Table(title="Raw features (schema)", title_justify="left")
    for column in ("feature", "dtype", "kind", "shape", "default"):
        raw.add_column(column)
    defaults = {name: f.get("default") for name, f in description["features"].items()}
    for name, spec in description["raw_features"].items():
        kinds = {"fixed": "required", "var": "optional (VarLen)", "ragged": "feature list (steps of values)"}
        kind = kinds[spec["kind"]]
        default = defaults.get(name)
        _add_row(raw, name, spec["dtype"], kind, _shape(spec), "" if default is None else str(default))
    console.print(raw)

    transformed = Table(title="Transformed features", title_justify="left")
    for column in ("feature", "dtype", "kind", "shape"):
        transformed.add_column(column)
    for name, spec in description["transformed_features"].items():
        _add_row(transformed, name, spec["dtype"], spec["kind"], _shape(spec))
    console.print(transformed)

    stats = Table(title="Statistics of the raw values", title_justify="left")
    stats.add_column("feature")
    stats.add_column("transform")
    for column in ("count", "missing", "mean", "std", "min", "max", "distinct"):
        stats.add_column(column, justify="right")
    for name, f in description["features"].items():
        _add_row(
            stats, name, f.get("transform", ""), format_number(f.get("count")), format_percent(f.get("missing_fraction")),
            *(format_number(f.get(key)) for key in ("mean", "std", "min", "max")), format_statistic(f, "distinct"),
        )
    console.print(stats)

    vocabularies = Table(title="Vocabularies", title_justify="left")
    vocabularies.add_column("feature")
    for column in ("size", "OOV buckets", "OOV rate"):
        vocabularies.add_column(column, justify="right")
    vocabularies.add_column("first entries")
    top_values = Table(title="Most frequent raw values", title_justify="left")
    top_values.add_column("feature")
    top_values.add_column("values (rows)")
    for name, f in description["features"].items():
        vocabulary = f.get("vocabulary")
        if vocabulary:
            _add_row(
                vocabularies, name, format_number(vocabulary["size"]), format_number(vocabulary["num_oov_buckets"]),
                format_percent(vocabulary["oov_rate"]), ", ".join(vocabulary["head"]),
            )
        if f.get("top_values"):
            shown = ", ".join(f"{value} ({format_statistic(f, 'top_values', count)})"
                              for value, count in f["top_values"][:5])
            _add_row(top_values, name, shown)
    if vocabularies.row_count:
        console.print(vocabularies)
    if top_values.row_count:
        console.print(top_values)

    _print_split_statistics(description.get("split_statistics", {}), console)

    shards = Table(title=f"Shards ({description.get('compression')})", title_justify="left")
    shards.add_column("split")
    shards.add_column("file")
    shards.add_column("rows", justify="right")
    shards.add_column("size", justify="right")
    for split, files in description["shards"].items():
        for shard in files:
            _add_row(shards, split, shard["path"], format_number(shard["rows"]), format_bytes(shard["bytes"]))
    console.print(shards)


def _print_split_statistics(split_statistics: dict, console) -> None:
    """One row per feature and split, from the statistics protos: is each split like the others?"""
    from rich.table import Table

    if not split_statistics:
        return
    table = Table(title="Statistics per split (statistics/Split-*/FeatureStats.pb; ~ median: from a sketch)",
                  title_justify="left")
    table.add_column("feature")
    table.add_column("split")
    for column in ("present", "missing", "mean", "std", "min", "~ median", "max", "unique", "top value"):
        table.add_column(column, justify="right")
    splits = list(split_statistics)
    for name in split_statistics[splits[0]]["features"]:
        for split in splits:
            f = split_statistics[split]["features"].get(name)
            if f is None:
                continue
            top = f.get("top_values") or []
            _add_row(
                table, name, split, format_number(f["num_non_missing"]), format_number(f["num_missing"]),
                *(format_number(f.get(key)) for key in ("mean", "std_dev", "min", "median", "max", "unique")),
                f"{top[0][0]} ({format_number(top[0][1])})" if top else "",
            )
    console.print(table)


def _add_row(table, *cells: str) -> None:
    """A row of data: shown as is, never read as rich markup (values like "[x]" are data)."""
    from rich.text import Text

    table.add_row(*(Text(cell) for cell in cells))


def _shape(spec: dict) -> str:
    if spec["kind"] == "ragged":  # a feature list: steps of values
        return "[None, None]"
    return "[" + ", ".join(str(d) for d in spec.get("shape", [])) + "]" if spec["kind"] == "fixed" else "[None]"


def _markup(text: str) -> str:
    from rich.markup import escape

    return escape(text)
