"""A work unit's summary is typed: what TransformUnitFn writes reads back equal, and a key the model does not know
(a writer and a reader drifting apart) is refused."""

import json

import pytest
from pydantic import ValidationError

from skewless.pipelines.write.unit_summary import Moment, UnitClock, UnitSummary, read_unit_summary, write_unit_summary
from skewless.run_summary import Shard


def _summary() -> UnitSummary:
    moment = Moment(wall=1.5, cpu=0.25, pid=7)
    return UnitSummary(unit=3, read=10, unlabeled=1, quarantined=2, reasons=["a.csv:4: x: not a float"],
                       shards={"train": Shard(path="data/train-00003-of-00004.tfrecord.gz", rows=6, bytes=120)},
                       oov={"city": 2}, clock=UnitClock(started=moment, finished=moment))


def test_a_unit_summary_reads_back_equal(tmp_path):
    path = str(tmp_path / "unit-00003.json")
    write_unit_summary(_summary(), path)
    assert read_unit_summary(path) == _summary()
    assert json.loads((tmp_path / "unit-00003.json").read_text())["shards"]["train"]["rows"] == 6


def test_a_key_the_model_does_not_know_is_refused(tmp_path):
    written = _summary().model_dump(mode="json")
    (tmp_path / "unit.json").write_text(json.dumps({**written, "surprise": 1}))
    with pytest.raises(ValidationError, match="surprise"):
        read_unit_summary(str(tmp_path / "unit.json"))
