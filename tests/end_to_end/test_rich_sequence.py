"""tf.train.SequenceExample input and output (`input.record: sequence_example`, `output.format: sequence_example`).

Documents with context features (author id, title, publication date) and two feature lists (each
sentence's tokens, each sentence's score) go through the job. The shards parse with
`tf.io.parse_sequence_example` to values computed here independently (vocabulary ids from counts,
z-scores with NumPy), unseen tokens land in the OOV buckets, the serving path (TransformLayer, the
export's `transform_features`) gives the shards' values, and `make_dataset` returns ragged tensors.
"""

import collections
import json
import os
import re

import numpy as np
import pytest
import tensorflow as tf

from rich_rows import written_rows

DOCS = 150
WORDS = ["the", "cat", "sat", "on", "a", "mat", "dog", "ran", "far", "away", "home", "it", "was", "red", "sun"]
PUNCTUATION = re.compile(r"[!-/:-@\[-`{-~]")  # what text_vocabulary's default strip_regex removes


def make_documents(seed: int, count: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    weights = 1 / np.arange(1, len(WORDS) + 1)
    docs = []
    for i in range(count):
        sentences = [rng.choice(WORDS, rng.integers(0 if s else 1, 7), p=weights / weights.sum()).tolist()
                     for s in range(rng.integers(0 if i % 17 else 1, 5))]
        docs.append({
            "id": i,
            "author_id": int(rng.choice([101, 102, 103, 104, 205])),
            "title": " ".join(rng.choice(WORDS, rng.integers(1, 4)).tolist()).title() + "!",
            "pub_date": int(rng.integers(18000, 20000)),  # days since 1970-01-01
            "sentences": sentences,  # a list of steps, each a list of tokens (some sentences are empty)
            "scores": [[round(float(rng.normal(0.2, 1.5)), 3)] for _ in sentences],  # one value per step
            "label": int(rng.random() < 0.4),
        })
    docs[5]["sentences"], docs[5]["scores"] = [], []  # a document without sentences
    return docs


def sequence_example(doc: dict) -> tf.train.SequenceExample:
    example = tf.train.SequenceExample()
    context = example.context.feature
    for name in ("id", "author_id", "pub_date", "label"):
        context[name].int64_list.value.append(doc[name])
    context["title"].bytes_list.value.append(doc["title"].encode())
    for tokens in doc["sentences"]:
        step = example.feature_lists.feature_list["sentences"].feature.add()
        step.bytes_list.value.extend(t.encode() for t in tokens)
    for score in doc["scores"]:
        example.feature_lists.feature_list["scores"].feature.add().float_list.value.extend(score)
    return example


SCHEMA = """
feature { name: "id" type: INT }
feature { name: "author_id" type: INT }
feature { name: "title" type: BYTES }
feature { name: "pub_date" type: INT }
feature { name: "label" type: INT }
feature {
  name: "##SEQUENCE##"
  type: STRUCT
  struct_domain {
    feature { name: "sentences" type: BYTES }
    feature { name: "scores" type: FLOAT float_domain { min: -10 max: 10 } }
  }
}
"""


def write_records(path, records: list[bytes]) -> None:
    with tf.io.TFRecordWriter(str(path)) as writer:
        for record in records:
            writer.write(record)


def config(folder, output_format: str = "sequence_example", **changes) -> dict:
    return {
        "name": "documents",
        "input": {"format": "tfrecord", "record": "sequence_example", "paths": [str(folder / "docs-*.tfrecord")]},
        "features": {
            "id": {"transform": "passthrough"},
            "author_id": {"transform": "vocabulary"},
            "title": {"transform": "text_vocabulary"},
            "pub_date": {"transform": "z_score"},
            "sentences": {"transform": "vocabulary", "num_oov_buckets": 2, "sequence": True},
            "scores": {"transform": "z_score", "sequence": True},
        },
        "label": {"column": "label"},
        "output": {"dir": str(folder / "out"), "shards": 2, "format": output_format},
        **changes,
    }


@pytest.fixture(scope="module")
def documents():
    return make_documents(4, DOCS)


@pytest.fixture(scope="module")
def sequence_run(tmp_path_factory, documents):
    from skewless.pipelines import run

    folder = tmp_path_factory.mktemp("sequence")
    records = [sequence_example(doc).SerializeToString() for doc in documents]
    write_records(folder / "docs-0.tfrecord", records[:90])
    write_records(folder / "docs-1.tfrecord", records[90:])
    return folder, run(config(folder))


def vocabulary_ids(values: list) -> dict:
    """tf.Transform's order: by count, descending; ties by the value's bytes, descending."""
    counts = collections.Counter(values)
    order = sorted(counts, key=lambda value: (counts[value], str(value).encode()), reverse=True)
    return {value: i for i, value in enumerate(order)}


def z_scores(values: list[float]) -> tuple[float, float]:
    data = np.float32(values).astype(np.float64)
    return data.mean(), data.std()


def parsed_shards(run_dir) -> dict[str, list]:
    """Every shard record parsed with tf.io.parse_sequence_example and the run's spec, by feature, in id order."""
    import tensorflow_transform as tft

    from skewless.sequence_specs import split_transformed_spec

    spec = tft.TFTransformOutput(os.path.join(run_dir, "transform_graph")).transformed_feature_spec()
    context, lists = split_transformed_spec(spec)
    files = sorted(tf.io.gfile.glob(os.path.join(run_dir, "data", "*.tfrecord.gz")))
    records = list(tf.data.TFRecordDataset(files, compression_type="GZIP").as_numpy_iterator())
    parsed_context, parsed_lists, _ = tf.io.parse_sequence_example(records, context_features=context,
                                                                   sequence_features=lists)
    columns = {name: _python(value) for name, value in {**parsed_context, **parsed_lists}.items()}
    order = np.argsort(columns["id"], kind="stable")
    return {name: [values[i] for i in order] for name, values in columns.items()}


def _python(value) -> list:
    if isinstance(value, tf.SparseTensor):
        value = tf.RaggedTensor.from_sparse(value)
    return value.to_list() if isinstance(value, tf.RaggedTensor) else value.numpy().tolist()


def test_every_record_is_written_once_with_the_expected_values(sequence_run, documents):
    _, result = sequence_run
    assert result.rows["read"] == DOCS and result.rows["quarantined"] == 0
    assert sum(result.rows["written"].values()) == DOCS
    shards = parsed_shards(result.output_dir)
    assert shards["id"] == list(range(DOCS))
    # feature lists: each step's tokens mapped by a vocabulary over all tokens of all steps
    tokens = vocabulary_ids([t.encode() for doc in documents for sentence in doc["sentences"] for t in sentence])
    assert shards["sentences"] == [[[tokens[t.encode()] for t in s] for s in doc["sentences"]] for doc in documents]
    mean, std = z_scores([v for doc in documents for step in doc["scores"] for v in step])
    for doc, got in zip(documents, shards["scores"]):
        assert [len(step) for step in got] == [len(step) for step in doc["scores"]]
        np.testing.assert_allclose([v for step in got for v in step],
                                   [(np.float32(v) - mean) / std for step in doc["scores"] for v in step], atol=2e-6)
    # context features
    authors = vocabulary_ids([str(doc["author_id"]).encode() for doc in documents])
    assert shards["author_id"] == [authors[str(doc["author_id"]).encode()] for doc in documents]
    mean, std = z_scores([doc["pub_date"] for doc in documents])
    # float32 days (~19,000) are 0.002 apart: within 1e-6 of the float64 z-score
    np.testing.assert_allclose(shards["pub_date"], [(doc["pub_date"] - mean) / std for doc in documents], atol=1e-6)
    words = vocabulary_ids([w.encode() for doc in documents for w in PUNCTUATION.sub("", doc["title"].lower()).split()])
    assert shards["title"] == [[words[w.encode()] for w in PUNCTUATION.sub("", doc["title"].lower()).split()]
                               for doc in documents]
    assert shards["label"] == [doc["label"] for doc in documents]


def raw_rows(documents: list[dict]) -> list[dict]:
    """Documents as raw rows for the serving path: a feature list is a list of steps, each a list of values."""
    return [{name: value for name, value in doc.items() if name != "label"} for doc in documents]


def served(layer, rows: list[dict]) -> dict[str, list]:
    """Rows through serialized raw SequenceExamples, tf.io.parse_sequence_example and the layer."""
    from skewless.layers import parse_raw_examples, serialize_raw_examples

    spec = {name: s for name, s in layer.raw_feature_spec.items() if name != layer.label}
    records = tf.constant(serialize_raw_examples(rows, spec), tf.string)
    return {name: _python(value) for name, value in layer(parse_raw_examples(records, spec)).items()}


def test_serving_equals_the_shards_and_unseen_tokens_go_to_oov_buckets(sequence_run, documents):
    from skewless.layers import TransformLayer
    from skewless.pipelines.commands.verify import verify

    _, result = sequence_run
    layer = TransformLayer(result.output_dir)
    shards = parsed_shards(result.output_dir)
    got = served(layer, raw_rows(documents))
    assert set(got) == set(shards) - {"label"}
    for name in got:
        assert got[name] == shards[name], name  # floats bit for bit: the same graph
    size = result.features["sentences"]["vocabulary_size"]
    known = shards["sentences"][0][0][0]
    unseen = served(layer, [{**raw_rows(documents)[0], "sentences": [[documents[0]["sentences"][0][0], "zebra"],
                                                                      [], ["qwerty"]]}])
    # an unseen token: FarmHash64 % buckets, numbered after the vocabulary
    oov = tf.strings.to_hash_bucket_fast(["zebra", "qwerty"], 2).numpy() + size
    assert unseen["sentences"] == [[[known, oov[0]], [], [oov[1]]]]
    check = verify(result.output_dir, sample=60)
    assert check.differences == 0 and check.unseen_rows == 50
    assert {f.name for f in check.features} >= {"sentences", "scores", "title"}


def test_export_serves_raw_sequence_examples(sequence_run, documents, tmp_path):
    import keras

    from skewless.layers import TransformLayer, export_serving_model, raw_inputs, transform_raw_rows_exported

    _, result = sequence_run
    inputs = raw_inputs(result.output_dir)
    assert isinstance(inputs["sentences"], keras.KerasTensor) and inputs["sentences"].ragged
    features = TransformLayer(result.output_dir)(inputs)
    output = keras.layers.Dense(1)(keras.ops.expand_dims(features["pub_date"], -1))
    export_dir = export_serving_model(result.output_dir, keras.Model(inputs, output), tmp_path / "export")
    rows = raw_rows(documents[:40])
    exported = transform_raw_rows_exported(export_dir, rows)
    shards = parsed_shards(result.output_dir)
    for name in ("sentences", "scores", "title"):  # var-len: zero-padded
        np.testing.assert_array_equal(exported[name], tf.ragged.constant(shards[name][:40]).to_tensor().numpy(), name)
    for name in ("author_id", "pub_date"):
        np.testing.assert_array_equal(exported[name], np.asarray(shards[name][:40]), name)
    loaded = tf.saved_model.load(export_dir)
    assert "predict_raw" not in loaded.signatures  # a feature list is ragged; signatures take dense tensors
    examples = tf.constant([sequence_example(doc).SerializeToString() for doc in documents[:3]])
    assert loaded.signatures["serving_default"](examples=examples)["output_0"].shape == (3, 1)


def test_make_dataset_gives_ragged_feature_lists(sequence_run, documents):
    from skewless.pipelines.tfdata.dataset import make_dataset

    _, result = sequence_run
    with open(os.path.join(result.output_dir, "sequence_example.json")) as handle:
        assert json.load(handle)["feature_lists"] == ["scores", "sentences"]
    steps, tokens, ids = [], [], []
    for features, label in make_dataset(result.output_dir, "train", batch_size=16, shuffle_buffer=0):
        sentences = features["sentences"]
        assert isinstance(sentences, tf.RaggedTensor) and sentences.shape.rank == 3
        assert isinstance(features["title"], tf.RaggedTensor) and features["title"].shape.rank == 2
        assert label.dtype == tf.int64
        steps += sentences.row_lengths(axis=1).numpy().tolist()
        tokens += [row.numpy().tolist() for row in sentences.row_lengths(axis=2)]
        ids += features["id"].numpy().tolist()
    by_id = {doc["id"]: doc for doc in documents}
    assert steps == [len(by_id[i]["sentences"]) for i in ids]
    assert tokens == [[len(s) for s in by_id[i]["sentences"]] for i in ids]


def test_inspect_and_report_show_feature_lists(sequence_run, documents):
    import io

    from rich.console import Console

    from skewless.console.inspect_tables import print_run
    from skewless.inspect_run import describe_run

    _, result = sequence_run
    description = describe_run(result.output_dir)
    assert description["raw_features"]["sentences"]["kind"] == "ragged"
    # raw statistics are over the values of all steps
    assert description["features"]["scores"]["count"] == sum(len(step) for doc in documents for step in doc["scores"])
    out = io.StringIO()
    print_run(description, Console(file=out, width=200))
    assert "feature list (steps of values)" in out.getvalue()
    from skewless.report import render_report

    with open(render_report(result.output_dir)) as page:  # `skewless run` renders it; `run()` leaves that out
        assert "sentences" in page.read()


def test_sequence_input_with_example_output(sequence_run, documents):
    """Feature lists written as tf.train.Example follow tf.Transform's spec: values plus each step's length."""
    import tensorflow_transform as tft

    from skewless.pipelines import run

    folder, sequence_result = sequence_run
    result = run(config(folder, output_format="example", output={"dir": str(folder / "examples"), "shards": 1}))
    assert not os.path.exists(os.path.join(result.output_dir, "sequence_example.json"))
    spec = tft.TFTransformOutput(result.graph_dir).transformed_feature_spec()
    assert spec["sentences"].partitions == (tf.io.RaggedFeature.RowLengths("sentences$row_lengths_1"),)
    written = written_rows(result.output_dir)
    shards = parsed_shards(sequence_result.output_dir)
    assert written["sentences"] == shards["sentences"]
    # another split into work units sums the analyzer's partial means in another order: an ulp apart at most
    assert [[len(step) for step in row] for row in written["scores"]] == [[len(step) for step in row]
                                                                          for row in shards["scores"]]
    np.testing.assert_allclose([v for row in written["scores"] for step in row for v in step],
                               [v for row in shards["scores"] for step in row for v in step], atol=1e-6)


def test_bad_records_go_to_quarantine_with_file_record_and_feature(tmp_path, documents):
    from skewless.errors import TooManyBadRowsError
    from skewless.pipelines import run

    records = [sequence_example(doc) for doc in documents[:40]]
    misplaced = tf.train.SequenceExample()
    misplaced.CopyFrom(records[3])
    misplaced.context.feature["sentences"].bytes_list.value.append(b"cat")  # a feature list among the context
    del misplaced.feature_lists.feature_list["sentences"]
    wrong_kind = tf.train.SequenceExample()
    wrong_kind.CopyFrom(records[7])
    wrong_kind.feature_lists.feature_list["scores"].feature.add().bytes_list.value.append(b"high")
    title_as_list = tf.train.SequenceExample()
    title_as_list.CopyFrom(records[9])
    del title_as_list.context.feature["title"]
    title_as_list.feature_lists.feature_list["title"].feature.add().bytes_list.value.append(b"A Title")
    serialized = [record.SerializeToString() for record in records]
    serialized[3], serialized[7], serialized[9] = (misplaced.SerializeToString(), wrong_kind.SerializeToString(),
                                                   title_as_list.SerializeToString())
    serialized[12] = b"\x0a\x05not a proto"
    outside = tf.train.SequenceExample()
    outside.CopyFrom(records[20])
    outside.feature_lists.feature_list["scores"].feature.add().float_list.value.append(99.0)
    serialized[20] = outside.SerializeToString()
    write_records(tmp_path / "docs-0.tfrecord", serialized)
    # types from a schema (inference from the first records would stop at the bad ones), in TFX's
    # SequenceExample form: the feature lists are the features of the STRUCT; domains apply to their values
    (tmp_path / "docs.pbtxt").write_text(SCHEMA)
    changes = {"schema": str(tmp_path / "docs.pbtxt"),
               "output": {"dir": str(tmp_path / "out"), "shards": 1, "format": "sequence_example",
                          "max_bad_fraction": 0.25}}
    result = run(config(tmp_path, **changes))
    assert result.rows["read"] == 40 and result.rows["quarantined"] == 5 and sum(result.rows["written"].values()) == 35
    with open(next((tmp_path / "out" / "quarantine").glob("*.jsonl"))) as handle:
        bad = {row["line"]: row for row in map(json.loads, handle)}
    source = str(tmp_path / "docs-0.tfrecord")
    assert {row["source"] for row in bad.values()} == {source} and sorted(bad) == [4, 8, 10, 13, 21]
    assert bad[4]["reason"].startswith("sentences: is a context feature in this record")
    assert "scores" in bad[8]["reason"] and "high" in bad[8]["reason"]
    assert bad[10]["reason"].startswith("title: is a feature list in this record")
    assert "not a tf.train.SequenceExample" in bad[13]["reason"]
    assert bad[21]["reason"] == "scores: 99.0 is above the domain maximum 10.0"
    with pytest.raises(TooManyBadRowsError, match="docs-0.tfrecord:4: sentences"):
        run(config(tmp_path, schema=str(tmp_path / "docs.pbtxt"),
                   output={"dir": str(tmp_path / "strict"), "shards": 1}))


def test_config_errors_name_the_key(tmp_path):
    from skewless.config import load_config
    from skewless.errors import ConfigError

    good = config(tmp_path)
    with pytest.raises(ConfigError, match="features.sentences is a feature list .* input.record sequence_example"):
        load_config({**good, "input": {"format": "tfrecord", "paths": ["x.tfrecord"]}})
    with pytest.raises(ConfigError, match="input.record sequence_example needs input.format tfrecord"):
        load_config({**good, "input": {"format": "csv", "record": "sequence_example", "paths": ["x"], "header": True}})
    features = {**good["features"], "scores": {"transform": "z_score", "sequence": True, "max_length": 3}}
    with pytest.raises(ConfigError, match="features.scores: a feature list"):
        load_config({**good, "features": features})
    # text_vocabulary takes lists of tokens (list: true), not feature lists: refused by the transform, naming it
    with pytest.raises(ConfigError, match=r"features\.title: text_vocabulary takes texts, or lists of tokens \(list: "
                                          r"true\), not feature lists \(sequence: true\)"):
        load_config({**good, "features": {**good["features"], "title": {"transform": "text_vocabulary",
                                                                          "sequence": True}}})


def test_sequence_example_encoder_writes_protobuf_bytes():
    import pyarrow as pa

    from skewless.pipelines.write.example_encoder import encode_sequence_examples

    rng = np.random.default_rng(1)
    rows = [{"id": [i], "ids": [[int(v) for v in rng.integers(-3, 500, rng.integers(0, 4))] for _ in range(i % 4)],
             "w": [[float(v) for v in rng.normal(size=rng.integers(0, 3))] for _ in range(i % 3)],
             "t": [[b"x" * int(n) for n in rng.integers(0, 150, rng.integers(0, 3))] for _ in range(i % 2)]}
            for i in range(30)]
    nested = {"ids": pa.int64(), "w": pa.float32(), "t": pa.binary()}
    batch = pa.RecordBatch.from_arrays(
        [pa.array([r["id"] for r in rows], pa.large_list(pa.int64()))]
        + [pa.array([r[name] for r in rows], pa.large_list(pa.large_list(kind))) for name, kind in nested.items()],
        ["id", *nested])
    for row, got in zip(rows[5:], encode_sequence_examples(batch.slice(5)).to_list(), strict=True):
        example = tf.train.SequenceExample()
        example.context.feature["id"].int64_list.value.extend(row["id"])
        lists = example.feature_lists.feature_list
        for step in row["ids"]:
            lists["ids"].feature.add().int64_list.value.extend(step)
        for step in row["w"]:
            lists["w"].feature.add().float_list.value.extend(step)
        for step in row["t"]:
            lists["t"].feature.add().bytes_list.value.extend(step)
        for name in nested:
            lists[name]  # a feature list with no steps is still an entry of the map  # noqa: B018
        assert got == example.SerializeToString(deterministic=True)


def test_schema_and_config_must_agree_on_feature_lists(tmp_path, documents):
    from skewless.config import load_config
    from skewless.errors import ConfigError
    from skewless.pipelines.plan.plan import plan

    write_records(tmp_path / "docs-0.tfrecord", [sequence_example(doc).SerializeToString() for doc in documents[:3]])
    (tmp_path / "docs.pbtxt").write_text(SCHEMA)
    features = {**config(tmp_path)["features"], "scores": {"transform": "z_score"}}
    with pytest.raises(ConfigError, match=r"features.scores: .*docs.pbtxt declares 'scores' a feature list"):
        plan(load_config(config(tmp_path, schema=str(tmp_path / "docs.pbtxt"), features=features)))



def _flat(rows) -> list:
    """The values of rows of steps of values, in order."""
    return [value for row in rows for step in row for value in step]


def _stock_per_key(scores, score_keys, lengths, length_keys, temp_dir) -> tuple[list, list]:
    """Stock tf.Transform's z-scores of `scores` and 3 buckets of `lengths`, per key, each value given with its
    key (flat, in the job's order): what its per-key mappers compute of a ragged value with one key per row."""
    import tensorflow_transform as tft
    import tensorflow_transform.beam as tft_beam

    def preprocessing_fn(inputs):
        return {"scores": tft.scale_to_z_score_per_key(inputs["scores"], inputs["score_keys"]),
                "lengths": tft.bucketize_per_key(inputs["lengths"], inputs["length_keys"], 3)}

    spec = {name: tf.io.VarLenFeature(tf.float32 if name in ("scores", "lengths") else tf.string)
            for name in ("scores", "score_keys", "lengths", "length_keys")}
    # one row holding every value (so one batch, as the job's 150 documents are): SparseTensors of the same indices
    rows = [{"scores": np.float32(scores), "score_keys": score_keys, "lengths": np.float32(lengths),
             "length_keys": length_keys}]
    with tft_beam.Context(temp_dir=str(temp_dir)):
        (transformed, _), _ = (rows, tft.DatasetMetadata.from_feature_spec(spec)) | (
            tft_beam.AnalyzeAndTransformDataset(preprocessing_fn))
    return np.asarray(transformed[0]["scores"]).tolist(), np.asarray(transformed[0]["lengths"]).tolist()


def test_a_feature_list_takes_its_documents_key(tmp_path, documents):
    """`key` on a feature list (issue 45 item 1): every value of every step takes its document's key, as
    tf.Transform's per-key mappers take a ragged value's key from its row. The shards equal stock tf.Transform
    given each value with its key, the z-scores NumPy's per author; serving equals the shards, and an unseen
    author falls back (z_score leaves the values unscaled, bucketize gives -1)."""
    from skewless.layers import TransformLayer
    from skewless.pipelines import run

    # a second float feature list of several values a step (some steps and documents empty), distinct per word
    lengths = [[[len(token) + WORDS.index(token) / 16 for token in tokens] for tokens in doc["sentences"]]
               for doc in documents]
    records = []
    for doc, steps in zip(documents, lengths):
        example = sequence_example(doc)
        for step in steps:
            example.feature_lists.feature_list["lengths"].feature.add().float_list.value.extend(step)
        records.append(example.SerializeToString())
    write_records(tmp_path / "docs-0.tfrecord", records)
    keyed = config(tmp_path)
    keyed["features"]["scores"]["key"] = "author_id"
    keyed["features"]["lengths"] = {"transform": "bucketize", "num_buckets": 3, "sequence": True, "key": "author_id"}
    result = run(keyed)
    shards = parsed_shards(result.output_dir)
    scores = [doc["scores"] for doc in documents]
    # an int key groups by its decimal text
    keys = [[[str(doc["author_id"]).encode()] * len(step) for step in steps] for doc, steps in zip(documents, scores)]
    length_keys = [[[str(doc["author_id"]).encode()] * len(step) for step in steps]
                   for doc, steps in zip(documents, lengths)]
    stock_scores, stock_lengths = _stock_per_key(_flat(scores), _flat(keys), _flat(lengths), _flat(length_keys),
                                                 tmp_path / "tft")
    assert _flat(shards["scores"]) == stock_scores and _flat(shards["lengths"]) == stock_lengths
    assert [[len(step) for step in row] for row in shards["lengths"]] == [[len(step) for step in row]
                                                                          for row in lengths]
    for author in sorted({doc["author_id"] for doc in documents}):
        docs = [i for i, doc in enumerate(documents) if doc["author_id"] == author]
        mean, std = z_scores([v for i in docs for step in documents[i]["scores"] for v in step])
        np.testing.assert_allclose(_flat(shards["scores"][i] for i in docs),
                                   [(np.float32(v) - mean) / std for i in docs for step in documents[i]["scores"]
                                    for v in step], atol=1e-5, err_msg=str(author))
    rows = [{**row, "lengths": steps} for row, steps in zip(raw_rows(documents), lengths)]
    layer = TransformLayer(result.output_dir)
    got = served(layer, rows)
    assert got["scores"] == shards["scores"] and got["lengths"] == shards["lengths"]
    unseen = served(layer, [{**rows[0], "author_id": 999, "scores": [[1.5], [-2.25]], "lengths": [[3.5, 1.5], []]}])
    assert unseen["scores"] == [[[1.5], [-2.25]]] and unseen["lengths"] == [[[-1, -1], []]]
