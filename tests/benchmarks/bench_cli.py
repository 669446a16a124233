"""Issue 18 item 5: how long the command line takes to answer what needs no job, beside the cost of importing
TensorFlow (the reference: what an answer that imports it cannot go below).

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


def prepare(python: str) -> dict[str, Path]:
    """A small run to inspect, its config (whose output exists), and a config with an unknown key."""
    BENCH_DIR.mkdir(parents=True, exist_ok=True)
    run_dir = BENCH_DIR / "run"
    config = yaml.safe_load((REPO / "configs" / "example.yaml").read_text())
    config["input"]["rows"] = 5000
    config["output"]["dir"] = str(run_dir)
    good = BENCH_DIR / "example.yaml"
    good.write_text(yaml.safe_dump(config))
    bad = BENCH_DIR / "unknown_key.yaml"
    bad.write_text(yaml.safe_dump({**config, "outptu": {}}))
    if not (run_dir / "run.json").exists():
        subprocess.run([python, "-m", "skewless", "run", str(good)], check=True, capture_output=True)
    return {"run": run_dir, "good": good, "bad": bad}


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
        ("python -c pass (interpreter start)", [args.python, "-c", "pass"], 0),
        ('python -c "import tensorflow"', [args.python, "-c", "import tensorflow"], 0),
        ('python -c "import tensorflow_transform.beam"', [args.python, "-c", "import tensorflow_transform.beam"], 0),
        ("skewless --version", [*skewless, "--version"], 0),
        ("skewless --help", [*skewless, "--help"], 0),
        ("skewless run: config error (unknown key)", [*skewless, "run", str(paths["bad"])], 2),
        ("skewless run: output exists", [*skewless, "run", str(paths["good"])], 2),
        ("skewless inspect RUN", [*skewless, "inspect", str(paths["run"])], 0),
    ]
    print(f"{args.python}, {args.repeat} runs each, load average at start {os.getloadavg()[0]:.2f}\n")
    print("| command | median s | fastest s |")
    print("|---|---:|---:|")
    for title, command, code in cases:
        seconds = timed(command, args.repeat, code)
        if isinstance(seconds, str):
            print(f"| {title} | {seconds} | |", flush=True)
        else:
            print(f"| {title} | {statistics.median(seconds):.2f} | {min(seconds):.2f} |", flush=True)


if __name__ == "__main__":
    main()
