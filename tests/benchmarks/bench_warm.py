"""Issue 34, goal 1: `skewless.pipelines.run()` in a warm Python process, as a notebook calls it.

One process imports skewless, then for each size runs `run(config, overwrite=True)` once to warm up and
`--repeat` more times, timing each call (wall and process CPU seconds) with the load average beside it. The
config is bench_job.py's census config (the stock reference's transforms, gzip, 4 shards, one split) on the
first N census rows. bench_job.py runs this script as a subprocess for its goal 7 (`--json`).

    python tests/benchmarks/bench_warm.py                       # 1,000 and 100,000 rows, 3 timed runs each
    python tests/benchmarks/bench_warm.py --rows 1000 --repeat 5 --profile /tmp/warm.prof   # cProfile the timed runs
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from census_data import DEFAULT_CACHE_DIR, census_csv  # noqa: E402

SIZES = (1_000, 100_000)
REPEAT = 3


def time_runs(rows: int, repeat: int, cache_dir: str, profiler: cProfile.Profile | None) -> dict:
    """A warm-up run, then `repeat` timed ones, of `run()` on the first `rows` census rows."""
    from bench_job import write_skewless_config
    from skewless.pipelines import run

    csv_path, source = census_csv(rows, cache_dir)
    work_dir = Path(cache_dir) / "warm" / str(rows)
    work_dir.mkdir(parents=True, exist_ok=True)
    config = write_skewless_config(csv_path, work_dir / "output", work_dir / "skewless.yaml")
    runs = []
    for index in range(repeat + 1):
        load = os.getloadavg()[0]
        wall, cpu = time.perf_counter(), time.process_time()
        if profiler and index:
            profiler.enable()
        run(str(config), overwrite=True)
        if profiler and index:
            profiler.disable()
        runs.append({"seconds": time.perf_counter() - wall, "cpu_seconds": time.process_time() - cpu,
                     "load_average": load, "warm_up": index == 0})
        print(f"  {rows:,} rows, {'warm-up' if index == 0 else f'run {index}'}: {runs[-1]['seconds']:.2f} s wall, "
              f"{runs[-1]['cpu_seconds']:.2f} s CPU, load average {load:.1f}", flush=True)
    timed = [r for r in runs if not r["warm_up"]]
    return {"rows": rows, "source": source, "runs": runs,
            "median_seconds": statistics.median(r["seconds"] for r in timed),
            "median_cpu_seconds": statistics.median(r["cpu_seconds"] for r in timed)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--repeat", type=int, default=REPEAT, help="timed runs per size, after one warm-up run")
    parser.add_argument("--cache-dir", default=str(DEFAULT_CACHE_DIR))
    parser.add_argument("--json", help="write the figures here (bench_job.py reads them)")
    parser.add_argument("--profile", help="cProfile the timed runs into this file")
    args = parser.parse_args()
    started = time.perf_counter()
    import skewless.pipelines.commands.run  # noqa: F401  (the import is a notebook's first cell, not part of a run)

    print(f"import skewless.pipelines.commands.run: {time.perf_counter() - started:.1f} s", flush=True)
    profiler = cProfile.Profile() if args.profile else None
    results = [time_runs(rows, args.repeat, args.cache_dir, profiler) for rows in args.rows]
    for result in results:
        print(f"{result['rows']:,} rows: median {result['median_seconds']:.2f} s wall, "
              f"{result['median_cpu_seconds']:.2f} s CPU over {args.repeat} warm runs")
    if profiler:
        profiler.dump_stats(args.profile)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
