"""The shared vocabulary analyzer writes what `tft.compute_and_apply_vocabulary` writes, and gives its ids."""

import numpy as np
import pytest

# counts chosen so that ties, the top_k cut and the threshold fall between tokens that only byte order
# separates; "" and tokens with line breaks cannot be in a text vocabulary file
TOKENS = ["x"] * 3 + ["y"] * 3 + ["ü"] * 3 + ["z"] * 2 + [""] * 2 + ["a\nb", "c\rd", "w", "Y"] + ["7"] * 4
SPECS = {  # name: (top_k, frequency_threshold)
    "plain": (None, None),
    "top3": (3, None),
    "top4": (4, None),
    "at_least_3": (None, 3),
    "top2_at_least_2": (2, 2),
}


def rows():
    rng = np.random.default_rng(7)
    order = rng.permutation(len(TOKENS))
    # a list column too: every row holds 0-2 of the tokens, so the sparse path counts values, not rows
    lists = [[TOKENS[j] for j in order[i : i + i % 3]] for i in range(len(TOKENS))]
    return [{"s": TOKENS[i], "blank": "", "n": int(i % 4), "list": lists[k]} for k, i in enumerate(order)]


def preprocessing_fn(inputs):
    import tensorflow as tf
    import tensorflow_transform as tft

    from skewless.pipelines.analyze.vocabularies import VocabularySpec, shared_vocabularies

    columns = {"plain": inputs["s"], "top3": inputs["s"], "top4": inputs["s"], "at_least_3": inputs["s"],
               "top2_at_least_2": inputs["s"], "list": inputs["list"], "empty": inputs["blank"],
               "numbers": tf.strings.as_string(inputs["n"])}
    options = {name: SPECS.get(name, (None, None)) for name in columns}
    specs = [VocabularySpec(f"ours_{name}", *options[name]) for name in columns]
    paths = shared_vocabularies({f"ours_{name}": tokens for name, tokens in columns.items()}, specs)
    outputs = {}
    for name, tokens in columns.items():
        top_k, threshold = options[name]
        ours = tft.apply_vocabulary(tokens, paths[f"ours_{name}"], num_oov_buckets=1)
        theirs = tft.compute_and_apply_vocabulary(tokens, top_k=top_k, frequency_threshold=threshold,
                                                  num_oov_buckets=1, vocab_filename=f"tft_{name}")
        outputs[f"ours_{name}"], outputs[f"tft_{name}"] = ours, theirs
    return outputs


@pytest.fixture(scope="module")
def analyzed(tmp_path_factory):
    import tensorflow as tf
    import tensorflow_transform as tft
    import tensorflow_transform.beam as tft_beam

    spec = {"s": tf.io.FixedLenFeature([], tf.string), "blank": tf.io.FixedLenFeature([], tf.string),
            "n": tf.io.FixedLenFeature([], tf.int64), "list": tf.io.VarLenFeature(tf.string)}
    metadata = tft.DatasetMetadata.from_feature_spec(spec)
    temp = tmp_path_factory.mktemp("vocabularies")
    # batches of 4 rows: the counts are summed across batches
    with tft_beam.Context(temp_dir=str(temp / "tmp"), desired_batch_size=4):
        (transformed, _), transform_fn = (rows(), metadata) | tft_beam.AnalyzeAndTransformDataset(preprocessing_fn)
        _ = transform_fn | tft_beam.WriteTransformFn(str(temp / "graph"))
    return transformed, tft.TFTransformOutput(str(temp / "graph"))


@pytest.mark.parametrize("name", [*SPECS, "list", "empty", "numbers"])
def test_files_and_ids_equal_tf_transform(analyzed, name):
    transformed, graph = analyzed
    ours = graph.vocabulary_file_by_name(f"ours_{name}")
    with open(ours, "rb") as handle, open(graph.vocabulary_file_by_name(f"tft_{name}"), "rb") as expected:
        assert handle.read() == expected.read()
    for row in transformed:
        np.testing.assert_array_equal(row[f"ours_{name}"], row[f"tft_{name}"])


def test_order_and_filters_from_a_count():
    from collections import Counter

    from skewless.pipelines.analyze.vocabularies import VocabularySpec, ordered_tokens

    counts = {token.encode(): n for token, n in Counter(TOKENS).items() if token and "\n" not in token and "\r" not in token}
    # by count, then by bytes, larger first: "ü" (0xc3 0xbc) > "y" > "x"
    assert ordered_tokens(counts, VocabularySpec("v")) == [b"7", "ü".encode(), b"y", b"x", b"z", b"w", b"Y"]
    assert ordered_tokens(counts, VocabularySpec("v", top_k=2)) == [b"7", "ü".encode()]
    assert ordered_tokens(counts, VocabularySpec("v", frequency_threshold=3)) == [b"7", "ü".encode(), b"y", b"x"]
    assert ordered_tokens({}, VocabularySpec("v")) == [b"49d0cd50-04bb-48c0-bc6f-5b575dce351a"]


def test_cache_coder_round_trips_any_bytes():
    from skewless.pipelines.analyze.vocabularies import CountsCoder

    accumulator = [{b"\xff\x00": 3, "ü".encode(): 1}, {}, {b"": 2}]
    coder = CountsCoder()
    assert coder.decode_cache(coder.encode_cache(accumulator)) == accumulator


def test_summing_accumulators_leaves_them_unchanged():
    """The merge step's inputs are also what tf.Transform encodes into its cache: summing must not change them."""
    import copy

    from skewless.pipelines.analyze.vocabularies import _SumCounts

    first, second = [{b"x": 2}, {}], [{b"x": 1, b"y": 4}, {b"z": 1}]
    merge = _SumCounts([None, None], accumulators=True)
    total = merge.add_input(merge.add_input(merge.create_accumulator(), first), second)
    assert total == [{b"x": 3, b"y": 4}, {b"z": 1}]
    assert first == [{b"x": 2}, {}] and second == [{b"x": 1, b"y": 4}, {b"z": 1}]
    # accumulators from several bundles (the merge's own) sum to the same
    partial = merge.add_input(merge.create_accumulator(), first)
    assert merge.merge_accumulators([merge.create_accumulator(), partial, copy.deepcopy(second)]) == total
