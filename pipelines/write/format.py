"""What an output format does, as one object per format module (`FORMAT`): the record a transformed row becomes,
the files a run of it holds besides its shards, and how a batch of its records is parsed back.

`skewless.output_formats` names each format's module; the transform pass (`ChunkTransformer.encode`), the job's
last step (`finish`), `skewless apply` (`run_files`), `make_dataset` and `skewless verify` (`parser`) ask the run's
format instead of testing its name. Every format's records are framed as TFRecords in the shards
`skewless.run_directory` names (`write/shards.py` writes them, `make_dataset` reads them): a format is the record,
not the file.
"""

from __future__ import annotations

from typing import Callable

import pyarrow as pa

from skewless.pipelines.write.example_encoder import Records


class OutputFormat:
    """One output format: its records' encoding and parsing, and the run files that go with them."""

    # the files under RUN_DIR that `finish` writes, which a copy of the run's graph (`skewless apply`) takes along
    run_files: tuple[str, ...] = ()

    def encode(self, batch: pa.RecordBatch, transformed_spec: dict) -> Records:
        """Transformed rows (one column per output of the graph) -> one serialized record each, the same bytes
        every run; `transformed_spec` is the graph's transformed feature spec."""
        raise NotImplementedError

    def finish(self, run_dir: str) -> None:
        """Writes the run files (`run_files`) of a run whose graph is in `run_dir`; nothing by default."""

    def parser(self, run_dir: str, spec: dict) -> Callable:
        """A function from a batch (a string tensor) of the run's records to its features, parsed by `spec` (the
        transformed feature spec, var-len features as `tf.io.RaggedFeature`)."""
        raise NotImplementedError
