"""Every categorical output carries its bucket count in the transformed schema, and make_dataset takes the
label from run.json.

The expected counts come from the run itself (vocabulary files + OOV buckets, the config's hash buckets);
the written ids are checked against them.
"""

import numpy as np
import pytest

from rich_rows import written_rows

ROWS = 300
CITIES = ["paris", "oslo", "rome", "lima", "bern", "nuuk"]
TAGS = ["a", "b", "c", "d", "e"]
WORDS = ["the", "cat", "sat", "on", "a", "mat", "dog", "ran", "far", "away", "and", "then", "slept"]


@pytest.fixture(scope="module")
def categorical_run(tmp_path_factory):
    from skewless.pipelines import run

    rng = np.random.default_rng(4)
    folder = tmp_path_factory.mktemp("categorical")
    lines = ["id,city,tags,codes,code,age,text,target"]
    for i in range(ROWS):
        tags = "|".join(rng.choice(TAGS, rng.integers(0, 4)))
        codes = "|".join(str(c) for c in rng.integers(0, 100, rng.integers(1, 4)))
        text = " ".join(rng.choice(WORDS, rng.integers(1, 7)))
        lines.append(f"{i},{rng.choice(CITIES)},{tags},{codes},{rng.integers(0, 30)},{rng.integers(18, 90)},"
                     f"{text},{rng.choice(['yes', 'no'])}")
    features = {
        "id": {"transform": "passthrough"},
        "city": {"transform": "vocabulary", "top_k": 3, "num_oov_buckets": 2},
        "tags": {"transform": "vocabulary", "list": True, "max_length": 3},
        "codes": {"transform": "hash", "hash_buckets": 8, "list": True},
        "code": {"transform": "hash", "hash_buckets": 5},
        "age": {"transform": "bucketize", "num_buckets": 4},
        "city_x_code": {"transform": "cross", "columns": ["city", "code"], "hash_buckets": 11},
        "text": {"transform": "text_vocabulary", "top_k": 8, "num_oov_buckets": 1},
    }
    # the same text three more times, for the other text outputs
    text_outputs = {"text_fixed": {"max_length": 4}, "text_bow": {"output": "bag_of_words"},
                    "text_tfidf": {"output": "tfidf", "num_oov_buckets": 3}}
    header = lines[0] + "," + ",".join(text_outputs)
    body = [line + f",{line.split(',')[6]}" * len(text_outputs) for line in lines[1:]]
    (folder / "rows.csv").write_text("\n".join([header] + body) + "\n")
    for name, options in text_outputs.items():
        features[name] = {"transform": "text_vocabulary", "top_k": 8, **options}
    config = {
        "name": "categorical",
        "input": {"format": "csv", "paths": [str(folder / "rows.csv")], "header": True},
        "features": features,
        "label": {"column": "target", "map": {"no": 0, "yes": 1}},
        "output": {"dir": str(folder / "out"), "splits": {"train": 0.8, "eval": 0.2}, "shards": 1},
    }
    return run(config)


def _expected_buckets(output) -> dict[str, int]:
    vocabulary = output.vocabulary_size_by_name
    return {
        "city": vocabulary("vocab_city") + 2,
        "tags": vocabulary("vocab_tags") + 1,  # num_oov_buckets defaults to 1
        "codes": 8,
        "code": 5,
        "age": 4,
        "city_x_code": 11,
        "text": vocabulary("vocab_text") + 1,
        "text_fixed": vocabulary("vocab_text_fixed") + 1,
        "text_bow": vocabulary("vocab_text_bow") + 1,
        "text_tfidf": vocabulary("vocab_text_tfidf") + 3,
    }


def test_every_categorical_output_has_its_bucket_count_and_ids_below_it(categorical_run):
    import tensorflow_transform as tft

    output = tft.TFTransformOutput(categorical_run.graph_dir)
    expected = _expected_buckets(output)
    assert expected["city"] == 5 and expected["tags"] == len(TAGS) + 1  # top_k 3 + 2 OOV; every tag seen
    written = written_rows(categorical_run.output_dir)
    for name, buckets in expected.items():
        assert output.num_buckets_for_transformed_feature(name) == buckets, name
        ids = np.asarray([i for row in written[name] for i in np.ravel(row)], dtype=np.int64)
        ids = ids[ids != -1] if name in ("tags", "text_fixed") else ids  # -1 pads a fixed-length list
        assert len(ids) and ids.min() >= 0 and ids.max() < buckets, name


def test_make_dataset_takes_the_label_from_run_json(categorical_run):
    from skewless.pipelines.tfdata.dataset import make_dataset

    labels, ids = [], []
    for features, label in make_dataset(categorical_run.output_dir, "train", batch_size=64, shuffle_buffer=0):
        assert "target" not in features
        labels.extend(label.numpy().tolist())
        ids.extend(features["id"].numpy().tolist())
    written = written_rows(categorical_run.output_dir)
    by_id = dict(zip(written["id"], written["target"]))
    assert len(ids) == categorical_run.rows["written"]["train"]
    assert labels == [by_id[i] for i in ids]
