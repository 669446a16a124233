"""`skewless inspect`: a run's description (`skewless.inspect_run.describe_run`) as rich tables that fit the
terminal (skewless/console/fitted_tables.py: a number is never cut; a table too wide is split)."""

from __future__ import annotations

from rich.markup import escape

from skewless.console.fitted_tables import Column, fitted_tables, output_console
from skewless.report.data_warnings import constant_warning, date_range_text
from skewless.report.run_files import format_bytes, format_number, format_percent, format_statistic, no_frequent_value
from skewless.terminal_text import shown

# piped into a file or a pager with no COLUMNS set: wide lines, each table whole
_PIPED_WIDTH = 160
_FEATURE = Column("feature", key=True)


def print_run(description: dict, console=None) -> None:
    """Prints `describe_run`'s result as rich tables."""
    console = console or output_console(_PIPED_WIDTH)
    rows = description["rows"]
    written = ", ".join(f"{split} {format_number(n)}" for split, n in rows["written"].items())
    label = (description.get("label") or {}).get("column")
    console.print(
        f"[bold]{escape(shown(description['name'] or ''))}[/bold]  {escape(shown(description['run_dir']))}\n"
        f"rows read {format_number(rows['read'])}, written {written}, quarantined {format_number(rows['quarantined'])}"
        + (f", unlabeled (left out) {format_number(rows['unlabeled'])}" if rows.get("unlabeled") is not None else "")
        + (f"; label {escape(shown(label))}" if label else "")
    )

    def show(title: str, columns: list[Column], rows: list[list[str]], **options) -> None:
        for table in fitted_tables(title, columns, rows, console.width, **options):
            console.print(table)

    kinds = {"fixed": "required", "var": "optional (VarLen)", "ragged": "feature list (steps of values)"}
    defaults = {name: f.get("default") for name, f in description["features"].items()}
    show("Raw features (schema)", [_FEATURE, *map(Column, ("dtype", "kind", "shape", "default"))],
         [[name, spec["dtype"], kinds[spec["kind"]], _shape(spec), "" if defaults.get(name) is None else
           str(defaults[name])] for name, spec in description["raw_features"].items()])
    show("Transformed features", [_FEATURE, *map(Column, ("dtype", "kind", "shape"))],
         [[name, spec["dtype"], spec["kind"], _shape(spec)] for name, spec in description["transformed_features"].items()])
    show("Statistics of the raw values",
         [_FEATURE, Column("transform"), *(Column(c, "right") for c in ("count", "missing", "mean", "std", "min", "max",
                                                                          "distinct")), Column("worth knowing", wrap=True)],
         [[name, f.get("transform", ""), format_number(f.get("count")), format_percent(f.get("missing_fraction")),
           *(format_number(f.get(key)) for key in ("mean", "std", "min", "max")), format_statistic(f, "distinct"),
           _worth_knowing(f)]
          for name, f in description["features"].items()])

    vocabularies, top_values = [], []
    for name, f in description["features"].items():
        vocabulary = f.get("vocabulary")
        if vocabulary:
            vocabularies.append([name, format_number(vocabulary["size"]), format_number(vocabulary["num_oov_buckets"]),
                                 format_percent(vocabulary["oov_rate"]), ", ".join(vocabulary["head"])])
        if f.get("top_values"):
            top_values.append([name, ", ".join(f"{value} ({format_statistic(f, 'top_values', count)})"
                                               for value, count in f["top_values"][:5])])
        elif no_frequent_value(f):
            top_values.append([name, no_frequent_value(f)])
    if vocabularies:
        show("Vocabularies", [_FEATURE, *(Column(c, "right") for c in ("size", "OOV buckets", "OOV rate")),
                              Column("first entries", wrap=True)], vocabularies)
    if top_values:
        show("Most frequent raw values", [_FEATURE, Column("values (rows)", wrap=True)], top_values)

    _print_split_statistics(description.get("split_statistics", {}), show)

    show(f"Shards ({description.get('compression')})",
         [Column("split", key=True), Column("file"), Column("rows", "right"), Column("size", "right")],
         [[split, shard["path"], format_number(shard["rows"]), format_bytes(shard["bytes"])]
          for split, files in description["shards"].items() for shard in files],
         caption=shard_reading(description.get("compression")))


def shard_reading(compression: str | None) -> str:
    """How tf.data reads the shards: gzip ones need compression_type, or every record is "corrupted at 0"."""
    argument = ', compression_type="GZIP"' if compression == "gzip" else ""
    return f"read: tf.data.TFRecordDataset(files{argument})"


def _print_split_statistics(split_statistics: dict, show) -> None:
    """One row per feature and split, from the statistics protos: is each split like the others?"""
    if not split_statistics:
        return
    rows = []
    splits = list(split_statistics)
    for name in split_statistics[splits[0]]["features"]:
        for split in splits:
            f = split_statistics[split]["features"].get(name)
            if f is None:
                continue
            top = f.get("top_values") or []
            rows.append([
                name, split, format_number(f["num_non_missing"]), format_number(f["num_missing"]),
                *(format_number(f.get(key)) for key in ("mean", "std_dev", "min", "median", "max", "unique")),
                f"{top[0][0]} ({format_number(top[0][1])})" if top else "",
            ])
    show("Statistics per split (statistics/Split-*/FeatureStats.pb; ~ median: from a sketch)",
         [_FEATURE, Column("split", key=True),
          *(Column(c, "right") for c in ("present", "missing", "mean", "std", "min", "~ median", "max", "unique")),
          Column("top value", wrap=True)], rows)


def _shape(spec: dict) -> str:
    if spec["kind"] == "ragged":  # a feature list: steps of values
        return "[None, None]"
    return "[" + ", ".join(str(d) for d in spec.get("shape", [])) + "]" if spec["kind"] == "fixed" else "[None]"


def _worth_knowing(feature: dict) -> str:
    """A constant column, a datetime's range of dates: what the numbers beside them do not say."""
    dates = date_range_text(feature)
    return "; ".join(note for note in (constant_warning(feature), dates and f"dates {dates}") if note)
