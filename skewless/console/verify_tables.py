"""`skewless verify`: a `VerifyResult` (batch vs serving, and the native preprocessor vs the graph) as rich tables."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from skewless.pipelines.commands.verify import FeatureCheck, VerifyResult
from skewless.terminal_text import shown


def print_result(result: VerifyResult, console=None) -> None:
    console = console or Console()
    title = f"skew check: batch (Beam + tf.Transform) vs serving ({result.path})"
    if result.features:
        console.print(_skew_table(title, result.features, result.indicators))
    for group, checks in result.groups.items():
        console.print(_skew_table(f"{title}: {group}", checks, result.indicators))
    if result.native is not None:
        console.print(_native_table(result.native, result.indicators))
    if result.source is not None:
        source = result.source
        console.print(f"the input's first {source.rows} rows as the source holds them ({source.written} written, "
                      f"{source.quarantined} quarantined): shards vs every serving path")
        for difference in source.differences:
            console.print(f"  difference: {difference.line()}", style="red", markup=False, highlight=False)
    for what, reason in result.unchecked.items():
        console.print(Text(shown(f"could not check: {what}: {reason}"), style="yellow"))
    verdict = "no differences" if not result.differences else f"{result.differences} differences"
    if result.unchecked and not result.differences:
        verdict += f" in what could be checked ({len(result.unchecked)} checks could not run)"
    console.print(f"{result.rows} sampled rows + {result.unseen_rows} with unseen categories: {verdict}")


def _feature_label(name: str, indicators: dict[str, str]) -> Text:
    """A feature's name in a table, saying what a missing indicator is: `w_missing` could be a column's name."""
    return Text(shown(f"{name} (missing indicator of {indicators[name]})" if name in indicators else name))


def _skew_table(title: str, checks: list[FeatureCheck], indicators: dict[str, str]):
    table = Table(title=Text(shown(title)))
    for column in ("feature", "dtype", "rows", "differences", "max |diff|"):
        table.add_column(column, justify="left" if column in ("feature", "dtype") else "right")
    for check in checks:
        gap = "" if check.max_abs_difference is None else f"{check.max_abs_difference:.3g}"
        style = "red" if check.differences else None
        table.add_row(_feature_label(check.name, indicators), check.dtype, str(check.rows), str(check.differences), gap,
                      style=style)
    return table


def _native_table(check, indicators: dict[str, str]):
    native = Table(title=f"native Keras preprocessor ({check.backend} backend) vs the graph")
    for column in ("feature", "transform", "status", "differences", "reason"):
        native.add_column(column, justify="right" if column == "differences" else "left")
    for feature in check.features:
        style = "red" if feature.status == "different" else "dim" if feature.status == "unsupported" else None
        native.add_row(_feature_label(feature.name, indicators), feature.transform, feature.status,
                       str(feature.differences), Text(shown(feature.reason or "")), style=style)
    return native
