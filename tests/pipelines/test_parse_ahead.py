"""`skewless run` parses the input in a process of its own while it imports (plan/ahead_of_imports.py): the job
takes the units that process wrote, parses the rest itself, and writes the bytes of a run without it."""

import json
import os
import pickle
import shutil
import signal
import subprocess
import sys
import threading
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from commands import TESTS
from dirty_csv import GOOD_ROWS, job_config, make_inputs

from skewless.config import load_config
from skewless.errors import OutputError
from skewless.pipelines import run
from skewless.pipelines.plan import ahead_of_imports
from skewless.pipelines.plan.preflight import check_inputs
from skewless.pipelines.reading.parse_ahead import Handoff
from skewless.pipelines.reading.parsed_units import stream_path
from skewless.pipelines.reading.sources import RowReader
from skewless.staged_folder import process_status, staging_name

PARTS = ("data", "quarantine", "statistics", "transform_graph")
WORTH_PARSING_AHEAD = ahead_of_imports.WORTH_PARSING_AHEAD  # as a `skewless` process has it


def _started(config):
    """`ahead_of_imports.started` as `skewless run` enters it: after the checks of its inputs."""
    return ahead_of_imports.started(config, check_inputs(config))


@pytest.fixture(autouse=True)
def small_inputs_parsed_ahead(monkeypatch):
    """The tests' inputs are small: parsed ahead all the same."""
    monkeypatch.setattr(ahead_of_imports, "WORTH_PARSING_AHEAD", 0)


def _dirty_csv(folder) -> dict:
    make_inputs(folder)
    return job_config(folder, max_bad_fraction=0.2)


def _jsonl(folder) -> dict:
    lines = [json.dumps({"id": i, "x": i / 7, "city": ["paris", "oslo", "rome"][i % 3], "label": ["no", "yes"][i % 2]})
             for i in range(300)]
    lines[40] = '{"id": 40, "x": '  # a line that does not decode: quarantined
    (folder / "rows.jsonl").write_text("\n".join(lines) + "\n")
    return _config(folder, {"format": "jsonl", "paths": [str(folder / "rows.jsonl")]})


def _parquet(folder) -> dict:
    for part in range(2):
        ids = list(range(part * 150, part * 150 + 150))
        pq.write_table(pa.table({"id": ids, "x": [i / 7 for i in ids], "city": [["paris", "oslo"][i % 2] for i in ids],
                                 "label": [["no", "yes"][i % 2] for i in ids]}), folder / f"part-{part}.parquet",
                       row_group_size=40)
    return _config(folder, {"format": "parquet", "paths": [str(folder / "part-*.parquet")]})


def _config(folder, source: dict) -> dict:
    return {"name": "ahead", "input": source,
            "features": {"id": {"transform": "passthrough"}, "x": {"transform": "z_score"},
                         "city": {"transform": "vocabulary"}},
            "label": {"column": "label", "map": {"no": 0, "yes": 1}},
            "output": {"dir": str(folder / "out"), "shards": 3, "max_bad_fraction": 0.2}}


INPUTS = {"csv": _dirty_csv, "jsonl": _jsonl, "parquet": _parquet}


def _files(folder) -> dict[str, bytes]:
    return {os.path.relpath(os.path.join(root, name), folder): open(os.path.join(root, name), "rb").read()
            for part in PARTS for root, _, names in os.walk(os.path.join(folder, part)) for name in names}


def _plain_run(config: dict, folder) -> tuple:
    """The run without a parsing process, its output moved aside (a run's graph names its own folder, so both runs
    write to the same one)."""
    result = run(config)
    shutil.move(config["output"]["dir"], folder / "plain")
    return result.rows, _files(folder / "plain")


def _all_parsed(handoff: Handoff, units: list) -> None:
    deadline = time.monotonic() + 120
    while not all(os.path.exists(stream_path(handoff.folder, unit.index)) for unit in units):
        assert time.monotonic() < deadline, "the parsing process wrote no stream of some unit in 120 s"
        time.sleep(0.05)


@pytest.mark.parametrize("source", sorted(INPUTS))
def test_units_parsed_ahead_are_taken_and_give_the_bytes_of_a_run_without(tmp_path, unit_reads, source):
    config = INPUTS[source](tmp_path)
    rows, files = _plain_run(config, tmp_path)
    assert len(set(unit_reads)) > 1  # several units, each read by the job
    job_config = load_config(config)
    with _started(job_config) as ahead:
        assert ahead is not None
        _all_parsed(ahead.handoff, ahead.units)
        unit_reads.clear()
        result = run(job_config, parse_ahead=ahead)
    assert unit_reads == []  # every unit came from the parsing process
    assert result.rows == rows and (rows["quarantined"] > 0 or source == "parquet")
    assert _files(config["output"]["dir"]) == files
    assert not os.path.exists(staging_name(config["output"]["dir"]))


def test_a_unit_the_process_did_not_finish_is_parsed_by_the_job(tmp_path, unit_reads):
    """The process claimed unit 1 and ended without its stream (killed, or failed on it): the job parses it."""
    config = _dirty_csv(tmp_path)
    rows, files = _plain_run(config, tmp_path)
    job_config = load_config(config)
    with _started(job_config) as ahead:
        _all_parsed(ahead.handoff, ahead.units)
        os.remove(stream_path(ahead.handoff.folder, 1))
        unit_reads.clear()
        result = run(job_config, parse_ahead=ahead)
    assert unit_reads == [1]
    assert result.rows == rows and _files(config["output"]["dir"]) == files


def test_a_file_changed_after_the_process_started_is_read_as_the_job_finds_it(tmp_path, unit_reads):
    """The job plans again: rows appended meanwhile change its units, so it discards what the process parsed."""
    config = _dirty_csv(tmp_path)
    job_config = load_config(config)
    with _started(job_config) as ahead:
        _all_parsed(ahead.handoff, ahead.units)
        with open(tmp_path / "part-b.csv", "ab") as handle:
            handle.write(b"".join(b"%d,1.5,2,oslo,no\n" % i for i in range(1000, 1040)))
        unit_reads.clear()
        result = run(job_config, parse_ahead=ahead)
    lines = [line for name in ("part-a.csv", "part-b.csv")
             for line in (tmp_path / name).read_bytes().splitlines()[1:] if line.strip()]
    # every unit, by the job, once
    assert sorted(unit_reads) == sorted(set(unit_reads)) == list(range(len(unit_reads))) and unit_reads
    assert result.rows["read"] == len(lines) == GOOD_ROWS + 40 + 12  # the good, appended and bad rows
    assert sum(result.rows["written"].values()) + result.rows["quarantined"] == len(lines)


def test_a_refused_overwrite_leaves_no_claim_and_no_process(tmp_path):
    config = _dirty_csv(tmp_path)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "notes.txt").write_text("mine")
    job_config = load_config(config)
    with _started(job_config) as ahead:
        with pytest.raises(OutputError, match="not a skewless run"):
            run(job_config, overwrite=True, parse_ahead=ahead)
    assert ahead._process.returncode is not None
    assert not os.path.exists(staging_name(str(tmp_path / "out")))
    assert os.listdir(tmp_path / "out") == ["notes.txt"]


def test_the_process_starts_before_beam_is_imported(tmp_path):
    """The command starts it before its imports: planning it lists local files without Beam (~1 s of import)."""
    config = _dirty_csv(tmp_path)
    script = ("import json, sys\n"
              "from skewless.config import load_config\n"
              "from skewless.pipelines.plan import ahead_of_imports\n"
              "ahead_of_imports.WORTH_PARSING_AHEAD = 0\n"
              "from skewless.pipelines.plan.preflight import check_inputs\n"
              "config = load_config(json.loads(sys.argv[1]))\n"
              "with ahead_of_imports.started(config, check_inputs(config)) as ahead:\n"
              "    print(ahead is not None, sorted({'apache_beam', 'tensorflow'} & set(sys.modules)))\n")
    done = subprocess.run([sys.executable, "-c", script, json.dumps(config)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[0] == "True []"


def test_the_process_imports_neither_tensorflow_nor_beam(tmp_path):
    config = load_config(_dirty_csv(tmp_path))
    from skewless.pipelines.plan.plan import plan

    job_plan = plan(config)
    reader = RowReader.for_job(config, job_plan.input_config, job_plan.columns)
    (tmp_path / "parsed").mkdir()
    handoff = Handoff(str(tmp_path / "parsed"), str(tmp_path / "progress"), "input", 0, 0)
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "skewless.pipelines.reading.parse_ahead"],
                          input=pickle.dumps((reader, job_plan.units, handoff, os.getpid())), capture_output=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.decode().splitlines() if "|" in line}
    assert "pyarrow" in imported and not {"tensorflow", "apache_beam", "tensorflow_transform"} & imported
    for unit in job_plan.units:  # and it wrote every unit's stream and row count
        assert os.path.exists(stream_path(handoff.folder, unit.index))
        assert int(open(handoff.progress_file(unit.index)).read()) > 0


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except (OSError, ValueError):
            continue
        if entry.isdigit() and int(stat[stat.rindex(b")") + 2:].split()[1]) == pid:
            found.append(int(entry))
    return found


def _ended(pid: int) -> bool:
    status = process_status(pid)
    return status is None or status[0] in ("Z", "X")  # gone, or ended and not yet waited for by its new parent


def test_a_small_input_is_parsed_by_the_job(tmp_path, monkeypatch):
    monkeypatch.setattr(ahead_of_imports, "WORTH_PARSING_AHEAD", 10**9)
    with _started(load_config(_dirty_csv(tmp_path))) as ahead:
        assert ahead is None
    assert not os.path.exists(staging_name(str(tmp_path / "out")))


def test_a_process_without_a_start_time_is_not_used(tmp_path, monkeypatch):
    """Without /proc's start time the process cannot be told from a later one of its pid (the job would parse a
    unit beside it): it is ended and the job parses every unit."""
    from skewless import staged_folder

    monkeypatch.setattr(staged_folder, "process_status", lambda pid: None)
    with _started(load_config(_dirty_csv(tmp_path))) as ahead:
        assert ahead is None
        assert _children(os.getpid()) == []  # ended and waited for
    assert not os.path.exists(staging_name(str(tmp_path / "out")))


def test_the_process_dies_with_a_killed_run_and_clean_removes_the_claim(tmp_path):
    # past WORTH_PARSING_AHEAD, so the command starts the process
    block = "".join(f"{i},{['x', 'y', 'z'][i % 3]},{i % 2}\n" for i in range(100_000)).encode()
    with open(tmp_path / "big.csv", "wb") as handle:
        handle.write(b"a,b,label\n")
        for _ in range(WORTH_PARSING_AHEAD // len(block) + 1):
            handle.write(block)
    (tmp_path / "job.yaml").write_text(json.dumps({
        "name": "killed", "input": {"format": "csv", "paths": [str(tmp_path / "big.csv")], "header": True},
        "features": {"a": {"transform": "z_score"}, "b": {"transform": "vocabulary"}},
        "label": {"column": "label"}, "output": {"dir": str(tmp_path / "out")}}))
    command = subprocess.Popen([sys.executable, "-m", "skewless", "run", str(tmp_path / "job.yaml")],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ,
                                                                                          "PYTHONPATH": str(TESTS)})
    claim = os.path.join(staging_name(str(tmp_path / "out")), "run", "tmp", "parsed", "unit-00000.arrow.claim")
    deadline = time.monotonic() + 60
    while not os.path.exists(claim):  # the parsing process is at work
        assert command.poll() is None and time.monotonic() < deadline, "no parsing process started"
        time.sleep(0.01)
    children = _children(command.pid)
    try:
        for child in children:  # stopped, so it cannot end by finishing its work: only a signal ends it
            os.kill(child, signal.SIGSTOP)
        os.kill(command.pid, signal.SIGKILL)
        command.wait()
        deadline = time.monotonic() + 10
        while not all(_ended(child) for child in children):
            assert time.monotonic() < deadline, "the parsing process outlived the run"
            time.sleep(0.05)
    finally:
        for child in children:
            if not _ended(child):
                os.kill(child, signal.SIGKILL)
    assert children and os.path.isdir(staging_name(str(tmp_path / "out")))
    done = subprocess.run([sys.executable, "-m", "skewless", "clean", str(tmp_path / "out")], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert not os.path.exists(staging_name(str(tmp_path / "out"))) and not os.path.exists(tmp_path / "out")


def test_a_unit_without_rows_is_taken_from_the_process(tmp_path):
    """A unit can hold no row (its byte range inside one long line): its stream and its count of 0 are written."""
    from skewless.pipelines.reading import parse_ahead
    from skewless.pipelines.reading.format import WorkUnit

    handoff = Handoff(str(tmp_path), str(tmp_path / "progress"), "input", os.getpid(),
                      process_status(os.getpid())[1])

    class Reader:
        def read(self, unit):
            return iter(())

    assert parse_ahead._claim(handoff.folder, 2) and parse_ahead._parse(Reader(), WorkUnit(2, ()), handoff)
    assert handoff.parsed(2, threading.Event()) == 0


def test_the_process_leaves_its_unit_once_the_job_starts_parsing(tmp_path):
    """The job's first stage asks it to stop (its threads parse on both cores now): the unit it is on is left
    unfinished, for the job to parse."""
    import numpy as np

    from skewless.pipelines.reading import parse_ahead
    from skewless.pipelines.reading.format import WorkUnit
    from skewless.pipelines.reading.sources import Chunk

    handoff = Handoff(str(tmp_path), str(tmp_path / "progress"), "input", 0, 0)

    class Reader:
        def read(self, unit):
            for index in range(3):
                yield Chunk(pa.table({"a": [index]}), np.zeros(1, np.uint64))
                parse_ahead._touch(os.path.join(handoff.folder, parse_ahead._STOP))  # the job's stage starts

    assert parse_ahead._parse(Reader(), WorkUnit(4, ()), handoff) is False
    assert not os.path.exists(stream_path(handoff.folder, 4))  # none for the job to take: it parses the unit
    assert open(handoff.progress_file(4)).read() == "1"  # the chunk before it saw the stop (the job counts anew)
