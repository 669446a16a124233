"""The transform pass reads the rows the analysis pass parsed (input.keep_parsed), with the same result."""

import os

import numpy as np
import pyarrow as pa

from dirty_csv import job_config, make_inputs

from skewless.pipelines.reading import unit_stream
from skewless.pipelines.reading.parsed_units import kept, read_kept, stream_path
from skewless.pipelines.reading.sources import BadRow, Chunk, regrouped


def test_kept_chunks_read_back_equal_and_a_partial_stream_is_not_read(tmp_path):
    chunks = [
        Chunk(pa.table({"a": [1, None], "s": ["x", "y"]}), np.array([5, 2**63], np.uint64), [BadRow("f", 3, "why", "raw")]),
        Chunk(pa.table({"a": pa.array([], pa.int64()), "s": pa.array([], pa.string())}), np.zeros(0, np.uint64),
              [BadRow("f", 9, "why not", "r2")]),
    ]
    path = stream_path(str(tmp_path), 7)
    assert list(kept(iter(chunks), path)) == chunks
    for ours, theirs in zip(read_kept(path), chunks, strict=True):
        assert ours.table.equals(theirs.table) and ours.keys.tolist() == theirs.keys.tolist()
        assert ours.bad == theirs.bad
    stopped = kept(iter(chunks), stream_path(str(tmp_path), 8))
    next(stopped)
    stopped.close()  # the consumer failed after one chunk: no stream for the transform pass to trust
    assert read_kept(stream_path(str(tmp_path), 8)) is None


def test_a_chunk_is_kept_as_batches_the_analysis_regroups_whole(tmp_path, monkeypatch):
    """The transform pass reads a kept chunk a batch at a time (STREAM_BATCH_ROWS rows), its bad and unlabeled
    rows with the first; regrouped as the analysis reads them, the batches are the chunk again."""
    monkeypatch.setattr(unit_stream, "STREAM_BATCH_ROWS", 2)
    chunk = Chunk(pa.table({"a": [1, None, 3, 4, 5], "s": ["v", "w", None, "y", "z"]}),
                  np.array([9, 8, 7, 2**64 - 1, 0], np.uint64), [BadRow("f", 4, "why", "raw")], unlabeled=2)
    path = stream_path(str(tmp_path), 0)
    assert list(kept(iter([chunk]), path)) == [chunk]
    batches = list(read_kept(path))
    assert [batch.table.num_rows for batch in batches] == [2, 2, 1]
    assert [(batch.bad, batch.unlabeled) for batch in batches] == [(chunk.bad, 2), ([], 0), ([], 0)]
    assert pa.concat_tables(batch.table for batch in batches).equals(chunk.table)
    assert np.concatenate([batch.keys for batch in batches]).tolist() == chunk.keys.tolist()
    (whole,) = regrouped(read_kept(path), 5)
    assert whole.table.equals(chunk.table) and whole.keys.tolist() == chunk.keys.tolist()
    assert (whole.bad, whole.unlabeled) == (chunk.bad, 2)


def test_transform_pass_reads_the_kept_rows_and_writes_the_same_output(tmp_path, unit_reads):
    from skewless.pipelines import run

    reads = unit_reads
    outputs = {}
    make_inputs(tmp_path)
    for keep in (True, False):
        config = job_config(tmp_path, max_bad_fraction=0.2, dir=str(tmp_path / f"out-{keep}"))
        config["input"]["keep_parsed"] = keep
        reads.clear()
        outputs[keep] = (run(config), sorted(reads))
    (kept_run, kept_reads), (parsed_run, parsed_reads) = outputs[True], outputs[False]
    # every unit read once when kept; parsed again, three times: the analysis, the split statistics (both in input
    # order) and the transform pass
    assert sorted(set(kept_reads)) == kept_reads and parsed_reads == sorted(kept_reads * 3)
    for part in ("data", "quarantine"):
        ours, theirs = _files(kept_run.output_dir, part), _files(parsed_run.output_dir, part)
        assert ours and ours == theirs
    assert kept_run.rows == parsed_run.rows and kept_run.rows["quarantined"] > 0


def _files(run_dir: str, part: str) -> dict[str, bytes]:
    folder = os.path.join(run_dir, part)
    return {name: open(os.path.join(folder, name), "rb").read() for name in sorted(os.listdir(folder))}


def test_a_unit_without_rows_reads_back_as_no_chunks(tmp_path):
    path = stream_path(str(tmp_path), 3)
    assert list(kept(iter([]), path)) == []
    assert list(read_kept(path)) == []


def test_a_field_longer_than_a_work_unit_is_read_whole(tmp_path):
    """A CSV line longer than the byte range of a work unit leaves a unit without rows; nothing is lost."""
    import tensorflow as tf

    from skewless.pipelines import run
    from skewless.pipelines.reading.tfrecord import READ_BYTES

    long_text = "z" * (2 * READ_BYTES + 17)
    lines = ["n,text"] + [f"{i},t{i % 3}" for i in range(40)] + [f"40,{long_text}"] + [f"{i},t0" for i in range(41, 50)]
    (tmp_path / "rows.csv").write_text("\n".join(lines) + "\n")
    result = run({
        "name": "long",
        "input": {"format": "csv", "paths": [str(tmp_path / "rows.csv")], "header": True},
        "features": {"n": {"transform": "passthrough"}, "text": {"transform": "passthrough"}},
        "output": {"dir": str(tmp_path / "out"), "splits": {"train": 1.0}},
    })
    files = sorted((tmp_path / "out" / "data").glob("train-*"))
    compression = "GZIP" if files[0].name.endswith(".gz") else ""
    texts = {}
    for record in tf.data.TFRecordDataset([str(f) for f in files], compression_type=compression):
        feature = tf.train.Example.FromString(record.numpy()).features.feature
        texts[feature["n"].int64_list.value[0]] = feature["text"].bytes_list.value[0].decode()
    assert result.rows["read"] == 50 and sorted(texts) == list(range(50))
    assert texts[40] == long_text
