"""Reading a run directory's small files for people: quarantine reasons, vocabularies, and numbers formatted.

Plain files only (no TensorFlow, no Beam), so `skewless report` and `skewless inspect` start fast and
work wherever the run directory can be read. Shared by the HTML report and `skewless inspect`.
"""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from dataclasses import dataclass, field

from skewless.errors import InputError
from skewless.run_directory import RunDirectory
from skewless.run_summary import RunSummary
from skewless.safe_names import vocabulary_filename

# Reasons quote the offending value, so a dirty column can produce one reason per row; past this
# many distinct reasons the rest are counted together instead of held in memory one by one.
MAX_DISTINCT_REASONS = 1000
OTHER_REASONS = "(other reasons)"


def run_statistics(run: RunDirectory) -> RunSummary:
    """The run summary of a run of `skewless run`; InputError naming the file for an output of
    `skewless apply`, which holds no feature statistics."""
    summary = run.read_summary()
    if summary.features is None:
        applied = f" (the run it applied: {summary.applied.run})" if summary.applied else ""
        raise InputError(f"{run.summary_file}: an output of `skewless apply`, without feature statistics{applied}")
    return summary


@dataclass
class QuarantineReasons:
    """Quarantined rows counted by reason, with the first row (source, line, raw text) of each reason."""

    counts: Counter = field(default_factory=Counter)
    examples: dict = field(default_factory=dict)
    files: int = 0

    @property
    def rows(self) -> int:
        return sum(self.counts.values())


def quarantine_reasons(run: RunDirectory) -> QuarantineReasons:
    """Counts the reasons in the run's quarantine/*.jsonl (one JSON object per quarantined row)."""
    reasons = QuarantineReasons()
    for path in run.quarantine_files:
        reasons.files += 1
        with open(path, encoding="utf-8", errors="replace") as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                    reason = str(row["reason"])
                except (json.JSONDecodeError, KeyError, TypeError):
                    raise InputError(f"{path}:{number}: not a quarantine record (JSON with a reason)") from None
                if reason not in reasons.counts and len(reasons.counts) >= MAX_DISTINCT_REASONS:
                    reason = OTHER_REASONS
                if reason not in reasons.examples:
                    reasons.examples[reason] = row
                reasons.counts[reason] += 1
    return reasons


def vocabulary(run: RunDirectory, feature: str, filename: str | None = None) -> list[str] | None:
    """The feature's vocabulary as the graph stores it (most frequent first), or None if it has none; `filename`:
    its file as run.json records it (a shared vocabulary's), else the feature's own."""
    return vocabulary_file(run, filename or vocabulary_filename(feature))


def vocabulary_file(run: RunDirectory, filename: str) -> list[str] | None:
    """The entries of the graph's vocabulary file `filename`, one a line, or None if there is no such file."""
    path = os.path.join(run.assets_dir, filename)
    if not os.path.exists(path):
        return None
    with open(path, "rb") as handle:
        return [line.rstrip(b"\n").decode("utf-8", "replace") for line in handle]


def split_order(summary: RunSummary, config: dict) -> list[str]:
    """The run's splits in the order the config lists them (the run summary's keys are sorted)."""
    written = summary.rows.written
    splits = [split for split in ((config.get("output") or {}).get("splits") or {}) if split in written]
    return splits + [split for split in written if split not in splits]


def oov_rate(summary: RunSummary, feature: dict) -> float | None:
    """Share of transformed rows whose value fell outside the vocabulary (None without a vocabulary)."""
    rows = summary.transformed_rows
    if "oov_rows" not in feature or not rows:
        return None
    return feature["oov_rows"] / rows


def format_number(value) -> str:
    """A statistic for people: integers with thousands separators, floats to 4 significant digits."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return f"{value:,}"
    value = float(value)
    if not math.isfinite(value):
        return str(value)
    if value == int(value) and abs(value) < 1e15:
        return f"{int(value):,}"
    magnitude = abs(value)
    if magnitude < 1e-3:
        return f"{value:.3e}"
    digits = min(6, max(0, 3 - math.floor(math.log10(magnitude))))
    text = f"{value:,.{digits}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def format_statistic(feature: dict, key: str, value=None) -> str:
    """`format_number` of `feature[key]` (or of `value`, a part of it), with "~" before it when the run summary
    marks that statistic as estimated by a sketch (`"exact": {key: false}`)."""
    text = format_number(feature.get(key) if value is None else value)
    return f"~{text}" if (feature.get("exact") or {}).get(key) is False and text != "–" else text


def no_frequent_value(feature: dict) -> str | None:
    """What a string feature without top values says: no value is in as many rows as a listed one must be
    (run.json's `listed_from`: 2, or past 10,000 distinct values more than 1/1,001 of the rows); None when it
    lists some, or its statistics predate that rule."""
    floor = feature.get("listed_from")
    if feature.get("top_values") or floor is None or not feature.get("count"):
        return None
    return f"no value is in {format_number(floor)} rows or more: no frequent value to list"


def format_percent(fraction: float | None) -> str:
    """A fraction as a percentage with two decimals; tiny non-zero shares are not shown as 0.00%."""
    if fraction is None:
        return "–"
    if 0 < fraction < 0.0001:
        return "<0.01%"
    return f"{fraction:.2%}"


def format_bytes(count: int) -> str:
    """A file size in binary units: 512 B, 52.5 KiB, 1.2 GiB."""
    if count < 1024:
        return f"{count} B"
    size, unit = float(count), "B"
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        size /= 1024
        if size < 1024:
            break
    return f"{size:.1f} {unit}"
