"""Runs every case of hostile_cases.py (issue 29): the exit code, the one line on stderr, the case's invariant, and
nothing written outside what the case allows."""

import os
import re
import shutil
import subprocess
import time
import tracemalloc

import pytest
from typer.testing import CliRunner

from commands import TESTS, as_a_shell_starts_it
from example_job import REPO
import cases_input_limits
import cases_output_safety
import cases_secrets_and_warm
from hostile_cases import CASES as ISSUE_29_CASES
from hostile_cases import billion_laughs, tree
from skewless.cli import app
from skewless.config import AnalysisConfig, load_config
from skewless.errors import ConfigError, LimitError
from skewless.pipelines.analyze.distinct_limits import raw_column_limits, vocabulary_limit

# the progress lines of `skewless run` (its first, before TensorFlow is imported; then skewless/progress.py's),
# "skewless run NAME: starting", "skewless run NAME [0:00:01]: ..." (the job's name, whatever it holds)
PROGRESS = "skewless run "

# what no command may print raw: C0 controls but tab, line feed and carriage return (progress lines), DEL, C1 controls
RAW_CONTROL = frozenset(map(chr, [*range(0x09), 0x0b, 0x0c, *range(0x0e, 0x20), *range(0x7f, 0xa0)]))

# issue 41's cases, a module per area (each imports its helpers from hostile_cases)
CASES = ISSUE_29_CASES + cases_output_safety.CASES + cases_secrets_and_warm.CASES + cases_input_limits.CASES
IDS = [case.name for case in CASES]
assert len(IDS) == len(set(IDS)), "case names must be unique"


def _params():
    return [pytest.param(case, id=case.name, marks=[pytest.mark.slow] if case.slow else []) for case in CASES]


def _run_in_process(args):
    result = CliRunner().invoke(app, [str(arg) for arg in args])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception  # a bug of the command, not an answer to the case
    return result.exit_code, result.stdout, result.stderr


def _run_process(case, args, folder):
    environment = {key: value for key, value in os.environ.items() if key != "SKEWLESS_DEBUG"}
    environment["PYTHONPATH"] = str(TESTS)
    environment.pop("TF_CPP_MIN_LOG_LEVEL", None)  # as a user's shell has it: what TensorFlow prints, shows
    process = subprocess.Popen(as_a_shell_starts_it("-m", "skewless", *map(str, args)), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=environment, cwd=folder / "cwd",
                               start_new_session=True)
    if case.drive is not None:
        stdout, stderr = case.drive(process, folder)
    else:
        stdout, stderr = process.communicate(timeout=300)
    return process.wait(timeout=300), stdout, stderr


def _allowed(path: str, writes: tuple[str, ...]) -> bool:
    return any(path == allowed or path.startswith(allowed + os.sep) for allowed in writes)


@pytest.fixture
def folder(tmp_path):
    """The case's folder; a disk a case mounted in it (`full_disk`) is unmounted afterwards."""
    folder = tmp_path / "case"
    yield folder
    with open("/proc/self/mounts") as mounts:
        points = [line.split()[1] for line in mounts if line.split()[1].startswith(str(folder))]
    for point in points:
        subprocess.run(["umount", point], check=True)


@pytest.mark.parametrize("case", _params())
def test_hostile_case(case, folder, monkeypatch, request):
    (folder / "cwd").mkdir(parents=True)  # the command's working directory: a relative write would show here
    if case.run:
        shutil.copytree(request.getfixturevalue("example_run").output_dir, folder / "run")
    monkeypatch.chdir(folder / "cwd")
    args = case.make(folder)
    before = tree(folder)

    if case.process:
        code, stdout, stderr = _run_process(case, args, folder)
    else:
        code, stdout, stderr = _run_in_process(args)

    assert code == case.code, f"exit {code}, expected {case.code}\nstderr: {stderr[-2000:]}\nstdout: {stdout[-500:]}"
    # `skewless run` draws its progress on stderr (its last state, "failed", stays): nothing else may come
    lines = [line for line in stderr.replace("\r", "\n").splitlines()
             if line.strip() and not (args[0] == "run" and line.startswith(PROGRESS))]
    if case.line is None:
        assert lines == [], stderr[-2000:]
    else:
        assert len(lines) == 1, f"expected one line on stderr, got {len(lines)}:\n{stderr[-3000:]}"
        assert lines[0].startswith(("skewless: error: ", "skewless: interrupted")), lines[0]
        assert case.line in lines[0], lines[0]
        assert "Traceback" not in stderr
    # whatever data or a config holds, what a command prints acts on no terminal (issue 41 item 7)
    raw = sorted({hex(ord(c)) for c in stdout + stderr if c in RAW_CONTROL})
    assert raw == [], f"control characters printed raw: {raw}"
    if case.printed is not None:
        case.printed(stdout + stderr)
    if case.after is not None:
        case.after(folder)
    after = tree(folder)
    changed = sorted(path for path in set(before) | set(after)
                     if before.get(path, 0) != after.get(path, 0) and not _allowed(path, case.writes))
    assert changed == [], f"written outside what the case allows: {changed[:10]}"
    assert [path for path in after if ".staging" in path and path not in before] == [], "a staging folder was left"
    assert os.listdir(folder / "cwd") == []


def test_the_cases_cover_every_item_of_issue_41_a_command_shows():
    # items 13-15 (the warm process, two threads, an empty request) need one Python process: test_warm_process.py
    covered = {case.item for case in CASES if case.item is not None and case.issue == 41}
    assert covered == set(range(1, 13)), covered


def test_the_documented_limits_are_the_defaults_and_their_refusals_the_jobs(tmp_path):
    """docs/errors.md's table and docs/config.md state analysis.max_keys and max_vocabulary as AnalysisConfig has
    them, and the refusals docs/errors.md shows are the lines the job writes for those counts."""
    defaults = {name: field.default for name, field in AnalysisConfig.model_fields.items()}
    errors, config = (REPO / "docs" / "errors.md").read_text(), (REPO / "docs" / "config.md").read_text()
    table = dict(re.findall(r"^\| `analysis\.(\w+)` \|[^|]*\| ([\d,]+) \|", errors, re.M))
    assert {name: int(value.replace(",", "")) for name, value in table.items()} == defaults
    assert {name: int(value) for name, value in re.findall(r"^  (max_keys|max_vocabulary): (\d+) ", config, re.M)} \
        == defaults
    job = load_config({"name": "docs", "input": {"format": "synthetic", "rows": 10},
                       "features": {"price": {"transform": "z_score", "key": "store"}},
                       "output": {"dir": str(tmp_path / "out")}})
    limits = {"max_keys": raw_column_limits(job)[0],
              "max_vocabulary": vocabulary_limit("features.review: its vocabulary", defaults["max_vocabulary"])}
    shown = re.findall(r"^skewless: error: .* has at least ([\d,]+) distinct values, more than analysis\.(\w+) .*$",
                       errors, re.M)
    assert sorted(option for _, option in shown) == sorted(defaults)
    for count, option in shown:
        with pytest.raises(LimitError) as refused:
            limits[option].check(int(count.replace(",", "")))
        assert f"skewless: error: {refused.value}" in errors.splitlines()


def test_the_suite_covers_every_item_of_issue_29():
    covered = {case.item for case in CASES if case.item is not None and case.issue == 29}
    assert covered == set(range(1, 11)), covered
    assert len(CASES) >= 100, len(CASES)


@pytest.mark.parametrize("text", [billion_laughs(), "a: " + "[" * 500_000, "a: [" + "1," * 400_000 + "]\n",
                                  "# padding\n" * 200_000], ids=["billion laughs", "deep", "wide", "big"])
def test_a_costly_config_is_refused_in_well_under_a_second_and_a_few_mb(text, tmp_path):
    path = tmp_path / "job.yaml"
    path.write_text(text)
    started = time.perf_counter()
    with pytest.raises(ConfigError):
        load_config(path)
    seconds = time.perf_counter() - started
    tracemalloc.start()  # measured apart: tracing every allocation slows the parse down several times
    try:
        with pytest.raises(ConfigError):
            load_config(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # one pass over libyaml's events, stopped at the first bound crossed; the text is at most 1 MiB. The slowest
    # of these, 100,000 values parsed before the refusal, took 0.3 s on the 2-core machine at load 8
    assert seconds < 0.8 and peak < 8 << 20, (seconds, peak)
