"""The report's HTML: one page, inline CSS and inline SVG, nothing fetched (no scripts, fonts or images).

Every value that comes from the data or the config goes through `html.escape`: feature names, top
values and quarantined rows are arbitrary text.
"""

from __future__ import annotations

from html import escape

from skewless.report import svg
from skewless.report.data_warnings import date_range_text
from skewless.report.split_section import advice_line, feature_warnings, split_block, warnings_list
from skewless.report.split_views import SplitView
from skewless.transforms import TRANSFORMS
from skewless.report.run_files import (
    QuarantineReasons,
    format_bytes,
    format_number,
    format_percent,
    format_statistic,
    no_frequent_value,
    oov_rate,
    split_order,
)
from skewless.run_directory import CONFIG_FILE
from skewless.run_summary import RunSummary

_QUARANTINE_EXAMPLE_CHARS = 160
_SHOWN_REASONS = 50
QUARANTINE_ANCHOR = "quarantine"  # the quarantine section's id, linked from the summary's card

CSS = """
:root { --fg:#1d2330; --muted:#5d6677; --bg:#ffffff; --panel:#f4f6fa; --line:#d9dee8;
        --bar:#3b6fd4; --oov:#e0822d; --mark:#c23b4a; --accent:#3b6fd4; }
@media (prefers-color-scheme: dark) {
  :root { --fg:#e4e8f0; --muted:#9aa4b6; --bg:#14171d; --panel:#1d222b; --line:#313846;
          --bar:#6f9bf0; --oov:#f0a060; --mark:#f07080; --accent:#8fb2f5; }
}
* { box-sizing: border-box; }
body { margin: 0; padding: 24px 32px 48px; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif;
       color: var(--fg); background: var(--bg); }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 32px 0 10px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
h3 { font-size: 15px; margin: 0 0 8px; }
a { color: var(--accent); }
.sub, .muted { color: var(--muted); }
.cards { display: flex; flex-wrap: wrap; gap: 12px; margin-top: 16px; }
.card { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 10px 14px; min-width: 150px; }
.card .value { font-size: 20px; font-weight: 600; }
.card .label { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
table { border-collapse: collapse; margin: 4px 0 12px; }
th, td { text-align: left; padding: 3px 10px 3px 0; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; color: var(--muted); }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.row { display: flex; flex-wrap: wrap; gap: 28px; align-items: flex-start; }
caption { text-align: left; }
.feature { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 14px 16px; margin: 14px 0; }
.badge { display: inline-block; font-size: 12px; font-weight: 500; padding: 1px 8px; margin-left: 6px; border-radius: 10px;
         background: var(--bg); border: 1px solid var(--line); color: var(--muted); vertical-align: middle; }
.chart { display: block; max-width: 100%; height: auto; overflow: visible; }
.chart .bar { fill: var(--bar); }
.chart .bar-oov { fill: var(--oov); }
.chart .axis { stroke: var(--muted); stroke-width: 1; }
.chart .mark { stroke: var(--mark); stroke-width: 1.5; stroke-dasharray: 4 3; }
.chart text { font-size: 11px; fill: var(--fg); }
.chart .mark-label { fill: var(--mark); }
.legend { font-size: 12px; color: var(--muted); }
.swatch { display: inline-block; width: 10px; height: 10px; margin: 0 4px 0 10px; border-radius: 2px; }
figure { margin: 0; }
pre { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: 10px; overflow: auto; }
code { font-size: 12px; }
details summary { cursor: pointer; color: var(--accent); }
.features { display: grid; grid-template-columns: repeat(auto-fill, minmax(600px, 1fr)); gap: 14px; }
.features .feature { margin: 0; }
.splits { margin-top: 10px; }
h4 { font-size: 13px; margin: 0 0 6px; }
.distance { font-weight: 500; color: var(--muted); margin-left: 8px; }
.chart .split { fill-opacity: .55; }
.split-0 { fill: var(--bar); background: var(--bar); }
.split-1 { fill: var(--oov); background: var(--oov); }
.split-2 { fill: var(--mark); background: var(--mark); }
.swatch.split-0, .swatch.split-1, .swatch.split-2 { opacity: .7; }
.share-track { display: inline-block; width: 90px; margin-left: 6px; vertical-align: middle; }
.share { display: block; height: 8px; max-width: 100%; opacity: .7; }
.quantiles-legend { margin: 8px 0 0; }
.quantiles { display: flex; flex-wrap: wrap; gap: 4px 14px; list-style: none; padding: 0; margin: 4px 0 12px;
             font-variant-numeric: tabular-nums; }
.quantiles li { display: flex; flex-direction: column; align-items: flex-end; }
.quantiles .at { font-weight: 600; color: var(--muted); }
table.split-values td.num { white-space: nowrap; }
.warnings { margin: 8px 0 0; padding-left: 18px; color: var(--mark); }
.verdict-crossed { color: var(--mark); font-weight: 600; }
.advice { margin: 8px 0 0; font-weight: 500; }
.zeros { margin: 0 0 4px; }
"""


def render_page(run_dir: str, summary: RunSummary, config: dict, reasons: QuarantineReasons, vocabularies: dict,
                config_text: str, views: dict[str, SplitView]) -> str:
    """The whole report page as a string; `views`: each feature's splits side by side ({} without statistics)."""
    name = summary.name
    features = summary.features
    splits = split_order(summary, config)
    options = {feature: config.get("features", {}).get(feature, {}) or {} for feature in features}
    warnings = {feature: feature_warnings(features[feature], options[feature], oov_rate(summary, features[feature]))
                for feature in features}
    body = [
        f"<header><h1>Run report: {escape(name)}</h1>"
        f'<div class="sub"><code>{escape(run_dir)}</code></div></header>',
        cards(summary, splits),
        _feature_index(summary),
        _label(summary, views),
        _warnings_index(warnings),
        _run_details(summary, splits),
        "<h2>Features</h2>",
        '<div class="features">',
        # the splits' statistics are the raw column's: a feature of another column (`column:`) shows that one's
        *(_feature(summary, feature, features[feature], options[feature], vocabularies.get(feature),
                   views.get(features[feature].get("column", feature)), warnings[feature]) for feature in features),
        "</div>",
        quarantine_section(summary, reasons),
        f"<h2>Config</h2><details><summary>{CONFIG_FILE}</summary>"
        f"<pre><code>{escape(config_text)}</code></pre></details>" if config_text else "",
    ]
    return html_document(f"skewless run report: {name}", body)


def html_document(title: str, body: list[str]) -> str:
    """The page around `body`: inline CSS, nothing fetched."""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        # an empty data: icon, so the browser does not go looking for /favicon.ico
        '<link rel="icon" href="data:,">'
        f"<title>{escape(title)}</title><style>{CSS}</style></head>"
        f"<body>{''.join(body)}</body></html>\n"
    )


def cards(summary: RunSummary, splits: list[str]) -> str:
    rows = summary.rows
    read, quarantined = rows.read, rows.quarantined
    shards = [shard for split in summary.shards.values() for shard in split]
    cards = [("rows read", format_number(read), "")]
    for split in splits:
        count = rows.written[split]
        cards.append((f"{split} rows", format_number(count), format_percent(count / read) if read else ""))
    cards.append(("quarantined", format_number(quarantined), format_percent(quarantined / read) if read else ""))
    if rows.unlabeled is not None:  # left out on purpose (label.missing: drop): not bad data
        cards.append(("unlabeled, left out", format_number(rows.unlabeled),
                      format_percent(rows.unlabeled / read) if read else ""))
    cards.append(("shards", format_number(len(shards)), format_bytes(sum(s.bytes for s in shards))))
    total = summary.seconds.get("total")
    if total is not None:
        cards.append(("seconds", format_number(total), ""))
    html = []
    for label, value, note in cards:
        note_html = f' <span class="muted">{escape(note)}</span>' if note else ""
        shown = escape(value)
        if label == "quarantined" and quarantined:  # the reasons sit at the bottom of a long page
            shown = f'<a href="#{QUARANTINE_ANCHOR}">{shown}</a>'
        html.append(
            f'<div class="card" data-card="{escape(label)}"><div class="label">{escape(label)}</div>'
            f'<div class="value">{shown}{note_html}</div></div>'
        )
    return f'<section class="cards">{"".join(html)}</section>'


def _feature_index(summary: RunSummary) -> str:
    header = "<tr><th>feature</th><th>transform</th><th>kind</th><th class=num>missing</th><th class=num>mean</th>" \
             "<th class=num>distinct</th><th class=num>OOV rate</th></tr>"
    rows = []
    for name, feature in summary.features.items():
        rows.append(
            f'<tr><td><a href="#{_anchor(name)}">{escape(name)}</a></td><td>{escape(feature.get("transform", ""))}</td>'
            f'<td>{escape(feature.get("kind", ""))}</td>'
            f'<td class=num>{format_percent(feature.get("missing_fraction"))}</td>'
            f'<td class=num>{escape(format_number(feature.get("mean")))}</td>'
            f'<td class=num>{escape(format_statistic(feature, "distinct"))}</td>'
            f"<td class=num>{format_percent(oov_rate(summary, feature))}</td></tr>"
        )
    label = summary.label_column
    note = f'<p class="muted">Label: <code>{escape(label)}</code></p>' if label else ""
    return f"<h2>Features at a glance</h2><table>{header}{''.join(rows)}</table>{note}"


def _run_details(summary: RunSummary, splits: list[str]) -> str:
    shard_rows = []
    for split in splits:
        for shard in summary.shards.get(split, []):
            shard_rows.append(
                f"<tr><td>{escape(split)}</td><td><code>{escape(shard.path)}</code></td>"
                f"<td class=num>{format_number(shard.rows)}</td><td class=num>{format_bytes(shard.bytes)}</td></tr>"
            )
    shards = (
        "<div><h3>Shards</h3><table><tr><th>split</th><th>file</th><th class=num>rows</th><th class=num>size</th></tr>"
        f"{''.join(shard_rows)}</table>"
        f'<p class="muted">compression: {escape(summary.compression)}</p></div>'
    )
    seconds = _pairs("Seconds", {stage: format_number(value) for stage, value in summary.seconds.items()})
    versions = _pairs("Versions", {package: version or "–" for package, version in summary.versions.items()})
    platform = _pairs("Machine", {key: str(value) for key, value in summary.platform.model_dump().items()})
    return f'<h2>Run</h2><div class="row">{shards}<div>{seconds}{platform}</div>{versions}</div>'


def _pairs(title: str, values: dict) -> str:
    if not values:
        return ""
    rows = "".join(f"<tr><th>{escape(str(key))}</th><td class=num>{escape(value)}</td></tr>" for key, value in values.items())
    return f"<div><h3>{escape(title)}</h3><table>{rows}</table></div>"


def _label(summary: RunSummary, views: dict[str, SplitView]) -> str:
    label = summary.label_column
    if not label or label not in views:
        return ""
    return f'<h2>Label by split</h2><div class="feature label" id="label">{split_block(views[label])}</div>'


def _warnings_index(warnings: dict[str, list[tuple[str, str]]]) -> str:
    flagged = [(feature, found) for feature, found in warnings.items() if found]
    if not flagged:
        return ('<h2>Worth checking</h2><p class="muted">No sentinel values, constant columns, empty buckets or '
                'ill-sized vocabularies found.</p>')
    rows = "".join(f'<tr><td><a href="#{_anchor(feature)}">{escape(feature)}</a></td>'
                   f'<td>{warnings_list(found)}</td></tr>' for feature, found in flagged)
    return f'<h2>Worth checking</h2><table class="worth-checking">{rows}</table>'


def _feature(summary: RunSummary, name: str, feature: dict, options: dict, vocabulary: list[str] | None,
             view: SplitView | None, warnings: list[tuple[str, str]]) -> str:
    # each transform's `report_options` beside its name (a run's transform may be gone from the registry)
    transform = TRANSFORMS.get(feature.get("transform"))
    shown = (*(transform.report_options if transform else ()), "default")
    shown_options = ", ".join(f"{option} {options[option]}" for option in shown if options.get(option) is not None)
    badges = f'<span class="badge">{escape(feature.get("transform", ""))}</span>'
    if shown_options:
        badges += f'<span class="badge">{escape(shown_options)}</span>'
    badges += f'<span class="badge">{escape(feature.get("kind", ""))} · {escape(feature.get("type", ""))}</span>'
    statistics = {
        "rows with a value": format_number(feature.get("count")),
        "missing": f'{format_number(feature.get("missing"))} ({format_percent(feature.get("missing_fraction"))})',
    }
    # Which statistics exist follows the transform: an int column with a vocabulary has top values, no histogram
    if "top_values" in feature:
        statistics["distinct values"] = format_statistic(feature, "distinct")
        charts = _categorical_charts(name, feature, vocabulary)
    else:
        for stat in ("mean", "std", "min", "max"):
            statistics[stat] = format_number(feature.get(stat))
        charts = _numeric_charts(name, feature)
    if date_range_text(feature):
        statistics["date range"] = date_range_text(feature)
    if "vocabulary_size" in feature:
        statistics["vocabulary size"] = format_number(feature["vocabulary_size"])
        statistics["OOV buckets"] = format_number(feature.get("num_oov_buckets"))
        statistics["OOV rows"] = format_number(feature.get("oov_rows"))
        statistics["OOV rate"] = format_percent(oov_rate(summary, feature))
    rows = "".join(f"<tr><th>{escape(key)}</th><td class=num>{escape(value)}</td></tr>" for key, value in statistics.items())
    quantiles = _quantiles(feature.get("quantiles"))
    return (
        f'<article class="feature" id="{_anchor(name)}"><h3>{escape(name)}{badges}</h3>'
        f'<div class="row"><table class="stats">{rows}</table>{charts}</div>{quantiles}'
        f"{split_block(view)}{warnings_list(warnings)}{advice_line(feature, options)}</article>"
    )


def _numeric_charts(name: str, feature: dict) -> str:
    histogram = feature.get("histogram")
    if not histogram or not histogram.get("counts"):
        return '<p class="muted">No values, no histogram.</p>'
    counts = histogram["counts"]
    chart = svg.histogram(histogram["edges"], counts, f"{name}: histogram of raw values", feature.get("mean"))
    caption = f"raw values, {len(counts)} bins"
    if (feature.get("exact") or {}).get("histogram") is False:
        caption += ", counts estimated from a quantiles sketch (eps 0.005)"
    return f'<figure class="histogram">{chart}<figcaption class="legend">{caption}</figcaption></figure>'


def _categorical_charts(name: str, feature: dict, vocabulary: list[str] | None) -> str:
    top = [(str(value), int(count)) for value, count in feature.get("top_values", [])]
    if not top:
        return f'<p class="muted" data-no-frequent-value>{escape(no_frequent_value(feature) or "No values.")}</p>'
    known = set(vocabulary) if vocabulary is not None else None
    outside = {value for value, _ in top if value not in known} if known is not None else set()
    estimated = (feature.get("exact") or {}).get("top_values") is False
    chart = svg.bar_chart(top, f"{name}: most frequent raw values", outside, estimated)
    legend = f"top {len(top)} raw values"
    if estimated:
        legend += " (counts estimated by a Misra-Gries sketch: too many distinct values to count exactly)"
    if known is not None:
        legend += (
            f'<span class="swatch" style="background:var(--bar)"></span>in the vocabulary'
            f'<span class="swatch" style="background:var(--oov)"></span>out of vocabulary ({len(outside)} shown)'
        )
    return f'<figure class="top-values">{chart}<figcaption class="legend">{legend}</figcaption></figure>'


def _quantiles(quantiles: list | None) -> str:
    """Each quantile under its percentage, in a row that wraps at the card's edge (a table's row could not: at
    eleven quantiles of seven-digit numbers it ran past the card and was cut)."""
    if not quantiles:
        return ""
    step = 100 / (len(quantiles) - 1) if len(quantiles) > 1 else 100
    items = "".join(f'<li><span class="at">{round(i * step)}%</span>{escape(format_number(value))}</li>'
                    for i, value in enumerate(quantiles))
    return f'<p class="legend quantiles-legend">quantiles</p><ol class="quantiles">{items}</ol>'


def quarantine_section(summary: RunSummary, reasons: QuarantineReasons) -> str:
    quarantined = summary.rows.quarantined
    if not quarantined and not reasons.rows:
        return f'<h2 id="{QUARANTINE_ANCHOR}">Quarantine</h2><p>No rows were quarantined.</p>'
    intro = (
        f"<p>{format_number(quarantined)} rows were quarantined "
        f"({format_percent(quarantined / summary.rows.read if summary.rows.read else None)} of the rows read); "
        f"their reasons, counted from <code>quarantine/*.jsonl</code>:</p>"
    )
    if not reasons.rows:
        return f'<h2 id="{QUARANTINE_ANCHOR}">Quarantine</h2>{intro}<p class=muted>No quarantine files found.</p>'
    rows = []
    for reason, count in reasons.counts.most_common(_SHOWN_REASONS):
        example = reasons.examples[reason]
        where = ":".join(str(part) for part in (example.get("source"), example.get("line")) if part is not None)
        raw = str(example.get("raw", ""))
        if len(raw) > _QUARANTINE_EXAMPLE_CHARS:
            raw = raw[:_QUARANTINE_EXAMPLE_CHARS] + "…"
        rows.append(
            f"<tr><td class=num>{format_number(count)}</td><td>{escape(reason)}</td>"
            f"<td><code>{escape(where)}</code></td><td><code>{escape(raw)}</code></td></tr>"
        )
    more = len(reasons.counts) - _SHOWN_REASONS
    tail = f'<p class="muted">and {more:,} more reasons</p>' if more > 0 else ""
    return (
        f'<h2 id="{QUARANTINE_ANCHOR}">Quarantine</h2>{intro}<table class="reasons"><tr><th class=num>rows</th>'
        f"<th>reason</th><th>first row at</th><th>first row</th></tr>{''.join(rows)}</table>{tail}"
    )


def _anchor(name: str) -> str:
    return "feature-" + "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in name)
