"""`RunDirectory`: where each part of a run is, and its small files read back, as tf.Transform's
`TFTransformOutput` does for a graph. The job writing a run and every reader of it (make_dataset,
verify, inspect, the report, the Keras layers, the object-store copies) take their paths from here.

```
RUN_DIR/
  transform_graph/   tf.Transform's output: transform_fn/ (assets/: vocabularies), transformed_metadata/, metadata/
  data/              the shards, {split}-i-of-n.tfrecord[.gz]
  quarantine/        rejected rows, JSON lines
  config.yaml        the job config, every path in it absolute
  run.json           the `RunSummary`, written last: a run directory with it is complete
  report.html, sequence_example.json, keras_preprocessor.keras/.json: when the run has them
```

While the job runs, its staging directory also holds `tmp/`, `_stats/`, `_parts/` and `_progress/`, removed before
publishing. Nothing here imports Beam or TensorFlow at module level: the serving side and the light
commands import it. The job writes through Beam's filesystems (pipelines/output/files.py); the readers here read
a local directory (object-store runs are fetched to one first, pipelines/output/object_store.py) or a store
TensorFlow opens (gs://, for the serving side).
"""

from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass

import yaml

from skewless.errors import InputError
from skewless.lazy_imports import lazy_import
from skewless.run_summary import RunSummary

# on first use: only a run on a store TensorFlow opens (gs://) needs it; the CLI and the report read local runs
# without it
tf = lazy_import("tensorflow")

GRAPH_DIR = "transform_graph"
DATA_DIR = "data"
QUARANTINE_DIR = "quarantine"
RUN_FILE = "run.json"
CONFIG_FILE = "config.yaml"
REPORT_FILE = "report.html"
# written when the shards are SequenceExamples: names the feature lists
SEQUENCE_FILE = "sequence_example.json"
KERAS_PREPROCESSOR_FILE = "keras_preprocessor.keras"
KERAS_PREPROCESSOR_CHECK_FILE = "keras_preprocessor.json"
PROGRESS_DIR = "_progress"

# The name of every file the job writes more than one of: its writer and each reader take it from here.
_SHARD = "{split}-{index:05d}-of-{count:05d}.tfrecord{suffix}"
_SHARD_PATTERN = re.compile(r"^(?P<split>.+)-\d+-of-\d+\.tfrecord(\.gz)?$")
SHARD_GLOB = "*-of-*.tfrecord*"
_QUARANTINE = "rows-{index:05d}-of-{count:05d}.jsonl"
QUARANTINE_GLOB = "*.jsonl"
_UNIT_SUMMARY = "unit-{unit:05d}.json"
_PARSED_UNIT = "unit-{unit:05d}.arrow"
_PROGRESS = "{stage}-{unit}"
_PREDICTIONS = "predictions-{index:05d}-of-{count:05d}.{extension}"
PREDICTIONS_GLOB = "predictions-*-of-*.*"
STATISTICS_DIR = "statistics"
_STATISTICS = "Split-{split}/FeatureStats.pb"  # TFX StatisticsGen's layout, under statistics/
_STATISTICS_PATTERN = re.compile(r"^Split-(?P<split>.+)/FeatureStats\.pb$")


def shard_name(split: str, index: int, count: int, compression: str) -> str:
    """A shard's file name in data/: `train-00003-of-00012.tfrecord.gz`."""
    return _SHARD.format(split=split, index=index, count=count, suffix=".gz" if compression == "gzip" else "")


def shard_split(file_name: str) -> str | None:
    """The split a shard's file name (`shard_name`) belongs to; None for a name that is not a shard's."""
    match = _SHARD_PATTERN.match(file_name)
    return match["split"] if match else None


def quarantine_name(index: int, count: int) -> str:
    """Unit `index`'s file of rejected rows in quarantine/, one JSON object a line."""
    return _QUARANTINE.format(index=index, count=count)


def unit_summary_name(unit: int) -> str:
    """A unit's summary in the staging directory's _parts/ (what the job sums into run.json)."""
    return _UNIT_SUMMARY.format(unit=unit)


def parsed_unit_name(unit: int) -> str:
    """A unit's parsed rows kept between the two passes (Arrow IPC stream)."""
    return _PARSED_UNIT.format(unit=unit)


def predictions_name(index: int, count: int, extension: str) -> str:
    """Unit `index`'s file of `skewless predict`'s output: `predictions-00000-of-00004.csv`."""
    return _PREDICTIONS.format(index=index, count=count, extension=extension)


def statistics_name(split: str) -> str:
    """A split's raw statistics file under statistics/: `Split-train/FeatureStats.pb`."""
    return _STATISTICS.format(split=split)


def statistics_split(name: str) -> str | None:
    """The split of a `statistics_name` (with "/" between its parts); None for another name."""
    match = _STATISTICS_PATTERN.match(name)
    return match["split"] if match else None


def progress_name(stage: str, unit: str) -> str:
    """A unit's row count in one pass, under the staging directory's _progress/."""
    return _PROGRESS.format(stage=stage, unit=unit)


def progress_unit(index: int, dataset: str | None = None) -> str:
    """Work unit `index`'s name in `progress_name`: in the analysis, after the name of the dataset it is read in
    (the job's first stage and `skewless run`'s parsing process count the same unit under the same name)."""
    return f"{index:05d}" if dataset is None else f"{dataset}-{index:05d}"


@dataclass(frozen=True)
class RunDirectory:
    """The paths of a run directory's parts (the graph, the shards, run.json ...) and readers of its small files.

    Examples:
        After ``skewless run configs/example.yaml -o out/example``:

        >>> from skewless.run_directory import RunDirectory
        >>> run = RunDirectory("out/example")
        >>> run.graph_dir, run.report_file
        ('out/example/transform_graph', 'out/example/report.html')
        >>> summary = run.read_summary()
        >>> summary.rows.read, summary.rows.written, summary.label_column
        (50000, {'eval': 10055, 'train': 39945}, 'label')
        >>> run.read_config()["features"]["age"]
        {'transform': 'z_score'}
        >>> RunDirectory("out").read_summary()
        Traceback (most recent call last):
        ...
        skewless.errors.InputError: out/run.json: not found; is out the output directory of `skewless run`?
    """

    path: str

    @classmethod
    def of(cls, directory: str | os.PathLike) -> "RunDirectory":
        return cls(os.fspath(directory))

    def _part(self, *names: str) -> str:
        return os.path.join(self.path, *names)

    # the graph
    @property
    def graph_dir(self) -> str:
        return self._part(GRAPH_DIR)

    @property
    def transform_fn_dir(self) -> str:
        return self._part(GRAPH_DIR, "transform_fn")

    @property
    def assets_dir(self) -> str:
        return self._part(GRAPH_DIR, "transform_fn", "assets")

    @property
    def raw_metadata_dir(self) -> str:
        """The raw schema beside the graph, so `TFTransformOutput.raw_feature_spec` works."""
        return self._part(GRAPH_DIR, "metadata")

    @property
    def transformed_metadata_dir(self) -> str:
        return self._part(GRAPH_DIR, "transformed_metadata")

    # the rows
    @property
    def data_dir(self) -> str:
        return self._part(DATA_DIR)

    def shard_file(self, relative: str) -> str:
        """A shard's path from its path in run.json (relative to the run directory)."""
        return self._part(relative)

    @property
    def quarantine_dir(self) -> str:
        return self._part(QUARANTINE_DIR)

    @property
    def quarantine_files(self) -> list[str]:
        """The files of rejected rows in quarantine/ (`quarantine_name`), in unit order; one JSON object a line."""
        return sorted(glob.glob(os.path.join(self.quarantine_dir, QUARANTINE_GLOB)))

    # the small files
    @property
    def summary_file(self) -> str:
        return self._part(RUN_FILE)

    @property
    def config_file(self) -> str:
        return self._part(CONFIG_FILE)

    @property
    def report_file(self) -> str:
        return self._part(REPORT_FILE)

    @property
    def sequence_file(self) -> str:
        return self._part(SEQUENCE_FILE)

    @property
    def keras_preprocessor_file(self) -> str:
        return self._part(KERAS_PREPROCESSOR_FILE)

    @property
    def keras_preprocessor_check_file(self) -> str:
        return self._part(KERAS_PREPROCESSOR_CHECK_FILE)

    # the job's own, in the staging directory only
    @property
    def tmp_dir(self) -> str:
        return self._part("tmp")

    @property
    def parsed_dir(self) -> str:
        return self._part("tmp", "parsed")

    @property
    def stats_dir(self) -> str:
        return self._part("_stats")

    @property
    def parts_dir(self) -> str:
        return self._part("_parts")

    def unit_summary_file(self, unit: int) -> str:
        return self._part("_parts", unit_summary_name(unit))

    @property
    def split_statistics_file(self) -> str:
        """Each split's raw statistics computed from the rows in input order, for the assembly (staging only)."""
        return self._part("_parts", "split_statistics.json")

    @property
    def progress_dir(self) -> str:
        return self._part(PROGRESS_DIR)

    # reading
    def has_summary(self) -> bool:
        return _exists(self.summary_file)

    def read_summary(self) -> RunSummary:
        """run.json; InputError naming the file when it is missing or not a run summary."""
        if not self.has_summary():
            raise InputError(f"{self.summary_file}: not found; is {self.path} the output directory of `skewless run`?")
        return self._summary()

    def read_summary_if_any(self) -> RunSummary | None:
        """run.json, or None when the directory has none (a bare tf.Transform output, a hand-made run)."""
        return self._summary() if self.has_summary() else None

    def _summary(self) -> RunSummary:
        try:
            text = _read_bytes(self.summary_file)
        except OSError as error:
            raise InputError(f"{self.summary_file}: cannot read run summary: {error}") from None
        return RunSummary.from_json(text, self.summary_file)

    def read_config_text(self) -> str | None:
        """config.yaml as written, or None when the run has none."""
        if not _exists(self.config_file):
            return None
        try:
            return _read_bytes(self.config_file).decode("utf-8", errors="replace")
        except OSError as error:
            raise InputError(f"{self.config_file}: cannot read the run's config: {error}") from None

    def read_config(self) -> dict:
        """config.yaml as a plain dict (for people: the report, inspect); {} when absent. The job's
        `JobConfig` is `skewless.config.load_config(run.config_file)`."""
        text = self.read_config_text()
        if text is None:
            return {}
        try:
            config = yaml.safe_load(text)
        except yaml.YAMLError as error:
            raise InputError(f"{self.config_file}: cannot read the run's config: {error}") from None
        return config if isinstance(config, dict) else {}


def around_graph(directory: str | os.PathLike) -> list[RunDirectory]:
    """The run directories a path may belong to: itself (a run directory), or its parent (when the path
    is a run's transform_graph/ folder)."""
    directory = os.fspath(directory)
    return [RunDirectory(directory), RunDirectory(os.path.dirname(directory.rstrip("/")))]


def _is_remote(path: str) -> bool:
    return "://" in path


def _exists(path: str) -> bool:
    if _is_remote(path):
        return tf.io.gfile.exists(path)
    return os.path.exists(path)


def _read_bytes(path: str) -> bytes:
    if _is_remote(path):
        with tf.io.gfile.GFile(path, "rb") as handle:
            return handle.read()
    with open(path, "rb") as handle:
        return handle.read()
