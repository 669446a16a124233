"""A row's verdict does not depend on the rows read with it: a transform's own check of raw values (`raw_check`,
e.g. datetime's parse) sees a missing CSV value as missing whether or not another row of the block has a number
that does not parse (found by issue 43's cross-path matrix: an empty date field was quarantined as "'' is not an
ISO-8601 date" only when a batch-mate held `inf`)."""

import pytest

from skewless.config import load_config
from skewless.pipelines.plan.plan import plan
from skewless.pipelines.reading.sources import RowReader

GOOD = ["1,1.5,2024-01-05", "2,2.5,", '3,3.5,""', "4,4.5,2024-02-29T10:00:00"]


def verdicts(folder, lines: list[str]) -> dict[int, str]:
    """{line: reason} of the rows the job's reader quarantines."""
    (folder / "rows.csv").write_text("\n".join(["id,x,d", *lines]) + "\n")
    config = load_config({"name": "t", "input": {"format": "csv", "paths": [str(folder / "rows.csv")], "header": True},
                          "features": {"x": {"transform": "z_score"},
                                       "d": {"transform": "datetime", "parts": ["days"], "default": "1970-01-01"}},
                          "output": {"dir": str(folder / "out")}})
    job_plan = plan(config)
    reader = RowReader.for_job(config, job_plan.input_config, job_plan.columns)
    return {row.line: row.reason for unit in job_plan.units for chunk in reader.read(unit) for row in chunk.bad}


@pytest.mark.parametrize("bad_mate", ["5,inf,2024-01-05", "5,abc,2024-01-05", "5,1e400,2024-01-05"])
def test_a_missing_date_is_missing_whatever_its_batch_mates_hold(tmp_path, bad_mate):
    assert verdicts(tmp_path, GOOD) == {}
    found = verdicts(tmp_path, [*GOOD, bad_mate])
    assert list(found) == [6] and found[6].startswith("x: ")  # only the bad mate, for its own value
