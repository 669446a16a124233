"""The transform pass's units, reading and gzip on threads of their own (runner.overlap_stages) write the bytes of
running everything on one thread, and run.json times the pass."""

import threading

import pytest
from dirty_csv import job_config, make_inputs
from run_output import files_of

from skewless.pipelines.assemble.summary import transform_pass_seconds
from skewless.pipelines.write.unit_summary import Moment, UnitClock


@pytest.fixture
def stage_threads(monkeypatch):
    """Makes the CSV reader's blocks and the chunks rows are regrouped in small (many chunks per work unit, so the
    threads really overlap) and records the threads that run the graph, read the kept chunks and gzip."""
    from skewless.pipelines.reading import parsed_units, sources
    from skewless.pipelines.write import shards, transform
    from skewless.pipelines.reading import csv

    monkeypatch.setattr(csv, "CSV_BLOCK_BYTES", 512)
    monkeypatch.setattr(sources, "ROW_CHUNK", 8)
    seen = {"transform": [], "read": [], "gzip": []}

    def recorded(stage, original):
        def call(*args):
            seen[stage].append(threading.current_thread())
            return original(*args)
        return call

    monkeypatch.setattr(transform.ChunkTransformer, "transform",
                        recorded("transform", transform.ChunkTransformer.transform))
    monkeypatch.setattr(shards.ShardWriter, "_emit", recorded("gzip", shards.ShardWriter._emit))
    original_chunks = parsed_units._chunks

    def chunks(path):
        for chunk in original_chunks(path):
            seen["read"].append(threading.current_thread())
            yield chunk

    monkeypatch.setattr(parsed_units, "_chunks", chunks)
    return seen


def test_overlapped_stages_write_the_bytes_of_one_thread(tmp_path, stage_threads):
    from skewless.pipelines import run

    make_inputs(tmp_path)
    outputs = {}
    for overlap in (True, False):
        for seen in stage_threads.values():
            seen.clear()
        config = job_config(tmp_path, max_bad_fraction=0.2, splits={"train": 0.6, "eval": 0.4},
                            dir=str(tmp_path / f"out-{overlap}"))
        config["runner"] = {"overlap_stages": overlap}
        result = run(config)
        outputs[overlap] = files_of(result.output_dir, ("data", "quarantine", "statistics"))
        transforming = set(stage_threads["transform"])
        assert len(stage_threads["transform"]) > 3 * 3  # several chunks in each of 3 units
        # overlapped: a bundle's units on threads of their own (runner/bundle_threads.py); else the DoFn's thread
        assert ({thread.name.split("_")[0] for thread in transforming} == {"skewless-bundle"} if overlap
                else transforming == {threading.main_thread()})
        for stage in ("read", "gzip"):
            threads = set(stage_threads[stage])
            assert threads and (not threads & transforming if overlap else threads == transforming), stage
        assert result.rows["quarantined"] > 0
        seconds = result.seconds  # every unit ran in this process: run.json times the pass
        assert 0 < seconds["transform_pass"] < seconds["pipeline"] and seconds["transform_pass_cpu"] > 0
    overlapped, one_thread = outputs[True], outputs[False]
    assert {path.split("/")[0] for path in one_thread} == {"data", "quarantine", "statistics"}
    assert sorted(overlapped) == sorted(one_thread)
    assert [path for path in one_thread if overlapped[path] != one_thread[path]] == []


def _clock(started: tuple, finished: tuple, pid: int = 7) -> UnitClock:
    """A unit's clock from (wall, cpu) pairs."""
    return UnitClock(started=Moment(wall=started[0], cpu=started[1], pid=pid),
                     finished=Moment(wall=finished[0], cpu=finished[1], pid=pid))


def test_transform_pass_spans_the_first_start_to_the_last_finish():
    clocks = [_clock((100.0, 5.0), (103.5, 9.0)), _clock((100.5, 5.25), (104.0, 10.5)),
              _clock((103.5, 9.0), (103.75, 9.5))]
    assert transform_pass_seconds(clocks) == {"transform_pass": 4.0, "transform_pass_cpu": 5.5}


def test_transform_pass_is_left_out_when_units_ran_in_other_processes():
    clocks = [_clock((100.0, 5.0), (103.5, 9.0), pid=7), _clock((100.5, 1.0), (104.0, 4.5), pid=8)]
    assert transform_pass_seconds(clocks) == {}
