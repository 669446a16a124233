"""Issue 20's benchmark: every goal of the issue measured in one invocation, each beside its target.

Goal 1 runs, back to back and each as its own process, the stock reference (stock_tft.py), the near-limit
reference (near_limit.py) and `skewless run` on a config this script writes (same transforms, gzip, 4 shards,
one split) on the same census rows. For each it measures wall seconds, rows/s and the peak resident memory of the
whole process tree (psutil, every 0.2 s, summed over the process and all its children), parses the TFRecords
each wrote and checks that the values equal the stock output's. The other goals run `skewless run` alone:
2. the transform pass's CPU / wall seconds at 5M rows, as that run's run.json reports them;
3. a 1,000-row run, wall seconds from process start to exit, median of 3 fresh processes;
4. peak RSS at 1M and 5M rows (goal 1's and goal 2's runs);
5. serving latency (bench_serving.py as a subprocess);
6. the size sweep 100k, 1M, 5M, 20M rows (reusing the 1M and 5M runs): marginal seconds per 1M rows between
   sizes and peak RSS at 20M / 1M. Each size's CSV is generated just before its run and deleted right after;
7. issue 34: `skewless.pipelines.run()` in a warm process at 1,000 and 100,000 rows (bench_warm.py as a subprocess).
Then a summary table: goal | target | measured | met?, issue 20's goals, then issue 34's (its goals 2-4 are judged
on goals 3, 1 and 6's runs).

    python tests/benchmarks/bench_job.py                  # every goal (about 10 minutes idle; 2.5 GB of CSV at a time)
    python tests/benchmarks/bench_job.py --goals 1,3      # some goals
    python tests/benchmarks/bench_job.py --skip-stock     # reuse the last stock output and figures for these rows
    python tests/benchmarks/bench_job.py --only skewless --rows 100000    # goal 1's comparison alone
    python tests/benchmarks/bench_job.py --goals 4 --without-jax   # memory as in a user's install (no jax)
    python tests/benchmarks/bench_job.py --issue 34       # issue 34's goals alone (goals 1, 3, 6 and 7)
    python tests/benchmarks/bench_job.py --issue 40       # issue 40's goals (goals 1, 3, 5, 6 and 7)

Inputs and outputs live under --cache-dir (default /tmp/skewless-bench), never in the repository.
Summed RSS counts pages shared between forked workers once per process, so it overstates multi-process jobs.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import psutil  # noqa: E402
import yaml  # noqa: E402

from skewless.pipelines.write import native_records  # noqa: E402

import goals  # noqa: E402
from same_values import check_against_stock  # noqa: E402
from census_data import (  # noqa: E402
    CATEGORICAL_COLUMNS,
    COLUMNS,
    DEFAULT_CACHE_DIR,
    LABEL_COLUMN,
    LABEL_MAP,
    MILLION_ROWS,
    NUMERIC_COLUMNS,
    census_csv,
    generated_census_csv,
)

HERE = Path(__file__).resolve().parent
JOBS = ("stock", "near_limit", "skewless")
GOALS = (1, 2, 3, 4, 5, 6, 7)
ISSUE_GOALS = {34: {1, 3, 6, 7}, 40: {1, 3, 5, 6, 7}}  # the bench goals each issue's summary judges
SCALE_ROWS = (100_000, MILLION_ROWS, 5_000_000, 20_000_000)
LARGE_ROWS = 5_000_000
STARTUP_ROWS = 1_000
STARTUP_RUNS = 3
SHARDS = 4
POLL_SECONDS = 0.2
CHILD_ENV = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONUNBUFFERED": "1"}


@dataclass
class Measurement:
    job: str
    rows: int
    seconds: float
    cpu_seconds: float
    peak_rss_bytes: int
    returncode: int
    output_bytes: int
    when: str
    load_average: float
    stages: dict | None = None  # run.json's "seconds" (skewless only)
    main_thread_cpu_seconds: float | None = None  # the launched process's main thread, last poll before its exit

    @property
    def rows_per_second(self) -> float:
        return self.rows / self.seconds


# --- running and measuring -------------------------------------------------------------------------------------


def tree_rss(process: psutil.Process) -> int:
    """Resident bytes of a process and all its descendants (processes that exit mid-scan count as 0)."""
    total = 0
    try:
        members = [process] + process.children(recursive=True)
    except psutil.Error:
        return 0
    for member in members:
        try:
            total += member.memory_info().rss
        except psutil.Error:
            pass
    return total


def main_thread_cpu(process: psutil.Process) -> float | None:
    """CPU seconds of the process's main thread (its thread ID is its PID), or None once it has exited."""
    try:
        return next((t.user_time + t.system_time for t in process.threads() if t.id == process.pid), None)
    except psutil.Error:
        return None


def measure(job: str, command: list[str], rows: int, output_dir: Path, log_path: Path) -> Measurement:
    """Runs `command` to completion, polling the tree's RSS; the log keeps its stdout and stderr.

    CPU seconds come from the rusage of reaped children, so they cover the whole tree; unlike wall seconds they
    barely move when other work shares the cores. The main thread's CPU seconds are read at each poll (the last
    reading is at most POLL_SECONDS before the exit): the main thread runs the pipeline, so it sets the wall time.
    """
    shutil.rmtree(output_dir, ignore_errors=True)
    when = datetime.datetime.now().isoformat(timespec="seconds")
    load = os.getloadavg()[0]
    peak, main_cpu = 0, None
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(log_path, "wb") as log:
        start = time.perf_counter()
        process = psutil.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=CHILD_ENV)
        while True:
            peak = max(peak, tree_rss(process))
            main_cpu = main_thread_cpu(process) or main_cpu
            try:
                # Returns as soon as the process exits, so wall seconds end at its exit, not at the next poll.
                process.wait(timeout=POLL_SECONDS)
                break
            except psutil.TimeoutExpired:
                pass
        seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    written = sum(path.stat().st_size for path in output_dir.rglob("*.tfrecord*")) if output_dir.exists() else 0
    summary = output_dir / "run.json"
    stages = json.loads(summary.read_text()).get("seconds") if summary.exists() else None
    return Measurement(job, rows, seconds, cpu, peak, process.returncode, written, when, load, stages, main_cpu)


def skewless_command() -> list[str]:
    installed = shutil.which("skewless")
    return [installed] if installed else [sys.executable, "-c", "from skewless.cli import main; main()"]


def skewless_missing() -> str | None:
    """Why `skewless run` cannot be benchmarked yet, or None when the job and its CLI command exist."""
    probe = subprocess.run(
        [sys.executable, "-c", "from skewless.pipelines import run"], capture_output=True, text=True, env=CHILD_ENV
    )
    if probe.returncode != 0:
        last = (probe.stderr.strip().splitlines() or ["import failed"])[-1]
        return f"`from skewless.pipelines import run` fails: {last}"
    cli = subprocess.run(skewless_command() + ["run", "--help"], capture_output=True, text=True, env=CHILD_ENV)
    if cli.returncode != 0:
        return "`skewless run --help` fails: " + (cli.stderr.strip().splitlines() or ["no output"])[-1]
    return None


def write_skewless_config(csv_path: Path, output_dir: Path, config_path: Path) -> Path:
    """The stock reference's transforms as a skewless job config, validated before it is used."""
    from skewless.config import load_config

    config = {
        "name": "census-benchmark",
        "input": {"format": "csv", "paths": [str(csv_path)], "columns": list(COLUMNS), "delimiter": ","},
        "features": {
            **{name: {"transform": "z_score"} for name in NUMERIC_COLUMNS},
            **{name: {"transform": "vocabulary", "num_oov_buckets": 1} for name in CATEGORICAL_COLUMNS},
        },
        "label": {"column": LABEL_COLUMN, "map": dict(LABEL_MAP)},
        # One split: every row lands in the output, so its row set equals the stock reference's.
        "output": {"dir": str(output_dir), "splits": {"train": 1.0}, "compression": "gzip", "shards": SHARDS},
    }
    config_path.write_text(yaml.safe_dump(config, sort_keys=False))
    load_config(config_path)
    return config_path


def job_command(job: str, csv_path: Path, output_dir: Path, work_dir: Path, args: argparse.Namespace) -> list[str]:
    if job == "stock":
        script = [sys.executable, str(HERE / "stock_tft.py"), "--input", str(csv_path), "--output", str(output_dir)]
        return script + shlex.split(args.stock_args)
    if job == "near_limit":
        return [sys.executable, str(HERE / "near_limit.py"), "--input", str(csv_path), "--output", str(output_dir)]
    config = write_skewless_config(csv_path, output_dir, work_dir / "skewless.yaml")
    return skewless_command() + ["run", str(config)] + shlex.split(args.skewless_args)


def hide_jax(cache_dir: str) -> None:
    """Makes `import jax` fail in the jobs' processes, as in a user's install: jax is only a test dependency of
    skewless, but where it is installed `import tensorflow` imports it (tf.lite tries to), about 105 MB of RSS."""
    stub = Path(cache_dir) / "without-jax"
    (stub / "jax").mkdir(parents=True, exist_ok=True)
    (stub / "jax" / "__init__.py").write_text('raise ImportError("hidden by bench_job.py --without-jax")\n')
    CHILD_ENV["PYTHONPATH"] = os.pathsep.join(filter(None, [str(stub), CHILD_ENV.get("PYTHONPATH")]))


# --- reporting -------------------------------------------------------------------------------------------------


def machine_line() -> str:
    model = next(
        (line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
         if line.startswith("model name")),
        platform.processor() or "unknown CPU",
    )
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    versions = ", ".join(
        f"{package} {metadata.version(package)}"
        for package in ("tensorflow", "tensorflow-transform", "tfx-bsl", "apache-beam", "pyarrow")
    )
    return (
        f"{datetime.datetime.now().isoformat(timespec='minutes')} | {model}, {psutil.cpu_count()} logical cores, "
        f"{psutil.virtual_memory().total / 2**30:.0f} GB RAM | load average at start {load} | "
        f"Python {platform.python_version()}, {versions} | "
        f"Example encoder and framing in {native_records.IMPLEMENTATION}"
    )


def gb(size: int) -> str:
    return f"{size / 1e9:.2f} GB"


def print_table(measurements: list[Measurement], stock: Measurement | None) -> None:
    print("| job | started (load avg) | rows | wall s | CPU s | rows/s | peak RSS (tree) | output "
          "| throughput vs stock | CPU s vs stock | peak RSS vs stock |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for m in measurements:
        if stock:
            ratios = (f"{m.rows_per_second / stock.rows_per_second:.2f}x | {m.cpu_seconds / stock.cpu_seconds:.2f}x | "
                      f"{m.peak_rss_bytes / stock.peak_rss_bytes:.2f}x")
        else:
            ratios = "n/a | n/a | n/a"
        print(f"| {m.job} | {m.when} ({m.load_average:.1f}) | {m.rows:,} | {m.seconds:.1f} | {m.cpu_seconds:.1f} | "
              f"{m.rows_per_second:,.0f} | {gb(m.peak_rss_bytes)} | {m.output_bytes / 1e6:.0f} MB | {ratios} |")


def earlier_stock(previous: dict) -> Measurement | None:
    """The stock figures an earlier invocation saved, if they have this version's fields."""
    try:
        return Measurement(**previous["stock"])
    except (KeyError, TypeError):
        return None


def report_failure(job: str, log_path: Path, returncode: int) -> None:
    tail = log_path.read_text(errors="replace").strip().splitlines()[-15:]
    print(f"{job} FAILED (exit code {returncode}); last lines of {log_path}:", *tail, sep="\n    ")


# --- goal 1: the comparison with stock -------------------------------------------------------------------------


@dataclass
class Comparison:
    measurements: list[Measurement]  # stock's may come from an earlier invocation (--skip-stock)
    same: dict[str, bool]  # job -> whether its values equal stock's, for the jobs checked
    failed: bool

    def job(self, name: str) -> Measurement | None:
        return next((m for m in self.measurements if m.job == name), None)


def compare_jobs(args: argparse.Namespace) -> Comparison:
    """Runs the chosen jobs on the same file, prints the table, checks values against stock."""
    jobs = [job for job in (args.only or JOBS) if not (args.skip_stock and job == "stock")]
    csv_path, source = census_csv(args.rows, args.cache_dir)
    work_dir = Path(args.cache_dir) / "runs" / str(args.rows)
    work_dir.mkdir(parents=True, exist_ok=True)
    results_path = work_dir / "results.json"
    previous = json.loads(results_path.read_text()) if results_path.exists() else {}
    print(f"input: {csv_path} ({source})\n")

    failed = False
    measurements = []
    for job in jobs:
        if job == "skewless":
            missing = skewless_missing()
            if missing:
                print(f"skewless: skipped, the job does not exist yet: {missing}")
                continue
        output_dir = work_dir / job
        log_path = work_dir / f"{job}.log"
        command = job_command(job, csv_path, output_dir, work_dir, args)
        print(f"running {job}: {shlex.join(command)}", flush=True)
        m = measure(job, command, args.rows, output_dir, log_path)
        print(f"  {m.seconds:.1f} s wall, {m.cpu_seconds:.1f} s CPU, peak RSS {gb(m.peak_rss_bytes)}, log {log_path}", flush=True)
        if m.returncode != 0:
            report_failure(job, log_path, m.returncode)
            failed = True
            continue
        measurements.append(m)
        previous[job] = asdict(m)
    results_path.write_text(json.dumps(previous, indent=2))

    stock = next((m for m in measurements if m.job == "stock"), None)
    if stock is None and (work_dir / "stock" / "transform_fn").exists():
        stock = earlier_stock(previous)
        if stock is not None:
            measurements.insert(0, stock)
            print(f"\nstock: not run now; figures and output from the run of {stock.when}")
    print()
    print_table(measurements, stock)

    same = {}
    if (work_dir / "stock" / "transform_fn").exists():
        print()
        for m in measurements:
            if m.job == "stock":
                continue
            same[m.job], notes = check_against_stock(work_dir / "stock", m.job, work_dir / m.job)
            print(f"values {m.job} vs stock: {'SAME' if same[m.job] else 'DIFFERENT'}")
            for note in notes:
                print(f"    {note}")
            failed |= not same[m.job]
    else:
        print("\nvalues: not checked (no stock output for these rows; run without --skip-stock once)")
    return Comparison(measurements, same, failed)


# --- goals 2-4 and 6: `skewless run` alone ----------------------------------------------------------------------


class SkewlessRuns:
    """`skewless run` by number of rows, each size run at most once per invocation, so the goals that need the
    same size (goal 1's 1M rows for goals 4 and 6, 5M for goals 2, 4 and 6) share one run."""

    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.by_rows: dict[int, Measurement | None] = {}  # None: that run failed
        self.failed = False

    def at(self, rows: int) -> Measurement | None:
        if rows not in self.by_rows:
            with generated_census_csv(rows, self.args.cache_dir) as (csv_path, source):
                self.by_rows[rows] = self.run(rows, csv_path, source)
        return self.by_rows[rows]

    def run(self, rows: int, csv_path: Path, source: str) -> Measurement | None:
        """One run on `csv_path`; its output is deleted after (20M rows of output is large, and the figures and
        run.json's seconds are what matter)."""
        work_dir = Path(self.args.cache_dir) / "runs" / str(rows)
        work_dir.mkdir(parents=True, exist_ok=True)
        output_dir, log_path = work_dir / "skewless", work_dir / "skewless.log"
        command = job_command("skewless", csv_path, output_dir, work_dir, self.args)
        print(f"running skewless on {rows:,} rows ({source})", flush=True)
        m = measure("skewless", command, rows, output_dir, log_path)
        shutil.rmtree(output_dir, ignore_errors=True)
        print(f"  {m.seconds:.1f} s wall, {m.cpu_seconds:.1f} s CPU, peak RSS {gb(m.peak_rss_bytes)}, "
              f"load average at start {m.load_average:.1f}", flush=True)
        if m.returncode != 0:
            report_failure("skewless", log_path, m.returncode)
            self.failed = True
            return None
        return m

    def startup(self) -> list[Measurement | None]:
        """Goal 3: fresh processes on the same small file (built once; it is tiny)."""
        csv_path, source = census_csv(STARTUP_ROWS, self.args.cache_dir)
        return [self.run(STARTUP_ROWS, csv_path, source) for _ in range(STARTUP_RUNS)]


def print_sweep(runs: list[Measurement]) -> None:
    print("\n| rows | started (load avg) | wall s | CPU s | rows/s | marginal wall s / 1M rows "
          "| marginal CPU s / 1M rows | peak RSS (tree) |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|")
    slopes = [("", "")] + [(f"{wall:.1f}", f"{cpu:.1f}") for wall, cpu in goals.marginal_costs(runs)]
    for m, (wall, cpu) in zip(sorted(runs, key=lambda run: run.rows), slopes):
        print(f"| {m.rows:,} | {m.when} ({m.load_average:.1f}) | {m.seconds:.1f} | {m.cpu_seconds:.1f} | "
              f"{m.rows_per_second:,.0f} | {wall} | {cpu} | {gb(m.peak_rss_bytes)} |")


# --- goal 5: serving --------------------------------------------------------------------------------------------


def serving_figures(args: argparse.Namespace) -> tuple[dict | None, str]:
    """bench_serving.py's p50 / p99 per export (its own output goes to the console), or None and why not."""
    with tempfile.TemporaryDirectory() as folder:
        figures_path = Path(folder) / "serving.json"
        command = [sys.executable, str(HERE / "bench_serving.py"), "--cache-dir", args.cache_dir,
                   "--json", str(figures_path)]
        print(f"running {shlex.join(command)}", flush=True)
        done = subprocess.run(command, env=CHILD_ENV)
        if not figures_path.exists():
            return None, f"bench_serving.py failed (exit code {done.returncode})"
        return json.loads(figures_path.read_text()), ""


# --- goal 7: issue 34's warm-process run() -----------------------------------------------------------------------


def warm_figures(args: argparse.Namespace) -> tuple[list[dict] | None, str]:
    """bench_warm.py's figures per size (its own lines go to the console), or None and why not."""
    with tempfile.TemporaryDirectory() as folder:
        figures_path = Path(folder) / "warm.json"
        command = [sys.executable, str(HERE / "bench_warm.py"), "--cache-dir", args.cache_dir,
                   "--json", str(figures_path)] + (["--rows", *map(str, args.warm_rows)] if args.warm_rows else [])
        print(f"running {shlex.join(command)}", flush=True)
        done = subprocess.run(command, env=CHILD_ENV)
        if not figures_path.exists():
            return None, f"bench_warm.py failed (exit code {done.returncode})"
        return json.loads(figures_path.read_text()), ""


# --- all goals --------------------------------------------------------------------------------------------------


def run_goals(args: argparse.Namespace) -> int:
    """Measures the chosen goals, each printed with its verdict as it finishes, then the summary table.
    Exit 1 when a job failed or an output's values differ from stock's; a goal not met is a verdict, not a failure."""
    print(f"machine: {machine_line()}\ngoals: {', '.join(map(str, sorted(args.goals)))}", flush=True)
    runs = SkewlessRuns(args)
    verdicts = []
    failed = False
    comparison, startup_runs, sweep, warm = None, None, None, None

    def section(title: str) -> None:
        print(f"\n## {title}\n", flush=True)

    def verdict(outcome: goals.Verdict) -> None:
        verdicts.append(outcome)
        print(f"\n{outcome.line()}", flush=True)

    if 1 in args.goals:
        section(f"goal 1: throughput against stock tf.Transform, {args.rows:,} rows")
        comparison = compare_jobs(args)
        failed |= comparison.failed
        skewless = comparison.job("skewless")
        if skewless is not None:
            runs.by_rows[args.rows] = skewless
        verdict(goals.throughput(comparison.job("stock"), skewless, comparison.same.get("skewless")))
    if 2 in args.goals:
        section(f"goal 2: CPU / wall seconds of the transform pass, {args.large_rows:,} rows")
        verdict(goals.transform_parallelism(runs.at(args.large_rows)))
    if 3 in args.goals:
        section(f"goal 3: fixed cost, {STARTUP_ROWS:,} rows, {STARTUP_RUNS} fresh processes")
        startup_runs = runs.startup()
        verdict(goals.startup(startup_runs))
    if 4 in args.goals:
        section("goal 4: peak RSS")
        print(f"`skewless run` at {args.rows:,} and {args.large_rows:,} rows: goal 1's and goal 2's runs, "
              "or run now where those goals did not run")
        verdict(goals.peak_memory([runs.at(rows) for rows in sorted({args.rows, args.large_rows})]))
    if 5 in args.goals:
        section("goal 5: serving latency")
        figures, why_not = serving_figures(args)
        failed |= figures is None or not figures["same"]
        verdict(goals.serving(figures, why_not))
    if 6 in args.goals:
        section(f"goal 6: size sweep, {', '.join(f'{rows:,}' for rows in sorted(set(args.scale_rows)))} rows")
        sweep = [runs.at(rows) for rows in sorted(set(args.scale_rows))]
        print_sweep([m for m in sweep if m is not None])
        for outcome in goals.sweep(sweep, args.rows):
            verdict(outcome)
    if 7 in args.goals:
        section("goal 7 (issue 34): warm-process run(), 1,000 and 100,000 rows")
        figures, why_not = warm_figures(args)
        failed |= figures is None
        warm = goals.warm_runs(figures, why_not)
        for outcome in warm:
            verdict(outcome)

    section("summary")
    goals.print_summary([v for v in verdicts if not v.goal.startswith("34.")])
    if args.goals & ISSUE_GOALS[34]:
        section("summary of issue 34's goals")
        issue_34 = list(warm or goals.warm_runs(None, "goal 7 did not run"))
        issue_34.append(goals.fresh_run(startup_runs or []))
        issue_34.append(goals.throughput_and_memory(
            comparison.job("stock") if comparison else None, comparison.job("skewless") if comparison else None,
            comparison.same.get("skewless") if comparison else None, startup_runs or []))
        issue_34.append(goals.marginal_past(sweep or []))
        goals.print_summary(issue_34)
        if args.issue == 40:
            section("summary of issue 40's goals")
            serving = next((v for v in verdicts if v.goal == "5 serving"), goals.serving(None, "goal 5 did not run"))
            goals.print_summary(goals.issue_40(issue_34, serving))
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"\nmachine: {machine_line().split(' | load')[0]} | load average at end {load}")
    return 1 if failed or runs.failed else 0


def goal_numbers(text: str) -> set[int]:
    try:
        chosen = {int(part) for part in text.split(",")}
    except ValueError:
        chosen = set()
    if not chosen or not chosen <= set(GOALS):
        raise argparse.ArgumentTypeError(f"expected goal numbers of {', '.join(map(str, GOALS))}, e.g. 1,3")
    return chosen


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--goals", type=goal_numbers, metavar="N[,N]",
                        help="measure only these goals (default: all; only 1 when --rows or --only is given)")
    parser.add_argument("--rows", type=int, help=f"goal 1's census rows (default {MILLION_ROWS:,}, 31 x adult.data); "
                        "also goal 4's smaller size and the sweep's memory reference")
    parser.add_argument("--only", type=lambda text: text.split(","), metavar="JOB[,JOB]",
                        help=f"goal 1: run only these jobs, of {', '.join(JOBS)}")
    parser.add_argument("--skip-stock", action="store_true",
                        help="goal 1: do not rerun stock; compare against its last output and figures for --rows")
    parser.add_argument("--skip-serving", action="store_true", help="leave out goal 5")
    parser.add_argument("--issue", type=int, choices=sorted(ISSUE_GOALS),
                        help="measure one issue's goals (34: goals 1, 3, 6 and 7; 40: 1, 3, 5, 6 and 7) and print "
                        "their summary")
    parser.add_argument("--large-rows", type=int, default=LARGE_ROWS,
                        help=f"goal 2's size and goal 4's larger one (default {LARGE_ROWS:,})")
    parser.add_argument("--scale-rows", type=int, nargs="+", default=list(SCALE_ROWS), metavar="ROWS",
                        help=f"goal 6's sizes (default {' '.join(map(str, SCALE_ROWS))})")
    parser.add_argument("--warm-rows", type=int, nargs="+", metavar="ROWS",
                        help="goal 7's sizes (default bench_warm.py's: 1000 100000; the targets are for those two)")
    parser.add_argument("--stock-args", default="", help="extra Beam flags for the stock reference, one string")
    parser.add_argument("--skewless-args", default="", help="extra flags for `skewless run`, one string")
    parser.add_argument("--cache-dir", default=str(DEFAULT_CACHE_DIR), help="inputs, outputs, logs (not the repo)")
    parser.add_argument("--without-jax", action="store_true",
                        help="hide jax from the jobs, as a user's install has none (it is a test dependency here)")
    args = parser.parse_args()
    if args.without_jax:
        hide_jax(args.cache_dir)
    unknown = set(args.only or ()) - set(JOBS)
    if unknown:
        parser.error(f"--only: unknown job(s) {sorted(unknown)}; choose from {', '.join(JOBS)}")
    if args.goals is None and args.issue is not None:
        args.goals = set(ISSUE_GOALS[args.issue])
    if args.goals is None:
        args.goals = {1} if args.rows is not None or args.only else set(GOALS)
    if args.skip_serving:
        args.goals.discard(5)
        if not args.goals:
            parser.error("--skip-serving leaves no goal to measure")
    if args.rows is None:
        args.rows = MILLION_ROWS
    return run_goals(args)


if __name__ == "__main__":
    sys.exit(main())
