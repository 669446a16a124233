"""The transform pass runs the graph on slices of each chunk (to bound its memory): the output must not depend on
where the slices are cut."""

import json
import os

from example_job import example_config
from run_output import files_of


def test_slices_write_the_same_bytes_statistics_and_counts_as_whole_chunks(tmp_path, monkeypatch):
    from skewless.pipelines import run
    from skewless.pipelines.write import transform

    batch_rows = []
    original = transform.ChunkTransformer.transform

    def recorded(self, table):
        batch_rows.append(table.num_rows)
        return original(self, table)

    monkeypatch.setattr(transform.ChunkTransformer, "transform", recorded)
    outputs, largest = {}, {}
    for rows in (1_000_000, 37):  # whole chunks, then slices cut through both splits' rows
        monkeypatch.setattr(transform, "TRANSFORM_BATCH_ROWS", rows)
        batch_rows.clear()
        outputs[rows] = run(example_config(tmp_path / f"out-{rows}")).output_dir
        largest[rows] = max(batch_rows)
    assert largest[37] == 37 < largest[1_000_000]  # the slices were cut, and more finely than the chunks
    whole, sliced = outputs[1_000_000], outputs[37]
    for part in ("data", "statistics"):
        ours, theirs = files_of(sliced, (part,)), files_of(whole, (part,))
        assert ours and ours == theirs
    ours, theirs = _summary(sliced), _summary(whole)
    assert ours["rows"] == theirs["rows"] and ours["features"] == theirs["features"]
    assert any("oov" in json.dumps(feature) for feature in ours["features"].values())


def _summary(run_dir: str) -> dict:
    with open(os.path.join(run_dir, "run.json")) as handle:
        return json.load(handle)
