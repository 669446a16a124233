"""Reading a run directory's small files for people: run.json, config.yaml, quarantine reasons, vocabularies.

Plain files only (no TensorFlow, no Beam), so `skewless report` and `skewless inspect` start fast and
work wherever the run directory can be read. Shared by the HTML report and `skewless inspect`.
"""

from __future__ import annotations

import glob
import json
import math
import os
from collections import Counter
from dataclasses import dataclass, field

import yaml

from skewless.errors import InputError
from skewless.run_layout import RUN_FILE
from skewless.safe_names import vocabulary_filename

CONFIG_FILE = "config.yaml"
QUARANTINE_DIR = "quarantine"
ASSETS_DIR = os.path.join("transform_graph", "transform_fn", "assets")
# Reasons quote the offending value, so a dirty column can produce one reason per row; past this
# many distinct reasons the rest are counted together instead of held in memory one by one.
MAX_DISTINCT_REASONS = 1000
OTHER_REASONS = "(other reasons)"


def load_summary(run_dir: str) -> dict:
    """The run's run.json; InputError naming the file when it is missing or not JSON."""
    path = os.path.join(run_dir, RUN_FILE)
    try:
        with open(path, encoding="utf-8") as handle:
            summary = json.load(handle)
    except FileNotFoundError:
        raise InputError(f"{path}: not found; is {run_dir} the output directory of `skewless run`?") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InputError(f"{path}: cannot read run summary: {error}") from None
    if not isinstance(summary, dict) or not all(isinstance(summary.get(key), dict) for key in ("rows", "features")):
        raise InputError(f"{path}: not a skewless run summary (no rows / features)")
    return summary


def load_run_config(run_dir: str) -> dict:
    """The resolved job config the run wrote (config.yaml) as a plain dict; {} when absent."""
    path = os.path.join(run_dir, CONFIG_FILE)
    if not os.path.exists(path):
        return {}
    try:
        with open(path, encoding="utf-8") as handle:
            config = yaml.safe_load(handle)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise InputError(f"{path}: cannot read the run's config: {error}") from None
    return config if isinstance(config, dict) else {}


@dataclass
class QuarantineReasons:
    """Quarantined rows counted by reason, with the first row (source, line, raw text) of each reason."""

    counts: Counter = field(default_factory=Counter)
    examples: dict = field(default_factory=dict)
    files: int = 0

    @property
    def rows(self) -> int:
        return sum(self.counts.values())


def quarantine_reasons(run_dir: str) -> QuarantineReasons:
    """Counts the reasons in RUN_DIR/quarantine/*.jsonl (one JSON object per quarantined row)."""
    reasons = QuarantineReasons()
    for path in sorted(glob.glob(os.path.join(run_dir, QUARANTINE_DIR, "*.jsonl"))):
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


def vocabulary(run_dir: str, feature: str) -> list[str] | None:
    """The feature's vocabulary as the graph stores it (most frequent first), or None if it has none."""
    return vocabulary_file(run_dir, vocabulary_filename(feature))


def vocabulary_file(run_dir: str, filename: str) -> list[str] | None:
    """The entries of the graph's vocabulary file `filename`, one a line, or None if there is no such file."""
    path = os.path.join(run_dir, ASSETS_DIR, filename)
    if not os.path.exists(path):
        return None
    with open(path, "rb") as handle:
        return [line.rstrip(b"\n").decode("utf-8", "replace") for line in handle]


def split_order(summary: dict, config: dict) -> list[str]:
    """The run's splits in the order the config lists them (run.json's keys are sorted)."""
    written = summary["rows"]["written"]
    splits = [split for split in ((config.get("output") or {}).get("splits") or {}) if split in written]
    return splits + [split for split in written if split not in splits]


def transformed_rows(summary: dict) -> int:
    """Rows that went through the graph (written to any split): the denominator of the OOV rate."""
    return sum(summary["rows"]["written"].values())


def oov_rate(summary: dict, feature: dict) -> float | None:
    """Share of transformed rows whose value fell outside the vocabulary (None without a vocabulary)."""
    rows = transformed_rows(summary)
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
    """`format_number` of `feature[key]` (or of `value`, a part of it), with "~" before it when run.json
    marks that statistic as estimated by a sketch (`"exact": {key: false}`)."""
    text = format_number(feature.get(key) if value is None else value)
    return f"~{text}" if (feature.get("exact") or {}).get(key) is False and text != "–" else text


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
