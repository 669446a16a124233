"""Whether two jobs' outputs hold the same values: bench_job.py's check of each job against stock tf.Transform.

Every output's TFRecords are parsed with the stock transformed feature spec; each feature's sorted values are
compared (floats within 1e-5, ids exactly), then whole rows sorted by all columns, then each vocabulary file.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from census_data import CATEGORICAL_COLUMNS

TOLERANCE = 1e-5


def graph_dir(job: str, output_dir: Path) -> Path | None:
    """Where a job's transform graph is: stock writes it beside data/, skewless in transform_graph/."""
    return {"stock": output_dir, "skewless": output_dir / "transform_graph"}.get(job)


def read_examples(output_dir: Path, feature_spec: dict) -> dict[str, np.ndarray]:
    """Every tf.Example in OUTPUT/data/*.tfrecord*, parsed with `feature_spec` into one array per feature."""
    import tensorflow as tf

    files = sorted(str(path) for path in (output_dir / "data").glob("*.tfrecord*"))
    if not files:
        raise FileNotFoundError(f"no TFRecord files in {output_dir / 'data'}")
    compression = "GZIP" if files[0].endswith(".gz") else ""
    dataset = (
        tf.data.TFRecordDataset(files, compression_type=compression, num_parallel_reads=len(files))
        .batch(16_384)
        .map(lambda records: tf.io.parse_example(records, feature_spec), num_parallel_calls=tf.data.AUTOTUNE)
    )
    parts: dict[str, list[np.ndarray]] = {name: [] for name in feature_spec}
    for batch in dataset.as_numpy_iterator():
        for name, values in batch.items():
            parts[name].append(values)
    return {name: np.concatenate(values) for name, values in parts.items()}


def sorted_rows(columns: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The rows in a canonical order: sorted by every column, integer ids first.

    Equal raw values give bit-identical outputs within one job and distinct raw values differ by far more than
    float noise, so two jobs with the same rows sort them into the same order.
    """
    names = sorted(columns, key=lambda name: (columns[name].dtype.kind == "f", name))
    order = np.lexsort([columns[name] for name in reversed(names)])
    return {name: values[order] for name, values in columns.items()}


def compare_rows(reference: dict[str, np.ndarray], candidate: dict[str, np.ndarray]) -> list[str]:
    """Differences between two outputs' row multisets, one line each; empty when they hold the same values."""
    if set(reference) != set(candidate):
        return [f"features differ: only in stock {sorted(set(reference) - set(candidate))}, "
                f"only in candidate {sorted(set(candidate) - set(reference))}"]
    sizes = {len(values) for values in reference.values()} | {len(values) for values in candidate.values()}
    if len(sizes) != 1:
        return [f"row counts differ: stock {len(next(iter(reference.values()))):,}, "
                f"candidate {len(next(iter(candidate.values()))):,}"]
    # Each feature's values on their own first: a difference there names the feature that is wrong.
    problems = []
    for name in sorted(reference):
        problem = _column_difference(name, np.sort(reference[name]), np.sort(candidate[name]))
        if problem:
            problems.append(problem)
    if problems:
        return problems
    # Then whole rows: the same values per feature could still be combined into other rows.
    reference, candidate = sorted_rows(reference), sorted_rows(candidate)
    for name in sorted(reference):
        problem = _column_difference(name, reference[name], candidate[name])
        if problem:
            problems.append(f"rows differ although each feature's values match: {problem}")
    return problems


def _column_difference(name: str, want: np.ndarray, got: np.ndarray) -> str | None:
    if want.dtype.kind == "f":
        if np.allclose(got, want, rtol=TOLERANCE, atol=TOLERANCE):
            return None
        worst = float(np.max(np.abs(got.astype(np.float64) - want)))
        return f"{name}: values differ beyond {TOLERANCE:g} (max abs difference {worst:.3g})"
    if np.array_equal(got, want):
        return None
    return f"{name}: {int(np.sum(got != want)):,} of {len(want):,} ids differ"


def compare_vocabularies(stock_graph: Path, candidate_graph: Path) -> list[str]:
    """Each categorical feature's vocabulary against stock's, where the candidate's file name ends with the feature."""
    import tensorflow_transform as tft

    stock, candidate = tft.TFTransformOutput(str(stock_graph)), tft.TFTransformOutput(str(candidate_graph))
    assets = [path.name for path in (candidate_graph / "transform_fn" / "assets").glob("*")]
    problems = []
    for name in CATEGORICAL_COLUMNS:
        matches = [asset for asset in assets if asset == name or asset.endswith(f"_{name}")]
        if len(matches) != 1:
            problems.append(f"{name}: no single vocabulary file named after the feature (ids compared above only)")
        elif candidate.vocabulary_by_name(matches[0]) != stock.vocabulary_by_name(name):
            problems.append(f"{name}: vocabulary {matches[0]} differs from stock's")
    return problems


def check_against_stock(stock_dir: Path, job: str, output_dir: Path) -> tuple[bool, list[str]]:
    """(same values?, notes): the job's features, rows and vocabularies against the stock output's."""
    import tensorflow_transform as tft

    spec = tft.TFTransformOutput(str(stock_dir)).transformed_feature_spec()
    notes = []
    own_graph = graph_dir(job, output_dir)
    if own_graph is not None:
        own_spec = tft.TFTransformOutput(str(own_graph)).transformed_feature_spec()
        if own_spec != spec:
            return False, [f"transformed feature spec differs: stock {spec}, {job} {own_spec}"]
    problems = compare_rows(read_examples(stock_dir, spec), read_examples(output_dir, spec))
    if own_graph is not None and not problems:
        notes = compare_vocabularies(stock_dir, own_graph)
        problems = [note for note in notes if "differs" in note]
        notes = [note for note in notes if note not in problems]
    return not problems, problems + notes
