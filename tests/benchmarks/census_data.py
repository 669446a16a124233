"""The benchmark input: an N-row census CSV built from UCI Adult, cached outside the repository.

`adult.data` (32,561 rows, no header, ", " separated) is repeated and truncated to N rows; 31 copies are the
1,009,391 rows issue 6 measures. Where the file is absent (a fresh checkout without ../shared/data) a synthetic
block with the same columns, value kinds and cardinalities is repeated instead, and `census_csv` says so.

    python tests/benchmarks/census_data.py --rows 1009391     # prints the cached file's path and source
"""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

ADULT_DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "census" / "adult.data"
DEFAULT_CACHE_DIR = Path(os.environ.get("SKEWLESS_BENCH_DIR", "/tmp/skewless-bench"))
ADULT_ROWS = 32_561
MILLION_ROWS = ADULT_ROWS * 31  # 1,009,391

NUMERIC_COLUMNS = ("age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week")
CATEGORICAL_COLUMNS = (
    "workclass", "education", "marital-status", "occupation",
    "relationship", "race", "sex", "native-country",
)
LABEL_COLUMN = "label"
LABEL_MAP = {"<=50K": 0, ">50K": 1}
# The order of the columns in adult.data.
COLUMNS = (
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
    "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country",
    LABEL_COLUMN,
)


def census_csv(rows: int = MILLION_ROWS, cache_dir: str | os.PathLike = DEFAULT_CACHE_DIR) -> tuple[Path, str]:
    """Returns (path of an N-row census CSV, where its rows come from), building the file once per size."""
    path, source, block = _census_file(rows, cache_dir, "")
    if not path.is_file():
        _write_repeated(block(), rows, path)
    return path, source


@contextlib.contextmanager
def generated_census_csv(rows: int, cache_dir: str | os.PathLike = DEFAULT_CACHE_DIR) -> Iterator[tuple[Path, str]]:
    """Like `census_csv`, but the file is written on entry and deleted on exit, never kept: the size sweep's
    inputs (20M rows is 2.5 GB)."""
    path, source, block = _census_file(rows, cache_dir, "generated-")
    _write_repeated(block(), rows, path)
    try:
        yield path, f"{source}, generated for this run"
    finally:
        path.unlink(missing_ok=True)


def _census_file(rows: int, cache_dir: str | os.PathLike, prefix: str) -> tuple[Path, str, Callable[[], list[bytes]]]:
    """(where an N-row census CSV goes, where its rows come from, the function giving the block to repeat)."""
    if rows < 1:
        raise ValueError(f"rows must be >= 1, got {rows}")
    cache = Path(cache_dir)
    cache.mkdir(parents=True, exist_ok=True)
    if ADULT_DATA.is_file():
        source = f"UCI Adult ({ADULT_DATA}) repeated to {rows:,} rows"
        return cache / f"{prefix}census-{rows}.csv", source, _adult_block
    source = f"SYNTHETIC census-like rows ({ADULT_DATA} is absent) repeated to {rows:,} rows"
    return cache / f"{prefix}synthetic-census-{rows}.csv", source, _synthetic_block


def _adult_block() -> list[bytes]:
    # The file ends with a blank line; it is not a row.
    return [line for line in ADULT_DATA.read_bytes().splitlines(keepends=True) if line.strip()]


def _synthetic_block(rows: int = ADULT_ROWS, seed: int = 0) -> list[bytes]:
    """Census-shaped rows: the same columns, integer-valued numerics and string categories of similar cardinality."""
    rng = np.random.default_rng(seed)
    cardinality = {
        "workclass": 9, "education": 16, "marital-status": 7, "occupation": 15,
        "relationship": 6, "race": 5, "sex": 2, "native-country": 42,
    }
    numeric = {
        "age": rng.integers(17, 91, rows),
        "fnlwgt": rng.integers(12_285, 1_484_706, rows),
        "education-num": rng.integers(1, 17, rows),
        "capital-gain": np.where(rng.random(rows) < 0.08, rng.integers(1, 99_999, rows), 0),
        "capital-loss": np.where(rng.random(rows) < 0.05, rng.integers(1, 4_356, rows), 0),
        "hours-per-week": rng.integers(1, 100, rows),
    }
    # Zipf-like frequencies, as in the real data, so vocabularies have a meaningful order.
    categorical = {}
    for name, size in cardinality.items():
        weights = 1.0 / np.arange(1, size + 1)
        categorical[name] = rng.choice(size, rows, p=weights / weights.sum())
    labels = np.where(rng.random(rows) < 0.24, ">50K", "<=50K")
    lines = []
    for i in range(rows):
        values = []
        for column in COLUMNS:
            if column in numeric:
                values.append(str(numeric[column][i]))
            elif column in categorical:
                values.append(f"{column}-{categorical[column][i]}")
            else:
                values.append(labels[i])
        lines.append((", ".join(values) + "\n").encode())
    return lines


def _write_repeated(block: list[bytes], rows: int, path: Path) -> None:
    copies, remainder = divmod(rows, len(block))
    whole = b"".join(block)
    partial = path.with_suffix(".partial")
    with open(partial, "wb") as out:
        for _ in range(copies):
            out.write(whole)
        out.write(b"".join(block[:remainder]))
    # Renamed only when complete, so an interrupted build is never mistaken for a cached file.
    partial.rename(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=MILLION_ROWS)
    parser.add_argument("--cache-dir", default=str(DEFAULT_CACHE_DIR))
    args = parser.parse_args()
    path, source = census_csv(args.rows, args.cache_dir)
    print(f"{path}\t{source}")


if __name__ == "__main__":
    main()
