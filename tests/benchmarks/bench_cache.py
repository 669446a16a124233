"""Issue 9: the analyzer cache. A rerun after 10% new data, warm (cache) against cold (no cache).

The 1M-row census CSV is cut into 10 files of about 100k rows, laid out as dated partitions
(`cache_key: directory`): nine in yesterday's folder go through `skewless run --cache-dir` (filling the
cache); the tenth arrives in today's folder; then, back to back on the same ten files:

- warm: `skewless run --cache-dir` (analysis reads only the new file, tf.Transform merges the cached rest)
- cold: `skewless run` with no cache (analysis reads all ten)

Both still transform and write every row. Prints wall seconds of each and checks that both wrote the
same values (run.json statistics and the transformed shards).

    python tests/benchmarks/bench_cache.py [--rows 1009391]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from census_data import CATEGORICAL_COLUMNS, COLUMNS, DEFAULT_CACHE_DIR, LABEL_MAP, NUMERIC_COLUMNS, census_csv  # noqa: E402

FILES = 10


def split_file(source: Path, yesterday: Path, today: Path) -> None:
    """Nine files into yesterday's partition, the tenth (10% of the rows) into today's."""
    lines = source.read_bytes().splitlines(keepends=True)
    share = -(-len(lines) // FILES)
    for index in range(FILES):
        folder = today if index == FILES - 1 else yesterday
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"part-{index:02d}.csv").write_bytes(b"".join(lines[index * share : (index + 1) * share]))


def write_config(folder: Path, output: Path, path: Path) -> Path:
    features = {name: {"transform": "z_score"} for name in NUMERIC_COLUMNS}
    features |= {name: {"transform": "vocabulary", "num_oov_buckets": 1} for name in CATEGORICAL_COLUMNS}
    config = {
        "name": "cache-bench",
        "input": {"format": "csv", "paths": [str(folder / "*" / "part-*.csv")], "columns": list(COLUMNS)},
        "features": features,
        "label": {"column": "label", "map": LABEL_MAP},
        "output": {"dir": str(output), "splits": {"train": 1.0}, "shards": 4},
        "cache_key": "directory",
    }
    path.write_text(yaml.safe_dump(config))
    return path


def timed_run(config: Path, output: Path, *extra: str) -> float:
    started = time.time()
    subprocess.run(
        [sys.executable, "-m", "skewless", "run", str(config), "--output", str(output), "--overwrite", *extra],
        check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    return time.time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_009_391)
    args = parser.parse_args()
    base = DEFAULT_CACHE_DIR / f"cache-bench-{args.rows}"
    shutil.rmtree(base, ignore_errors=True)
    inputs, cache = base / "inputs", base / "cache"
    inputs.mkdir(parents=True)
    source, origin = census_csv(args.rows)
    print(f"input: {origin}, cut into {FILES} files; load average {os.getloadavg()[0]:.1f}")
    today = base / "2026-11-21"  # held back beside the inputs: the 10% that arrives later
    split_file(source, inputs / "2026-11-20", today)
    config = write_config(inputs, base / "out", base / "job.yaml")
    fill = timed_run(config, base / "fill", "--cache-dir", str(cache))
    today.rename(inputs / today.name)
    warm = timed_run(config, base / "warm", "--cache-dir", str(cache))
    cold = timed_run(config, base / "cold")
    reports = {name: json.loads((base / name / "run.json").read_text()) for name in ("warm", "cold")}
    same = all(
        abs(reports["warm"]["features"][name][key] - reports["cold"]["features"][name][key])
        <= 1e-9 * max(1.0, abs(reports["cold"]["features"][name][key]))
        for name in NUMERIC_COLUMNS for key in ("mean", "std", "min", "max")
    ) and all(
        reports["warm"]["features"][name]["vocabulary_size"] == reports["cold"]["features"][name]["vocabulary_size"]
        for name in CATEGORICAL_COLUMNS
    )
    analyzed = reports["warm"]["analysis"]["analyzed"]
    print("| run | analyzed | wall s |")
    print("|---|---:|---:|")
    print(f"| fill the cache (yesterday's partition: 9 files) | 1 partition | {fill:.1f} |")
    print(f"| warm rerun, today's 10% new data | {analyzed} partition(s) | {warm:.1f} |")
    print(f"| cold run, no cache | all | {cold:.1f} |")
    print(f"warm / cold: {warm / cold:.2f}; statistics {'SAME' if same else 'DIFFERENT'}")
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
