"""Canaries: each internal of tf.Transform, TensorFlow, Keras or protobuf that skewless relies on, checked on its own.

A dependency upgrade that changes one of them fails here first, with a message naming the dependency, what
changed and the skewless module that relies on it, rather than as a wrong vocabulary file, a refused native
feature or shards that differ from run to run. docs/design.md lists these reliances.
"""

import os

import keras
import numpy as np
import pyarrow as pa
import pytest
import tensorflow as tf

# --- pipelines/analyze/vocabularies.py: one cacheable tf.Transform analyzer built from tft's private nodes ------------


def test_tft_analyzer_nodes_still_build_a_ptransform_analyzer():
    from tensorflow_transform import analyzer_nodes, nodes

    expected = {
        "TensorInfo": ("dtype", "shape", "temporary_asset_info"),
        "TemporaryAssetInfo": ("value", "file_format"),
        "PTransform": ("ptransform", "output_tensor_info_list", "is_partitionable", "cache_coder", "label"),
    }
    for name, fields in expected.items():
        found = getattr(analyzer_nodes, name, None)
        assert found is not None and found._fields == fields, (
            f"tf.Transform analyzer_nodes.{name} no longer has the fields {fields} "
            f"(found {getattr(found, '_fields', None)}): pipelines/analyze/vocabularies.py builds its analyzer from them")
    for module, function in ((analyzer_nodes, "get_input_tensors_value_nodes"), (analyzer_nodes, "wrap_as_tensor"),
                             (nodes, "apply_multi_output_operation")):
        assert callable(getattr(module, function, None)), (
            f"tf.Transform {module.__name__}.{function} is gone: "
            "pipelines/analyze/vocabularies.py chains its analyzer's steps with it")


def test_tft_keys_cached_analyzer_steps_by_their_text():
    """The analyzer cache key hashes `str((field, get_field_str(field)))` of each step: the PTransform's repr
    and the coder's repr must not hold an object address, or no rerun would find its cache."""
    from tensorflow_transform import analyzer_nodes

    from skewless.pipelines.analyze.vocabularies import CountsCoder, CountTokens

    tokens = CountTokens([None, None])
    with tf.compat.v1.Graph().as_default():
        step = analyzer_nodes.PTransform(tokens, [], is_partitionable=True, cache_coder=CountsCoder())
    assert step.get_field_str("ptransform") is tokens, (
        "tf.Transform PTransform.get_field_str no longer returns the PTransform itself: the analyzer cache key of "
        "pipelines/analyze/vocabularies.py's steps (their __repr__) is now made some other way")
    assert repr(CountsCoder()) == "<CountsCoder>", (
        f"tf.Transform CacheCoder.__repr__ no longer gives the class name ({CountsCoder()!r}): the analyzer cache "
        "key of pipelines/analyze/vocabularies.py's cached step would change on every run")


def test_tft_gives_a_ptransform_analyzer_a_folder_inside_its_temp_dir():
    """WriteVocabularies writes into the parent of its `base_temp_dir`: tf.Transform's own temp dir, which
    keeps lookup table names (keyed by file path) the same across identical runs."""
    from tensorflow_transform.beam import common
    from tensorflow_transform.beam.experimental import PTransformAnalyzer

    folder = common.get_unique_temp_path("/tmp/tft-temp")
    assert os.path.dirname(folder) == "/tmp/tft-temp", (
        f"tf.Transform get_unique_temp_path no longer makes a folder directly inside the temp dir ({folder}): "
        "pipelines/analyze/vocabularies.py WriteVocabularies takes its parent for tf.Transform's temp dir")
    analyzer = PTransformAnalyzer()
    analyzer.base_temp_dir = folder
    assert analyzer.base_temp_dir == folder, "tf.Transform PTransformAnalyzer no longer has a settable base_temp_dir"


def test_tft_writes_each_analysis_savedmodel_through_one_module_function():
    """saved_model_reuse swaps `impl._create_v2_saved_model` for the job: tf.Transform must still look it up by
    that name when building the pipeline, with these arguments, the first phase's replacements being None and a
    later phase's eager tensors."""
    import inspect

    from tensorflow_transform.beam import impl

    parameters = list(inspect.signature(impl._create_v2_saved_model).parameters)
    assert parameters == ["tensor_replacement_map", "base_temp_dir", "preprocessing_fn", "input_signature",
                          "baseline_analyzers_fingerprint", "output_keys_to_name_map", "save_options"], (
        f"tf.Transform _create_v2_saved_model now takes {parameters}: pipelines/analyze/saved_model_reuse.py "
        "passes and keys these arguments")
    assert "_create_v2_saved_model" in impl._CreateSavedModelImplV2.expand.__code__.co_names, (
        "tf.Transform _CreateSavedModelImplV2 no longer calls the module's _create_v2_saved_model: "
        "pipelines/analyze/saved_model_reuse.py would never see the analysis graph being written")
    # a later phase's results arrive as eager tensors, a vocabulary as its path, which the key reads by value
    import tensorflow as tf

    replacements = impl._get_tensor_replacement_map(
        None, impl._TensorBinding(b"/tmp/vocab", "v:0", tf.string.as_datatype_enum, True),
        impl._TensorBinding(1.5, "m:0", tf.float32.as_datatype_enum, False))
    assert {name: tensor.numpy() for name, tensor in replacements.items()} == {"v:0": b"/tmp/vocab", "m:0": 1.5}, (
        "tf.Transform's replacement map no longer holds eager tensors of the results: "
        "pipelines/analyze/saved_model_reuse.py keys the transform graph by them")


def test_tft_writes_and_loads_an_analysis_graph_through_the_functions_kept_in_memory():
    """saved_model_reuse.analysis_graphs_in_memory swaps `saved_transform_io_v2.write_v2_saved_model` (tf.Transform
    must still trace through `trace_and_update_module` and call it by that name, telling an analysis graph by its
    TENSOR_REPLACEMENTS collection) and `SavedModelLoader.__init__` (which must still get its graph from
    `tf.saved_model.load` and read `signatures` and `transform_fn` of it); a pending vocabulary's placeholder file
    lies in `analyzer_temporary_assets`, which names its lifted table."""
    import inspect

    from tensorflow_transform import analyzer_nodes, graph_context, impl_helper
    from tensorflow_transform.saved import saved_transform_io_v2

    relies_on = "pipelines/analyze/saved_model_reuse.py (analysis graphs kept in memory) relies on it"
    writer = inspect.getsource(impl_helper._trace_and_write_transform_fn)
    assert "saved_transform_io_v2.write_v2_saved_model(" in writer, (
        f"tf.Transform no longer writes a phase's SavedModel through saved_transform_io_v2.write_v2_saved_model: "
        f"{relies_on}")
    assert list(inspect.signature(saved_transform_io_v2.write_v2_saved_model).parameters) == [
        "module", "tf_function", "name", "saved_model_dir", "save_options"], (
        f"write_v2_saved_model's arguments changed: {relies_on}")
    assert "analyzer_nodes.TENSOR_REPLACEMENTS" in inspect.getsource(impl_helper.trace_and_write_v2_saved_model), (
        f"tf.Transform no longer tells the transform graph by the TENSOR_REPLACEMENTS collection: {relies_on}")
    assert analyzer_nodes.TENSOR_REPLACEMENTS
    loader = inspect.getsource(saved_transform_io_v2.SavedModelLoader.__init__)
    assert all(text in loader for text in ("tf.saved_model.load(saved_model_dir)", "imported.signatures",
                                           "imported.transform_fn")), (
        f"tf.Transform's SavedModelLoader no longer loads its graph with tf.saved_model.load and reads its signatures "
        f"and transform_fn: {relies_on}")
    assert graph_context.TFGraphContext._TEMP_SUBDIR == "analyzer_temporary_assets", (
        f"tf.Transform's placeholder files for pending vocabularies moved: {relies_on}")


def test_tft_infers_the_final_schema_from_the_collections_the_metadata_function_reads():
    """deferred_schema swaps `impl_helper._trace_and_get_metadata(concrete_transform_fn, ...)` (which tf.Transform
    must still call by that name after writing the transform graph) and evaluates, from the final trace's graph,
    what tf.Transform's metadata function collects: the range and annotation collections through
    `_get_schema_overrides` and the sparse shapes through `_get_sparse_output_annotations_v2`, keyed by
    `_get_tensor_value_to_key_map` of the outputs, the outputs returned through Identities
    (`tf2_utils.strip_and_get_tensors_and_control_dependencies`); a graph that needs its inputs is refused by
    `WrappedFunction.prune` with `op_selector.UnliftableError`."""
    import inspect

    from tensorflow.python.ops import op_selector
    from tensorflow_transform import impl_helper, schema_inference, tf2_utils

    relies_on = "pipelines/analyze/deferred_schema.py relies on it"
    writer = inspect.getsource(impl_helper.trace_and_write_v2_saved_model)
    assert "_trace_and_get_metadata(" in writer, (
        f"tf.Transform no longer infers the final schema through impl_helper._trace_and_get_metadata: {relies_on}")
    assert list(inspect.signature(impl_helper._trace_and_get_metadata).parameters)[0] == "concrete_transform_fn", (
        f"_trace_and_get_metadata no longer takes the final trace first: {relies_on}")
    metadata_fn = inspect.getsource(schema_inference.get_traced_metadata_fn)
    for collected in ("_TF_METADATA_TENSOR_COLLECTION", "_TF_METADATA_TENSOR_MIN_COLLECTION",
                      "_TF_METADATA_TENSOR_MAX_COLLECTION", "_TF_METADATA_EXTRA_ANNOTATION",
                      "_TF_METADATA_EXTRA_ANNOTATION_TYPE_URL", "_TF_METADATA_EXTRA_ANNOTATION_PROTO",
                      "_TF_METADATA_EXTRA_ANNOTATION_GLOBAL", "_METADATA_SPARSE_OUTPUT_OVERRIDES_FIELD",
                      "_get_sparse_output_annotations_v2(", "_get_tensor_value_to_key_map("):
        assert collected in metadata_fn and hasattr(schema_inference, collected.rstrip("(")), (
            f"tf.Transform's metadata function no longer collects {collected}: {relies_on}")
    assert metadata_fn.count("_get_schema_overrides(") == 2, (
        f"tf.Transform's metadata function collects other overrides: {relies_on}")
    assert list(inspect.signature(schema_inference._get_schema_overrides).parameters) == [
        "graph", "tensor_name_to_key_map", "tensor_collection_key", "overrides_keys", "default_tensor_name"], (
        f"schema_inference._get_schema_overrides' arguments changed: {relies_on}")
    assert callable(tf2_utils.strip_and_get_tensors_and_control_dependencies), relies_on
    assert issubclass(op_selector.UnliftableError, Exception), relies_on


def test_tft_vocabulary_file_rules_are_still_public_helpers():
    import tensorflow_transform as tft

    from skewless.pipelines.analyze.vocabularies import writable

    regex = tft.analyzers.get_vocab_newline_characters_regex(tf.string, "text")
    tokens = [b"", b"a\nb", b"c\rd", b"\n", b"\r\n", b"x", b"a b", b" ", b"\t", b"\x0b", b"\x0c", b"\x1c",
              "\u2028".encode(), "\x85".encode(), b"\xff\xfe", b"\x00", "caf\u00e9\n".encode()]
    matches = tf.strings.regex_full_match(tf.constant(tokens), regex).numpy().tolist()
    assert matches == [not writable(token) for token in tokens], (
        f"tf.Transform get_vocab_newline_characters_regex ({regex!r}) no longer matches exactly the tokens "
        "pipelines/analyze/vocabularies.writable refuses (the empty ones and those with a newline or carriage "
        "return): the job drops those from its vocabularies, as tft.vocabulary drops what the regex matches")
    placeholder = tft.analyzers.get_empy_vocabulary_dummy_value(tf.string)[1]
    assert isinstance(placeholder, bytes) and placeholder and b"\n" not in placeholder, (
        f"tf.Transform get_empy_vocabulary_dummy_value(tf.string)[1] is no longer one line of bytes ({placeholder!r}): "
        "pipelines/analyze/vocabularies.py writes it into an empty vocabulary, as tft.vocabulary does")


# --- layers/graph_analyzers.py + native_plan.py: analyzer values read back by op type and input position ------

WORDS = [b"red", b"blue", b"red", b"green", b"red", b"blue", b"teal", b"red", b"blue", b"green", b"red", b"sky"]
A_VALUES = np.random.default_rng(5).normal(40, 12, len(WORDS)).astype(np.float32)
DEFAULT = 7.5
NUM_OOV = 2
HASH_BUCKETS = 5
HASH_KEY = [2**63 - 1, 12345]
UNSEEN_ID = 42


def canary_preprocessing_fn(inputs):
    """One output per declarative transform, written as pipelines/analyze/preprocessing.py and missing.py call tf.Transform."""
    import tensorflow_transform as tft

    return {
        "z_score": tft.scale_to_z_score(inputs["a"]),
        "scale_0_1": tft.scale_to_0_1(inputs["a"]),
        "bucketize": tft.bucketize(inputs["a"], 3),
        "vocabulary": tft.compute_and_apply_vocabulary(inputs["word"], num_oov_buckets=NUM_OOV, vocab_filename="word"),
        "hash": tft.hash_strings(inputs["word"], HASH_BUCKETS),
        "keyed_hash": tft.hash_strings(inputs["word"], HASH_BUCKETS, key=HASH_KEY),
        "vocabulary_default": tft.compute_and_apply_vocabulary(inputs["word"], num_oov_buckets=0,
                                                               default_value=UNSEEN_ID, vocab_filename="word_0"),
        "filled": tf.squeeze(tft.sparse_tensor_to_dense_with_shape(inputs["maybe"], [None, 1], default_value=DEFAULT),
                             axis=1),
    }


@pytest.fixture(scope="module")
def tft_graph(tmp_path_factory):
    """A graph tf.Transform wrote for `canary_preprocessing_fn`, its transformed rows and its output directory."""
    import tensorflow_transform as tft
    import tensorflow_transform.beam as tft_beam

    spec = {"a": tf.io.FixedLenFeature([], tf.float32), "word": tf.io.FixedLenFeature([], tf.string),
            "maybe": tf.io.VarLenFeature(tf.float32)}
    rows = [{"a": a, "word": word, "maybe": [1.0] if i % 2 else []} for i, (a, word) in enumerate(zip(A_VALUES, WORDS))]
    temp = tmp_path_factory.mktemp("canary")
    with tft_beam.Context(temp_dir=str(temp / "tmp")):
        (transformed, _), transform_fn = ((rows, tft.DatasetMetadata.from_feature_spec(spec))
                                          | tft_beam.AnalyzeAndTransformDataset(canary_preprocessing_fn))
        _ = transform_fn | tft_beam.WriteTransformFn(str(temp / "graph"))
    return transformed, str(temp / "graph")


@pytest.fixture(scope="module")
def graph_features(tft_graph):
    from skewless.layers.graph_analyzers import read_graph_features

    return read_graph_features(tft_graph[1])


def test_tft_saves_a_tf2_transform_fn_with_a_graph(tft_graph):
    loaded = tf.saved_model.load(os.path.join(tft_graph[1], "transform_fn"))
    function = getattr(loaded, "transform_fn", None)
    if hasattr(function, "concrete_functions"):
        function = function.concrete_functions[0]
    graph = getattr(function, "graph", None)
    assert graph is not None and graph.captures and isinstance(graph.structured_outputs, dict), (
        "tf.Transform's saved transform_fn no longer loads as a `transform_fn` function whose graph captures the "
        "analyzer values and returns a dict: layers/graph_analyzers.py walks that graph to read them")


@pytest.mark.parametrize("transform", ["z_score", "scale_0_1", "bucketize", "vocabulary", "hash"])
def test_tft_emits_only_the_ops_the_native_plan_knows(graph_features, transform):
    from skewless.layers.native_plan import INPUT_OPS
    from skewless.transforms import TRANSFORMS

    feature = graph_features[transform]
    unknown = feature.op_types - INPUT_OPS - TRANSFORMS[transform].native_ops
    assert not unknown, (
        f"tf.Transform's {transform} now emits ops {sorted(unknown)} that skewless/transforms/{transform}.py's "
        "native_ops does not list: the native Keras preprocessor would refuse every such feature")
    assert feature.raw_inputs == {"a" if transform in ("z_score", "scale_0_1", "bucketize") else "word"}


def test_tft_z_score_feeds_mean_to_sub_and_variance_to_sqrt(graph_features):
    feature = graph_features["z_score"]
    mean, variance = feature.constant("Sub", 1), feature.constant("Sqrt", 0)
    assert mean is not None and variance is not None, (
        f"tf.Transform scale_to_z_score no longer feeds the mean into Sub at input 1 and the variance into Sqrt at "
        f"input 0 (layers/native_plan.py reads them there); captured: {feature.constants}")
    np.testing.assert_allclose(mean, A_VALUES.astype(np.float64).mean(), rtol=1e-6)
    np.testing.assert_allclose(variance, A_VALUES.astype(np.float64).var(), rtol=1e-5)


def test_tft_scale_0_1_feeds_minus_min_to_sub_and_max_to_less(graph_features):
    feature = graph_features["scale_0_1"]
    negated_min, maximum = feature.constant("Sub", 1), feature.constant("Less", 1)
    assert negated_min is not None and maximum is not None and "Sigmoid" in feature.op_types, (
        f"tf.Transform scale_to_0_1 no longer feeds -min into Sub at input 1 and max into Less at input 1 "
        f"(layers/native_plan.py reads them there); captured: {feature.constants}")
    assert (np.float32(negated_min), np.float32(maximum)) == (-A_VALUES.min(), A_VALUES.max()), (
        "tf.Transform scale_to_0_1's Sub input 1 / Less input 1 no longer hold -min / max")


def test_tft_bucketize_feeds_boundaries_to_reshape_and_counts_them_with_upper_bound(tft_graph, graph_features):
    feature = graph_features["bucketize"]
    boundaries = feature.constant("Reshape", 0)
    assert boundaries is not None and "UpperBound" in feature.op_types and boundaries.dtype == np.float32, (
        f"tf.Transform bucketize no longer feeds float32 boundaries into Reshape at input 0 and applies UpperBound "
        f"(layers/native_plan.py reads them there); ops: {sorted(feature.op_types)}")
    boundaries = np.asarray(boundaries).reshape(-1)
    buckets = [row["bucketize"] for row in tft_graph[0]]
    assert buckets == np.searchsorted(boundaries, A_VALUES, side="right").tolist(), (
        "tf.Transform bucketize no longer counts the boundaries <= x from the Reshape input 0 constant "
        "(Keras Discretization, which layers/native_plan.py builds from them, does)")


def test_tft_vocabulary_is_one_table_numbered_in_file_order_plus_oov_hashing(tft_graph, graph_features):
    import tensorflow_transform as tft

    feature = graph_features["vocabulary"]
    assert len(feature.tables) == 1 and feature.hash_buckets == [NUM_OOV], (
        f"tf.Transform apply_vocabulary no longer reads one LookupTableFindV2 table and hashes unseen values with "
        f"StringToHashBucketFast(num_buckets=num_oov_buckets) (found {len(feature.tables)} tables, hash buckets "
        f"{feature.hash_buckets}): layers/native_plan.py builds StringLookup + VocabularyFirst from them")
    keys, ids = feature.tables[0]
    with open(tft.TFTransformOutput(tft_graph[1]).vocabulary_file_by_name("word"), "rb") as handle:
        lines = handle.read().splitlines()
    assert keys == lines and ids.tolist() == list(range(len(lines))), (
        "tf.Transform's vocabulary table no longer maps the file's line i to id i")


def test_tft_hash_strings_is_one_string_to_hash_bucket_fast(graph_features):
    assert graph_features["hash"].hash_buckets == [HASH_BUCKETS], (
        "tf.Transform hash_strings no longer is one StringToHashBucketFast with num_buckets: layers/native_plan.py "
        "builds Keras Hashing(num_bins) from it")


def test_tft_keyed_hash_strings_is_one_string_to_hash_bucket_strong_holding_the_key(graph_features):
    from skewless.layers.native_plan import INPUT_OPS
    from skewless.transforms import TRANSFORMS

    feature = graph_features["keyed_hash"]
    assert feature.hash_buckets == [HASH_BUCKETS] and feature.hash_keys == [HASH_KEY], (
        "tf.Transform hash_strings(key=...) no longer is one StringToHashBucketStrong with num_buckets and key: "
        "skewless/transforms/hash.py builds Keras Hashing(num_bins, salt=key) from them")
    assert not feature.op_types - INPUT_OPS - TRANSFORMS["hash"].native_ops


def test_tft_vocabulary_without_oov_buckets_holds_its_default_at_lookup_input_2(graph_features):
    feature = graph_features["vocabulary_default"]
    assert feature.constant("LookupTableFindV2", 2) == UNSEEN_ID and not feature.hash_buckets, (
        "tf.Transform's apply_vocabulary(num_oov_buckets=0, default_value=d) no longer is one table lookup with d "
        "captured at LookupTableFindV2 input 2: skewless/transforms/vocabulary.py gives VocabularyFirst that default")


def test_tft_sparse_to_dense_holds_the_default_at_input_3(graph_features):
    defaults = graph_features["filled"].defaults
    assert defaults == [DEFAULT], (
        f"tf.Transform sparse_tensor_to_dense_with_shape no longer fills with a Const at SparseToDense input 3 "
        f"(found {defaults}): layers/native_plan.py builds FillMissing from it")


# --- pipelines/analyze/canonical_graph.py: SavedModel names rewritten canonically ------------------------------------

SAVED_MODEL_FIELDS = {  # message: the fields canonicalize reads or rewrites
    "SavedModel": ["meta_graphs"],
    "MetaGraphDef": ["graph_def", "meta_info_def", "object_graph_def"],
    "MetaGraphDef.MetaInfoDef": ["function_aliases"],
    "GraphDef": ["node", "library"],
    "FunctionDefLibrary": ["function", "gradient", "registered_gradients"],
    "FunctionDef": ["signature", "node_def", "ret", "arg_attr"],
    "GradientDef": ["function_name", "gradient_func"],
    "RegisteredGradient": ["gradient_func"],
    "NodeDef": ["name", "op", "input", "attr"],
    "NameAttrList": ["name", "attr"],
    "SavedObjectGraph": ["nodes", "concrete_functions"],
    "SavedObject": ["function", "bare_concrete_function"],
    "SavedFunction": ["concrete_functions"],
    "SavedBareConcreteFunction": ["concrete_function_name"],
}


def test_savedmodel_protos_keep_the_fields_canonicalize_rewrites():
    from tensorflow.core.framework import attr_value_pb2, function_pb2, graph_pb2, node_def_pb2
    from tensorflow.core.protobuf import meta_graph_pb2, saved_model_pb2, saved_object_graph_pb2

    messages = {}
    for module in (saved_model_pb2, meta_graph_pb2, graph_pb2, function_pb2, node_def_pb2, attr_value_pb2,
                   saved_object_graph_pb2):
        for message in module.DESCRIPTOR.message_types_by_name.values():
            messages[message.name] = message
            messages.update({f"{message.name}.{nested.name}": nested for nested in message.nested_types})
    for name, fields in SAVED_MODEL_FIELDS.items():
        missing = [field for field in fields if name not in messages or field not in messages[name].fields_by_name]
        assert not missing, (
            f"TensorFlow's {name} proto no longer has {missing}: pipelines/analyze/canonical_graph.py renames functions there")


def test_tensorflow_numbers_traced_functions_with_a_growing_counter():
    from skewless.pipelines.analyze.canonical_graph import _NUMBERED

    def traced():
        return tf.function(lambda x: x + 1).get_concrete_function(tf.TensorSpec([], tf.float32)).name.decode()

    first, second = traced(), traced()
    matches = [_NUMBERED.match(name) for name in (first, second)]
    assert all(matches) and matches[0][1] == matches[1][1] and int(matches[0][2]) < int(matches[1][2]), (
        f"TensorFlow no longer names traced functions stem_N with a per-process counter ({first}, {second}): "
        "pipelines/analyze/canonical_graph.py replaces N by its rank to make the SavedModel the same in any process")


def test_tensorflow_saves_only_files_canonicalize_knows(tmp_path):
    class Module(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32, name="x")])
        def __call__(self, x):
            return x * 2.0

    tf.saved_model.save(Module(), str(tmp_path))
    written = sorted(os.listdir(tmp_path))
    assert set(written) <= {"saved_model.pb", "fingerprint.pb", "variables", "assets"}, (
        f"TensorFlow's SavedModel now holds {written}: pipelines/analyze/canonical_graph.py rewrites saved_model.pb and drops "
        "fingerprint.pb; any other file may differ between identical runs")
    from tensorflow.core.protobuf import saved_model_pb2

    model = saved_model_pb2.SavedModel.FromString((tmp_path / "saved_model.pb").read_bytes())
    names = {attrs.attr["_user_specified_name"].s for function in model.meta_graphs[0].graph_def.library.function
             for attrs in function.arg_attr.values() if "_user_specified_name" in attrs.attr}
    assert b"x" in names, (
        "TensorFlow no longer records a traced argument's name as the `_user_specified_name` arg attr: "
        "pipelines/analyze/canonical_graph.py renumbers the counter-made ones there")


# --- pipelines/write/example_encoder.py and shards.py: protobuf wire format and TFRecord framing written by hand ---

EXAMPLE_FIELDS = {  # message: {field: number} the encoder writes as tag bytes
    tf.train.Example: {"features": 1},
    tf.train.Features: {"feature": 1},
    tf.train.Feature: {"bytes_list": 1, "float_list": 2, "int64_list": 3},
    tf.train.BytesList: {"value": 1},
    tf.train.FloatList: {"value": 1},
    tf.train.Int64List: {"value": 1},
    tf.train.SequenceExample: {"context": 1, "feature_lists": 2},
    tf.train.FeatureLists: {"feature_list": 1},
    tf.train.FeatureList: {"feature": 1},
}


def test_example_protos_keep_the_field_numbers_the_encoder_writes():
    for message, fields in EXAMPLE_FIELDS.items():
        found = {name: message.DESCRIPTOR.fields_by_name[name].number
                 for name in fields if name in message.DESCRIPTOR.fields_by_name}
        assert found == fields, (
            f"TensorFlow's {message.DESCRIPTOR.full_name} proto no longer numbers its fields {fields} (found {found}): "
            "pipelines/write/example_encoder.py writes those numbers as tag bytes")


def canary_batch() -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays(
        [pa.array([[1.5, -2.0], [], [3.25]], pa.large_list(pa.float32())),
         pa.array([[-1, 300], [2**40], []], pa.large_list(pa.int64())),
         pa.array([[b"red"], [b"", b"blue"], [b"x" * 200]], pa.large_list(pa.binary())),
         pa.array([[[1, 2], []], [], [[3]]], pa.large_list(pa.large_list(pa.int64())))],
        ["score", "ids", "words", "steps"],
    )


def test_example_encoder_bytes_equal_protobufs_deterministic_serialization():
    from skewless.pipelines.write.example_encoder import encode_examples

    batch = canary_batch().drop_columns(["steps"])
    expected = []
    for row in batch.to_pylist():
        example = tf.train.Example(features=tf.train.Features(feature={
            "score": tf.train.Feature(float_list=tf.train.FloatList(value=row["score"])),
            "ids": tf.train.Feature(int64_list=tf.train.Int64List(value=row["ids"])),
            "words": tf.train.Feature(bytes_list=tf.train.BytesList(value=row["words"])),
        }))
        expected.append(example.SerializeToString(deterministic=True))
    assert encode_examples(batch).to_list() == expected, (
        "protobuf's deterministic serialization of tf.train.Example (features sorted by name, packed numbers) "
        "no longer gives the bytes pipelines/write/example_encoder.py writes: shards would differ from TensorFlow's")


def test_sequence_example_encoder_bytes_equal_protobufs_deterministic_serialization():
    from skewless.pipelines.write.example_encoder import encode_sequence_examples

    batch = canary_batch()
    expected = []
    for row in batch.to_pylist():
        steps = [tf.train.Feature(int64_list=tf.train.Int64List(value=step)) for step in row["steps"]]
        example = tf.train.SequenceExample(
            context=tf.train.Features(feature={
                "score": tf.train.Feature(float_list=tf.train.FloatList(value=row["score"])),
                "ids": tf.train.Feature(int64_list=tf.train.Int64List(value=row["ids"])),
                "words": tf.train.Feature(bytes_list=tf.train.BytesList(value=row["words"])),
            }),
            feature_lists=tf.train.FeatureLists(feature_list={"steps": tf.train.FeatureList(feature=steps)}),
        )
        expected.append(example.SerializeToString(deterministic=True))
    assert encode_sequence_examples(batch).to_list() == expected, (
        "protobuf's deterministic serialization of tf.train.SequenceExample no longer gives the bytes "
        "pipelines/write/example_encoder.py writes")


def test_tfrecord_framing_equals_tensorflows_writer(tmp_path):
    from skewless.pipelines.write.example_encoder import Records
    from skewless.pipelines.write.shards import tfrecord_frames

    records = [b"", b"a", b"x" * 300, bytes(range(256))]
    with tf.io.TFRecordWriter(str(tmp_path / "tf.tfrecord")) as writer:
        for record in records:
            writer.write(record)
    framed = tfrecord_frames(Records(np.frombuffer(b"".join(records), np.uint8), np.array([len(r) for r in records])))
    assert framed.tobytes() == (tmp_path / "tf.tfrecord").read_bytes(), (
        "TensorFlow's TFRecord framing (uint64 length, masked CRC32C of it, data, masked CRC32C of the data) no longer "
        "matches pipelines/write/shards.py tfrecord_frames")


# --- layers/serving_head.py: TensorFlow's private variable-to-constant converter, with an allowlist ------------


def test_tensorflow_converts_only_the_allowed_variables_to_constants():
    from tensorflow.python.framework import convert_to_constants

    table, kernel = tf.Variable([[1.0, 2.0], [3.0, 4.0]]), tf.Variable([[5.0], [6.0]])
    traced = tf.function(lambda ids: tf.matmul(tf.gather(table, ids), kernel)).get_concrete_function(
        tf.TensorSpec([None], tf.int32))
    allowed = {inside.op.name for outside, inside in traced.graph.captures if outside is table.handle}
    converter = convert_to_constants._FunctionConverterDataInEager(
        func=traced, lower_control_flow=False, aggressive_inlining=False, variable_names_allowlist=allowed)
    graph_def, converted = convert_to_constants._replace_variables_by_constants(converter_data=converter)
    frozen = convert_to_constants._construct_concrete_function(traced, graph_def, converted)
    captured = [value for index, value in enumerate(traced.captured_inputs) if index not in converted]
    assert len(captured) == 1 and captured[0] is kernel.handle, (
        "TensorFlow convert_to_constants no longer converts exactly the allowlisted variables (found the "
        f"unconverted inputs {captured}): layers/serving_head.py freezes gather-only tables with it")
    ids = tf.constant([1, 0, 1])
    assert np.array_equal(frozen(ids, *captured)[0].numpy(), traced(ids).numpy()), (
        "TensorFlow convert_to_constants' function no longer takes (inputs, unconverted variables) and gives "
        "the traced function's values: layers/serving_head.py calls it so")


# --- skewless/transforms/categorical.py: a categorical output's int domain set after tf.Transform's own ----------------


def test_tft_takes_the_last_schema_override_of_a_tensor():
    from tensorflow_transform import schema_inference

    graph = tf.Graph()
    with graph.as_default():
        ids = tf.constant([0, 1], tf.int64)
        schema_inference.set_tensor_schema_override(ids, tf.constant(-1, tf.int64), tf.constant(4, tf.int64))
        schema_inference.set_tensor_schema_override(ids, tf.constant(0, tf.int64), tf.constant(4, tf.int64))
        ranges = schema_inference._get_tensor_ranges(graph)
    (low, high), = ranges.values()
    assert tf.get_static_value(low) == 0 and tf.get_static_value(high) == 4, (
        "tf.Transform no longer lets a later set_tensor_schema_override replace an earlier one: "
        "skewless/transforms/categorical.py (vocabulary_ids) sets a vocabulary's domain from 0 after tft's own")


# --- layers/api_signatures.py: TF Serving's method names set in saved_model.pb after Keras writes it ------------------


def test_tensorflow_rewrites_a_savedmodels_fingerprint(tmp_path):
    from skewless.layers.api_signatures import set_method_names

    module = tf.Module()
    module.f = tf.function(lambda x: {"y": x + 1}, input_signature=[tf.TensorSpec([None], tf.float32)])
    tf.saved_model.save(module, str(tmp_path), signatures={"serving_default": module.f})
    before = tf.saved_model.experimental.read_fingerprint(str(tmp_path)).saved_model_checksum
    set_method_names(tmp_path, {"serving_default": "tensorflow/serving/regress"})
    after = tf.saved_model.experimental.read_fingerprint(str(tmp_path)).saved_model_checksum
    assert after != before, ("tensorflow.python.saved_model.fingerprinting_utils.write_fingerprint no longer rewrites "
                             "fingerprint.pb from saved_model.pb: layers/api_signatures.py relies on it after setting "
                             "TF Serving's method names")


# --- layers/raw_value_layer.py: Keras' private switches that let a layer take raw values as they come -----------------


class _Echo(keras.layers.Layer):
    """Keeps what its call received; `build` fails, so a call that builds it says so."""

    def build(self, input_shape):
        raise AssertionError("build() ran")

    def call(self, inputs):
        self.received = inputs
        return keras.ops.zeros(())


def test_keras_layers_still_have_the_private_input_switches():
    layer = keras.layers.Layer()
    found = (getattr(layer, "_convert_input_args", None), getattr(layer, "_allow_non_tensor_positional_args", None))
    assert found == (True, False), (
        f"keras.layers.Layer no longer sets _convert_input_args = True and _allow_non_tensor_positional_args = False "
        f"(found {found}): layers/raw_value_layer.py (accept_raw_inputs) turns them to take raw values as they come")


def test_keras_converts_inputs_and_refuses_non_tensors_by_default():
    # what accept_raw_inputs turns off: were it no longer Keras' default, the switches would do nothing
    echo = _Echo(dtype="float32")
    echo.built = True  # no build(), as a layer without weights
    with pytest.raises(ValueError, match="Only input tensors may be passed as positional arguments"):
        echo(["a", "b"])
    echo(np.array([1.5, 2.5], np.float64))
    assert not isinstance(echo.received, np.ndarray)
    assert keras.backend.standardize_dtype(echo.received.dtype) == "float32"


def test_keras_passes_inputs_as_they_come_with_the_switches_turned():
    from skewless.layers.raw_value_layer import accept_raw_inputs

    echo = _Echo(dtype="float32")
    accept_raw_inputs(echo)
    why = ("layers/raw_value_layer.py (accept_raw_inputs) sets _convert_input_args = False, "
           "_allow_non_tensor_positional_args = True and built = True: Keras {}")
    try:
        echo(["a", "b"])
    except ValueError as error:
        raise AssertionError(why.format(f"refuses a list of strings nonetheless ({error})")) from error
    assert echo.received == ["a", "b"]
    numbers = np.array([1.5, 2.5], np.float64)
    echo(numbers)
    assert echo.received is numbers, why.format("converts a float64 NumPy input nonetheless")
    ragged = tf.ragged.constant([["x"], []])
    echo(ragged)
    assert echo.received is ragged, why.format("converts a ragged input nonetheless")



# --- skewless/sequence_specs.py: a required feature's default computed from the batch --------------------------------


def test_tensorflow_parses_with_a_tensor_default_as_given_and_an_empty_one_as_required():
    spec = {"a": tf.io.FixedLenFeature([], tf.int64, default_value=tf.zeros([0], tf.int64))}
    record = tf.train.Example().SerializeToString()  # holds no "a"
    complete = tf.train.Example(features=tf.train.Features(
        feature={"a": tf.train.Feature(int64_list=tf.train.Int64List(value=[3]))})).SerializeToString()
    # (where no record holds the feature, the op says "Inconsistent max number of elements" instead)
    with pytest.raises(tf.errors.InvalidArgumentError, match="required"):
        tf.io.parse_sequence_example(tf.constant([complete, record]), context_features=spec)
    zeros = {"a": tf.io.FixedLenFeature([], tf.int64, default_value=tf.zeros([], tf.int64))}
    parsed = tf.io.parse_sequence_example(tf.constant([], tf.string), context_features=zeros)[0]["a"]
    assert parsed.shape == (0,), (
        "tf.io.parse_sequence_example no longer passes a tensor default to the op as given, or the op no longer "
        "reads a default with no elements as required: skewless/sequence_specs.py builds an empty request's "
        "defaults so")
