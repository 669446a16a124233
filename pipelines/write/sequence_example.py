"""`output.format: sequence_example`: a shard's record is a tf.train.SequenceExample, the transformed feature lists
(outputs of `sequence: true` features) as its feature_lists and every other output as context.

RUN_DIR/sequence_example.json names which features are which, so a reader parses the records without the config;
`skewless.sequence_specs` turns it and the transformed spec into what `tf.io.parse_sequence_example` takes.
"""

from __future__ import annotations

import json

import pyarrow as pa
import tensorflow as tf
import tensorflow_transform as tft

from skewless.errors import InputError
from skewless.pipelines.output import files
from skewless.pipelines.write.example_encoder import Records, encode_sequence_examples
from skewless.pipelines.write.format import OutputFormat
from skewless.run_directory import SEQUENCE_FILE, RunDirectory
from skewless.sequence_specs import feature_list_spec, parse_sequence_examples, split_transformed_spec


class SequenceExampleFormat(OutputFormat):
    run_files = (SEQUENCE_FILE,)

    def encode(self, batch: pa.RecordBatch, transformed_spec: dict) -> Records:
        return encode_sequence_examples(batch)

    def finish(self, run_dir: str) -> None:
        """RUN_DIR/sequence_example.json: which transformed features the shards hold as context features and which
        as feature lists (`skewless.sequence_specs.split_transformed_spec` decides)."""
        run = RunDirectory(run_dir)
        spec = tft.TFTransformOutput(run.graph_dir).transformed_feature_spec()
        context, lists = split_transformed_spec(spec)
        files.write_json({"context": sorted(context), "feature_lists": sorted(lists)}, run.sequence_file)

    def parser(self, run_dir: str, spec: dict):
        """Feature lists come back as (batch, steps, values) ragged tensors."""
        path = RunDirectory.of(run_dir).sequence_file
        try:
            with tf.io.gfile.GFile(path) as handle:
                feature_lists = set(json.load(handle)["feature_lists"])
        except (OSError, ValueError, KeyError, TypeError, tf.errors.OpError) as error:
            raise InputError(f"{path}: cannot read which features are feature lists: {error}") from None
        context = {name: feature for name, feature in spec.items() if name not in feature_lists}
        lists = {name: feature_list_spec(name, feature) for name, feature in spec.items() if name in feature_lists}
        return lambda serialized: parse_sequence_examples(serialized, context, lists)


FORMAT = SequenceExampleFormat()
