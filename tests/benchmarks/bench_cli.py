"""Issue 18 item 5: how long the command line takes to answer what needs no job, beside the cost of importing
TensorFlow (the reference: what an answer that imports it cannot go below). Issue 42 item 2: the errors the
config, the input paths and the input's header show, and export's refusals, each beside its 1 s target.

Each command runs in a fresh process `--repeat` times; the table shows the median and the fastest wall seconds,
from starting the process to its exit. The run that `inspect` reads and the configs are made once, under
/tmp/skewless-bench/cli (or SKEWLESS_BENCH_DIR).

    python tests/benchmarks/bench_cli.py [--repeat 5] [--python PYTHON]

`--python` times another interpreter's skewless (e.g. one whose import path holds an older checkout), so two
versions compare on the same machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
BENCH_DIR = Path(os.environ.get("SKEWLESS_BENCH_DIR", "/tmp/skewless-bench")) / "cli"
# issue 42: an error the user caused is answered in under a second on this project's 2-core machine
TARGET = 1.0


def prepare(python: str) -> dict[str, Path]:
    """A small run to inspect, its config (whose output exists), a config with an unknown key, configs whose
    input names a missing file or lacks a column, and an export folder that exists."""
    BENCH_DIR.mkdir(parents=True, exist_ok=True)
    run_dir = BENCH_DIR / "run"
    config = yaml.safe_load((REPO / "configs" / "example.yaml").read_text())
    config["input"]["rows"] = 5000
    config["output"]["dir"] = str(run_dir)
    good = BENCH_DIR / "example.yaml"
    good.write_text(yaml.safe_dump(config))
    bad = BENCH_DIR / "unknown_key.yaml"
    bad.write_text(yaml.safe_dump({**config, "outptu": {}}))
    csv = BENCH_DIR / "rows.csv"
    csv.write_text("age,workclass,label\n39,State-gov,<=50K\n50,Private,>50K\n")
    on_csv = {**config, "input": {"format": "csv", "paths": [str(csv)], "header": True},
              "output": {"dir": str(BENCH_DIR / "csv-out")}}
    wrong_column = BENCH_DIR / "wrong_column.yaml"
    wrong_column.write_text(yaml.safe_dump({**on_csv, "features": {"agee": {"transform": "z_score"}}}))
    missing_input = BENCH_DIR / "missing_input.yaml"
    missing_input.write_text(yaml.safe_dump({**on_csv, "input": {**on_csv["input"], "paths": [str(csv) + ".gone"]}}))
    export_dir = BENCH_DIR / "export" / "1"
    export_dir.mkdir(parents=True, exist_ok=True)
    (export_dir / "saved_model.pb").touch()
    (BENCH_DIR / "model.keras").touch()
    if not (run_dir / "run.json").exists():
        subprocess.run([python, "-m", "skewless", "run", str(good)], check=True, capture_output=True)
    return {"run": run_dir, "good": good, "bad": bad, "wrong_column": wrong_column, "missing_input": missing_input,
            "export": export_dir, "model": BENCH_DIR / "model.keras"}


def timed(command: list[str], repeat: int, expected_code: int) -> list[float] | str:
    """Wall seconds of each run, or why the command did not answer as expected (e.g. an older version)."""
    seconds = []
    for _ in range(repeat):
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True)
        seconds.append(time.perf_counter() - started)
        if done.returncode != expected_code:
            said = [line for line in done.stderr.splitlines() if any(c.isalpha() for c in line)] or [""]
            return f"exit code {done.returncode}, not {expected_code}: {said[-1].strip(' │')[:80]}"
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--python", default=sys.executable, help="the interpreter whose skewless is timed")
    args = parser.parse_args()
    paths = prepare(args.python)
    skewless = [args.python, "-m", "skewless"]
    cases = [
        ("python -c pass (interpreter start)", [args.python, "-c", "pass"], 0, None),
        ('python -c "import tensorflow"', [args.python, "-c", "import tensorflow"], 0, None),
        ('python -c "import tensorflow_transform.beam"', [args.python, "-c", "import tensorflow_transform.beam"], 0,
         None),
        ("skewless --version", [*skewless, "--version"], 0, None),
        ("skewless --help", [*skewless, "--help"], 0, None),
        ("skewless run: config error (unknown key)", [*skewless, "run", str(paths["bad"])], 2, TARGET),
        ("skewless run: output exists", [*skewless, "run", str(paths["good"])], 2, TARGET),
        ("skewless run: wrong column name (CSV header)", [*skewless, "run", str(paths["wrong_column"])], 2, TARGET),
        ("skewless run: missing input path", [*skewless, "run", str(paths["missing_input"])], 2, TARGET),
        ("skewless export: output exists, no --overwrite",
         [*skewless, "export", str(paths["run"]), "--model", str(paths["model"]), "-o", str(paths["export"])], 2,
         TARGET),
        ("skewless inspect RUN", [*skewless, "inspect", str(paths["run"])], 0, None),
    ]
    print(f"{args.python}, {args.repeat} runs each, load average at start {os.getloadavg()[0]:.2f}\n")
    print("| command | median s | fastest s | target s |")
    print("|---|---:|---:|---:|")
    for title, command, code, target in cases:
        seconds = timed(command, args.repeat, code)
        goal = f"< {target:.0f}" if target else ""
        if isinstance(seconds, str):
            print(f"| {title} | {seconds} | | {goal} |", flush=True)
        else:
            print(f"| {title} | {statistics.median(seconds):.2f} | {min(seconds):.2f} | {goal} |", flush=True)


if __name__ == "__main__":
    main()
