"""An output format is one module and one line of skewless/output_formats.py (issue 44 item 3): a toy format, its
module written here and registered by one line, runs the job, and every reader of a run takes it back by the run's
own format: make_dataset gives the rows the default format gives, and `skewless verify` finds the batch path (the
toy records parsed back) equal to the serving path."""

import numpy as np
import pytest
import tensorflow as tf
from example_job import example_config

from skewless.config import load_config
from skewless.errors import ConfigError
from skewless.output_formats import OUTPUT_FORMATS, OutputFormatEntry
from skewless.pipelines import run
from skewless.pipelines.commands.verify import verify
from skewless.pipelines.tfdata.dataset import make_dataset, split_shards

MAGIC = b"TOY1"

# A record is a tf.train.Example behind four bytes of its own, and a run of it holds one file beside its shards.
TOY_MODULE = f'''
import numpy as np
import tensorflow as tf

from skewless.pipelines.output import files
from skewless.pipelines.write.example import FORMAT as EXAMPLE
from skewless.pipelines.write.example_encoder import Records
from skewless.pipelines.write.format import OutputFormat


class ToyFormat(OutputFormat):
    run_files = ("toy.json",)

    def encode(self, batch, transformed_spec):
        records = [{MAGIC!r} + record for record in EXAMPLE.encode(batch, transformed_spec).to_list()]
        return Records(np.frombuffer(b"".join(records), np.uint8), np.array([len(r) for r in records], np.int64))

    def finish(self, run_dir):
        files.write_json({{"magic": {MAGIC.decode()!r}}}, run_dir + "/toy.json")

    def parser(self, run_dir, spec):
        def parse(serialized):
            length = tf.strings.length(serialized)
            tail = tf.strings.substr(serialized, tf.ones_like(length) * {len(MAGIC)}, length - {len(MAGIC)})
            return tf.io.parse_example(tail, spec)
        return parse


FORMAT = ToyFormat()
'''


@pytest.fixture
def toy_format(tmp_path, monkeypatch):
    (tmp_path / "toy_records.py").write_text(TOY_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(OUTPUT_FORMATS, "toy", OutputFormatEntry("toy", "toy_records", "a test's toy records"))
    return "toy"


def _records(run_dir, split: str) -> list[bytes]:
    return [bytes(record) for path, _ in split_shards(run_dir, split)
            for record in tf.data.TFRecordDataset(path, compression_type="GZIP").as_numpy_iterator()]


def _rows(run_dir, split: str) -> dict[str, np.ndarray]:
    batches = list(make_dataset(run_dir, split, batch_size=100_000, label=None, shuffle_buffer=0))
    assert len(batches) == 1
    return {name: value.numpy() for name, value in batches[0].items()}


def test_a_format_registered_by_one_line_is_written_and_read_back(toy_format, tmp_path, example_run):
    toy = run(example_config(tmp_path / "toy", output={"format": toy_format}))
    assert toy.rows == example_run.rows
    assert (tmp_path / "toy" / "toy.json").exists()  # the format's own run file, written by its `finish`
    for split in example_run.rows["written"]:
        written, default = _records(toy.output_dir, split), _records(example_run.output_dir, split)
        # the toy encoder wrote every record: the Example the default format writes, behind the toy's bytes
        assert written == [MAGIC + record for record in default]
        toy_rows, default_rows = _rows(toy.output_dir, split), _rows(example_run.output_dir, split)
        assert toy_rows.keys() == default_rows.keys()
        for name in default_rows:
            np.testing.assert_array_equal(toy_rows[name], default_rows[name], err_msg=name)
    checked = verify(toy.output_dir, sample=100, native=False)
    assert (checked.rows, checked.differences, checked.exit_code) == (100, 0, 0)


def test_an_unregistered_output_format_is_one_line_naming_it_and_the_formats(tmp_path):
    with pytest.raises(ConfigError) as error:
        load_config(example_config(tmp_path / "out", output={"format": "toy"}))
    message = str(error.value)
    assert "\n" not in message and "output.format" in message and "'toy'" in message
    assert all(name in message for name in OUTPUT_FORMATS)
