"""`skewless verify`: a `VerifyResult` (batch vs serving, and the native preprocessor vs the graph) as rich tables."""

from __future__ import annotations

from rich.text import Text

from skewless.console.fitted_tables import Column, fitted_tables, output_console
from skewless.pipelines.commands.verify import FeatureCheck, VerifyResult
from skewless.terminal_text import shown

# piped or captured with no COLUMNS set: no width to fit, and wrapping would cut a difference's file path apart
_PIPED_WIDTH = 200


def print_result(result: VerifyResult, console=None) -> None:
    console = console or output_console(_PIPED_WIDTH)
    title = f"skew check: batch (Beam + tf.Transform) vs serving ({result.path})"
    tables = []
    if result.features:
        tables += _skew_tables(title, result.features, result.indicators, console.width)
    for group, checks in result.groups.items():
        tables += _skew_tables(f"{title}: {group}", checks, result.indicators, console.width)
    if result.native is not None:
        tables += _native_tables(result.native, result.indicators, console.width)
    for table in tables:
        console.print(table)
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


_SKEW_COLUMNS = [Column("feature", key=True, wrap=True), Column("dtype"),
                 *(Column(header, "right") for header in ("rows", "differences", "max |diff|"))]
_NATIVE_COLUMNS = [Column("feature", key=True, wrap=True), Column("transform"), Column("status"),
                   Column("differences", "right"), Column("reason", wrap=True)]


def _skew_tables(title: str, checks: list[FeatureCheck], indicators: dict[str, str], width: int):
    rows = [[_feature_label(check.name, indicators), check.dtype, str(check.rows), str(check.differences),
             "" if check.max_abs_difference is None else f"{check.max_abs_difference:.3g}"] for check in checks]
    styles = ["red" if check.differences else None for check in checks]
    return fitted_tables(shown(title), _SKEW_COLUMNS, rows, width, row_styles=styles)


def _native_tables(check, indicators: dict[str, str], width: int):
    rows = [[_feature_label(feature.name, indicators), feature.transform, feature.status, str(feature.differences),
             feature.reason or ""] for feature in check.features]
    styles = ["red" if feature.status == "different" else "dim" if feature.status == "unsupported" else None
              for feature in check.features]
    return fitted_tables(f"native Keras preprocessor ({check.backend} backend) vs the graph", _NATIVE_COLUMNS, rows,
                         width, row_styles=styles)
