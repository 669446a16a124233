"""`skewless inspect`: a run's description (`skewless.inspect_run.describe_run`) as rich tables."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from skewless.report.data_warnings import constant_warning, date_range_text
from skewless.report.run_files import format_bytes, format_number, format_percent, format_statistic, no_frequent_value
from skewless.terminal_text import shown


def print_run(description: dict, console=None) -> None:
    """Prints `describe_run`'s result as rich tables."""
    if console is None:
        console = Console()
        if not console.is_terminal:
            # piped into a file or a pager: wide lines beat statistics cut to "185,1…"
            console = Console(width=max(console.width, 160))
    rows = description["rows"]
    written = ", ".join(f"{split} {format_number(n)}" for split, n in rows["written"].items())
    label = (description.get("label") or {}).get("column")
    console.print(
        f"[bold]{escape(shown(description['name'] or ''))}[/bold]  {escape(shown(description['run_dir']))}\n"
        f"rows read {format_number(rows['read'])}, written {written}, quarantined {format_number(rows['quarantined'])}"
        + (f", unlabeled (left out) {format_number(rows['unlabeled'])}" if rows.get("unlabeled") is not None else "")
        + (f"; label {escape(shown(label))}" if label else "")
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
    stats.add_column("worth knowing")
    for name, f in description["features"].items():
        notes = [note for note in (constant_warning(f), date_range_text(f) and f"dates {date_range_text(f)}") if note]
        _add_row(
            stats, name, f.get("transform", ""), format_number(f.get("count")), format_percent(f.get("missing_fraction")),
            *(format_number(f.get(key)) for key in ("mean", "std", "min", "max")), format_statistic(f, "distinct"),
            "; ".join(notes),
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
            listed = ", ".join(f"{value} ({format_statistic(f, 'top_values', count)})"
                              for value, count in f["top_values"][:5])
            _add_row(top_values, name, listed)
        elif no_frequent_value(f):
            _add_row(top_values, name, no_frequent_value(f))
    if vocabularies.row_count:
        console.print(vocabularies)
    if top_values.row_count:
        console.print(top_values)

    _print_split_statistics(description.get("split_statistics", {}), console)

    shards = Table(title=f"Shards ({description.get('compression')})", title_justify="left",
                   caption=shard_reading(description.get("compression")), caption_justify="left")
    shards.add_column("split")
    shards.add_column("file")
    shards.add_column("rows", justify="right")
    shards.add_column("size", justify="right")
    for split, files in description["shards"].items():
        for shard in files:
            _add_row(shards, split, shard["path"], format_number(shard["rows"]), format_bytes(shard["bytes"]))
    console.print(shards)


def shard_reading(compression: str | None) -> str:
    """How tf.data reads the shards: gzip ones need compression_type, or every record is "corrupted at 0"."""
    argument = ', compression_type="GZIP"' if compression == "gzip" else ""
    return f"read: tf.data.TFRecordDataset(files{argument})"


def _print_split_statistics(split_statistics: dict, console) -> None:
    """One row per feature and split, from the statistics protos: is each split like the others?"""
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
    """A row of data: never read as rich markup (values like "[x]" are data), control characters escaped."""
    table.add_row(*(Text(shown(cell)) for cell in cells))


def _shape(spec: dict) -> str:
    if spec["kind"] == "ragged":  # a feature list: steps of values
        return "[None, None]"
    return "[" + ", ".join(str(d) for d in spec.get("shape", [])) + "]" if spec["kind"] == "fixed" else "[None]"
