"""Raw statistics are counted once where the values are the same (issue 40): a config's only split receives every
row, in the tables the analysis pass counted, so it takes the analysis's column statistics
(pipelines/statistics/in_input_order.py) and the job writes what counting them again wrote."""

import collections
import json
import threading

import pytest
from example_job import example_config
from run_output import files_of

from skewless.pipelines import run
from skewless.pipelines.analyze import saved_model_reuse
from skewless.pipelines.analyze.stats import RawStatsFn
from skewless.pipelines.reading.format import ROW_CHUNK
from skewless.pipelines.statistics import in_input_order as statistics_in_input_order

ROWS = 70_000  # two tables of the input-order stream


@pytest.fixture
def counted_tables(monkeypatch):
    """The rows of every table `RawStatsFn` counted during the test (its columns may be counted in parts, on
    threads: a table counts once its first column is; every column must have been given as many rows)."""
    rows = []
    per_column = collections.Counter()
    add_columns = RawStatsFn.add_columns

    def counting(self, accumulator, table, positions):
        with lock:
            per_column.update({position: table.num_rows for position in positions})
            if 0 in positions:
                rows.append(table.num_rows)
        return add_columns(self, accumulator, table, positions)

    lock = threading.Lock()
    monkeypatch.setattr(RawStatsFn, "add_columns", counting)
    yield rows
    assert len(set(per_column.values())) == 1, per_column


def _outputs(result) -> tuple[dict, str]:
    with open(f"{result.output_dir}/run.json") as handle:
        features = json.load(handle)["features"]
    return files_of(result.output_dir), json.dumps(features, sort_keys=True)


@pytest.mark.parametrize("splits, counts", [
    ({"train": 1.0}, 1),  # the analysis's count serves the one split
    ({"train": 0.75, "eval": 0.25}, 2),  # the input, then each split's rows: other values
], ids=["one-split", "two-splits"])
def test_a_table_is_counted_once_per_set_of_rows_and_the_outputs_are_the_counted_twice_ones(
        tmp_path, monkeypatch, counted_tables, splits, counts):
    config = example_config(tmp_path / "out", input={"format": "synthetic", "rows": ROWS, "seed": 9},
                            output={"splits": splits})
    once = _outputs(run(config))
    assert sum(counted_tables) == counts * ROWS
    assert counted_tables[:2] == [ROW_CHUNK, ROWS - ROW_CHUNK]  # the analysis's tables, in input order
    # the path before: the split statistics count every column of their rows themselves
    split_states = statistics_in_input_order.split_states
    monkeypatch.setattr(statistics_in_input_order, "split_states",
                        lambda units, spec, candidates, input_columns=None: split_states(units, spec, candidates))
    saved_model_reuse.forget()
    del counted_tables[:]
    twice = _outputs(run(config, overwrite=True))
    assert sum(counted_tables) == 2 * ROWS
    assert once == twice
