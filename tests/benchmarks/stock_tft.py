"""The stock reference of issue 6: census preprocessing written the way tf.Transform's census example recommends.

Ordinary tf.Transform usage on its fast TFXIO path, nothing tuned:
``ReadFromText -> BeamRecordCsvTFXIO -> AnalyzeAndTransformDataset(output_record_batches=True)
-> RecordBatchToExamplesEncoder -> WriteToTFRecord`` (gzip, 4 shards) plus ``WriteTransformFn``.
Transforms: z-score on the 6 numeric columns, a vocabulary with 1 OOV bucket on the 8 categorical ones,
the label mapped to 0/1 ('<=50K' -> 0, '>50K' -> 1).

    python tests/benchmarks/stock_tft.py --input /tmp/skewless-bench/census-1009391.csv --output /tmp/stock
    python tests/benchmarks/stock_tft.py --input ... --output ... --direct_num_workers=2 \
        --direct_running_mode=multi_processing    # any other flag goes to Beam's PipelineOptions

Writes OUTPUT/data/train-0000i-of-00004.tfrecord.gz and OUTPUT/transform_fn, OUTPUT/transformed_metadata.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import apache_beam as beam  # noqa: E402
import tensorflow as tf  # noqa: E402
import tensorflow_transform as tft  # noqa: E402
import tensorflow_transform.beam as tft_beam  # noqa: E402
from apache_beam.io.filesystem import CompressionTypes  # noqa: E402
from apache_beam.options.pipeline_options import PipelineOptions  # noqa: E402
from tfx_bsl.coders import example_coder  # noqa: E402
from tfx_bsl.public import tfxio  # noqa: E402

from census_data import CATEGORICAL_COLUMNS, COLUMNS, LABEL_COLUMN, LABEL_MAP, NUMERIC_COLUMNS  # noqa: E402

SHARDS = 4


def raw_feature_spec() -> dict:
    """Every census column is present in every row: numerics as float32, the rest as strings."""
    spec = {name: tf.io.FixedLenFeature([], tf.float32) for name in NUMERIC_COLUMNS}
    spec.update({name: tf.io.FixedLenFeature([], tf.string) for name in CATEGORICAL_COLUMNS})
    spec[LABEL_COLUMN] = tf.io.FixedLenFeature([], tf.string)
    return spec


def preprocessing_fn(inputs: dict) -> dict:
    """z-score, vocabulary + 1 OOV bucket, and the fixed label mapping; outputs keep the raw column names."""
    outputs = {name: tft.scale_to_z_score(inputs[name]) for name in NUMERIC_COLUMNS}
    for name in CATEGORICAL_COLUMNS:
        outputs[name] = tft.compute_and_apply_vocabulary(inputs[name], num_oov_buckets=1, vocab_filename=name)
    # A fixed mapping is not an analyzer; the census example builds the same kind of table.
    with tf.init_scope():
        initializer = tf.lookup.KeyValueTensorInitializer(
            keys=list(LABEL_MAP), values=list(LABEL_MAP.values()), key_dtype=tf.string, value_dtype=tf.int64
        )
        table = tf.lookup.StaticHashTable(initializer, default_value=-1)
    outputs[LABEL_COLUMN] = table.lookup(inputs[LABEL_COLUMN])
    return outputs


def run(input_path: str, output_dir: str, beam_args: list[str], temp_dir: str) -> None:
    """Builds and runs the pipeline; returns when the output is written."""
    schema = tft.DatasetMetadata.from_feature_spec(raw_feature_spec()).schema
    csv_tfxio = tfxio.BeamRecordCsvTFXIO(physical_format="text", column_names=list(COLUMNS), schema=schema)
    with beam.Pipeline(options=PipelineOptions(beam_args)) as pipeline:
        with tft_beam.Context(temp_dir=temp_dir):
            raw_data = (
                pipeline
                | "ReadCsv" >> beam.io.ReadFromText(input_path, coder=beam.coders.BytesCoder())
                # adult.data separates fields with ", "; the census example strips the space the same way.
                | "FixCommas" >> beam.Map(lambda line: line.replace(b", ", b","))
                | "DecodeCsv" >> csv_tfxio.BeamSource()
            )
            (transformed_data, transformed_metadata), transform_fn = (
                raw_data,
                csv_tfxio.TensorAdapterConfig(),
            ) | "AnalyzeAndTransform" >> tft_beam.AnalyzeAndTransformDataset(
                preprocessing_fn, output_record_batches=True
            )
            encoder = example_coder.RecordBatchToExamplesEncoder(transformed_metadata.schema)
            _ = (
                transformed_data
                | "Encode" >> beam.FlatMapTuple(lambda batch, _: encoder.encode(batch))
                | "Write" >> beam.io.WriteToTFRecord(
                    os.path.join(output_dir, "data", "train"),
                    file_name_suffix=".tfrecord.gz",
                    num_shards=SHARDS,
                    compression_type=CompressionTypes.GZIP,
                )
            )
            _ = transform_fn | "WriteTransformFn" >> tft_beam.WriteTransformFn(output_dir)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--input", required=True, help="census CSV (no header, ', ' separated)")
    parser.add_argument("--output", required=True, help="output folder (data/ and the transform graph)")
    args, beam_args = parser.parse_known_args()
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="stock-tft-") as temp_dir:
        run(args.input, args.output, beam_args, temp_dir)
    print(f"stock tf.Transform: wrote {args.output} in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
