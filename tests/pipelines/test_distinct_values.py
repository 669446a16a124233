"""String columns through the transform graph once per distinct value (pipelines/write/distinct_values.py): the
transform pass's chunk output (its record batch, encoded bytes and OOV counts) equals the graph's over every row,
for each transform kind taking strings; the row-wise ones are fed by distinct value, the others as before."""

import numpy as np
import pyarrow as pa
import pytest

from rich_rows import with_gaps, write_csv
from skewless.config import load_config
from skewless.pipelines.plan.plan import plan
from skewless.pipelines.reading.sources import RowReader
from skewless.pipelines.write.distinct_values import DistinctFeed, graph_checked, row_wise_columns
from skewless.pipelines.write.transform import ChunkTransformer, _oov_rows, tensors_to_record_batch
from skewless.safe_names import vocabulary_filename

# (an empty CSV field is a missing value, a comma a field's end)
WORDS = ["Red", "green", "BLUE", "red", "teal", "Green!", " ", "café", "x y", "ünïcode"]
TEXTS = ["the cat sat", "The Dog ran far", "a cat; a dog", "!!", "birds fly high", "the end", "cat cat cat"]
DATES = ["2024-01-31", "2024-02-29T23:59:59Z", "1999-12-31T12:00:00+05:30", "2030-06-15 08:30", "0001-01-01",
         "9999-12-31T23:59:59", "2024-03-10T02:30:00-08:00"]

# (feature, its config, its raw column's values drawn from `rng` for `rows` rows, fed by distinct value)
CASES = [
    ("voc", {"transform": "vocabulary", "num_oov_buckets": 2},
     lambda rng, rows: rng.choice(WORDS, rows).tolist(), True),
    ("voc_top", {"transform": "vocabulary", "top_k": 3, "num_oov_buckets": 0, "output": "one_hot"},
     lambda rng, rows: rng.choice(WORDS, rows).tolist(), True),
    ("voc_fill", {"transform": "vocabulary", "fill": "most_frequent", "missing_indicator": True},
     lambda rng, rows: with_gaps(rng, rng.choice(WORDS, rows).tolist(), 0.2), True),
    # ordered by the label: its analyzer's assert (as many labels as values) reads the label too, and stays in the graph
    ("voc_mi", {"transform": "vocabulary", "labels": True, "top_k": 5},
     lambda rng, rows: rng.choice(WORDS, rows).tolist(), False),
    ("hsh", {"transform": "hash", "hash_buckets": 13},
     lambda rng, rows: rng.choice(WORDS, rows).tolist(), True),
    ("hsh_key", {"transform": "hash", "hash_buckets": 7, "key": [3, 99], "output": "one_hot", "default": "?",
                 "missing_indicator": True},
     lambda rng, rows: with_gaps(rng, rng.choice(WORDS, rows).tolist(), 0.3), True),
    ("text", {"transform": "text_vocabulary", "num_oov_buckets": 1},
     lambda rng, rows: rng.choice(TEXTS, rows).tolist(), True),
    ("text_bag", {"transform": "text_vocabulary", "output": "bag_of_words"},
     lambda rng, rows: rng.choice(TEXTS, rows).tolist(), True),
    ("text_tfidf", {"transform": "text_vocabulary", "output": "tfidf"},
     lambda rng, rows: rng.choice(TEXTS, rows).tolist(), False),
    ("when", {"transform": "datetime", "parts": ["year", "month", "day_of_week", "hour"], "cyclical": True},
     lambda rng, rows: rng.choice(DATES, rows).tolist(), True),
    ("pas", {"transform": "passthrough", "default": "none"},
     lambda rng, rows: with_gaps(rng, rng.choice(WORDS, rows).tolist(), 0.1), True),
    ("tags", {"transform": "vocabulary", "list": True, "num_oov_buckets": 1},  # several values a row
     lambda rng, rows: ["|".join(rng.choice(WORDS[:5], rng.integers(0, 4))) or None for _ in range(rows)], False),
    ("crossed_a", {"transform": "vocabulary"},  # read by the cross too
     lambda rng, rows: rng.choice(WORDS[:4], rows).tolist(), False),
    ("crossed_b", {"transform": "hash", "hash_buckets": 3},
     lambda rng, rows: rng.choice(WORDS[4:], rows).tolist(), False),
]
# a feature of no column of its own
EXTRA_FEATURES = {"a_x_b": {"transform": "cross", "columns": ["crossed_a", "crossed_b"], "hash_buckets": 40}}
LABEL = {"column": "label", "map": {"no": 0, "yes": 1}}
TRAIN_ROWS, NEW_ROWS = 3000, 2500


def draw(seed: int, rows: int) -> dict[str, list]:
    rng = np.random.default_rng(seed)
    raw = {name: values(rng, rows) for name, _, values, _ in CASES}
    raw["label"] = rng.choice(["no", "yes"], rows).tolist()
    return raw


def config_of(path, output_dir) -> dict:
    return {"name": "distinct", "input": {"format": "csv", "paths": [str(path)], "header": True},
            "features": {**{name: options for name, options, _, _ in CASES}, **EXTRA_FEATURES}, "label": LABEL,
            "output": {"dir": str(output_dir), "splits": {"train": 1.0}}}


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    """A run's graph, its config's row-wise columns, and the chunks of rows it has not seen (unseen values)."""
    from skewless.pipelines import run

    folder = tmp_path_factory.mktemp("distinct")
    write_csv(folder / "train.csv", draw(1, TRAIN_ROWS))
    result = run(config_of(folder / "train.csv", folder / "out"))
    write_csv(folder / "new.csv", {**draw(2, NEW_ROWS), "voc": ["never-seen"] * 7 + draw(2, NEW_ROWS - 7)["voc"]})
    config = load_config(config_of(folder / "new.csv", folder / "unused"))
    job_plan = plan(config)
    reader = RowReader.for_job(config, job_plan.input_config, job_plan.columns)
    tables = [chunk.table for unit in job_plan.units for chunk in reader.read(unit)]
    assert sum(table.num_rows for table in tables) == NEW_ROWS  # no row was quarantined
    graph = f"{result.output_dir}/transform_graph"
    return graph, job_plan.columns, row_wise_columns(config, job_plan.columns), pa.concat_tables(tables), config


@pytest.fixture(scope="module")
def paths(job):
    graph, columns, row_wise, _, _ = job
    return ChunkTransformer(graph, columns), ChunkTransformer(graph, columns, row_wise=row_wise)


@pytest.mark.parametrize("feature, distinct", [(name, distinct) for name, _, _, distinct in CASES],
                         ids=[name for name, *_ in CASES])
def test_each_string_transform_gives_the_old_paths_rows(job, paths, feature, distinct):
    _, _, _, table, config = job
    old, new = paths
    assert (feature in new._feed.columns) == distinct
    outputs = config.features[feature].outputs(feature)
    # whole, and cut where a slice starts mid-way and holds one row
    for start, stop in ((0, table.num_rows), (17, 1041), (2000, 2001)):
        rows = table.slice(start, stop - start)
        ours, theirs = new.transform(rows), old.transform(rows)
        for name in outputs:
            mine, expected = tensors_to_record_batch({name: ours[name]}), tensors_to_record_batch({name: theirs[name]})
            assert mine.equals(expected), (name, start)
            assert new.encode(mine).to_list() == old.encode(expected).to_list()
            if config.features[feature].transform_kind.counts_oov:
                size = old.output.vocabulary_size_by_name(vocabulary_filename(feature))
                assert _oov_rows(ours[name], size) == _oov_rows(theirs[name], size)


def test_the_whole_chunk_encodes_to_the_same_bytes_and_some_rows_are_out_of_vocabulary(job, paths):
    _, _, row_wise, table, _ = job
    old, new = paths
    ours, theirs = new.transform(table), old.transform(table)
    assert sorted(ours) == sorted(theirs)
    assert new.encode(tensors_to_record_batch(ours)).to_list() == old.encode(tensors_to_record_batch(theirs)).to_list()
    size = old.output.vocabulary_size_by_name(vocabulary_filename("voc"))
    assert _oov_rows(ours["voc"], size) >= 7  # the unseen value, in OOV buckets, read from distinct values
    # the config calls the label and voc_mi row-wise; the graph's assert reading both refuses them
    assert {"label", "voc_mi"} <= set(row_wise)
    assert set(new._feed.columns) == {name for name, _, _, distinct in CASES if distinct}


def test_a_column_the_graph_reads_otherwise_than_the_config_says_is_fed_as_before(job):
    graph, columns, row_wise, _, _ = job
    output = ChunkTransformer(graph, columns).output
    # the outputs `voc` gives are more than the claimed ones; `voc_top`'s claim is the config's
    claimed = {"voc": ("voc_missing",), "voc_top": ("voc_top", "unrelated")}
    assert graph_checked(output, claimed) == {"voc_top": ("voc_top",)}
    assert DistinctFeed(output, columns, claimed).columns == ["voc_top"]


def test_a_preprocessing_fn_hook_feeds_every_column_as_before(job):
    _, columns, _, _, config = job
    hooked = config.model_copy(update={"preprocessing_fn": "some.module:function"})
    assert row_wise_columns(hooked, columns) == {}
