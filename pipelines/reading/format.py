"""What an input format does, as one object per format module (`FORMAT`), and the work units it plans.

`skewless.input_formats` names each format's module; the job (`sources`, `plan`, `raw_types`), `schema
infer/validate` (`read_batches`), `make_raw_dataset` and `apply` ask the format's `FORMAT` instead of
testing its name. The defaults here fit a format of files counted and cut in rows or records.

A *work unit* is a list of segments, each a range of one input: bytes of a CSV file, rows of a Parquet
file or of the synthetic dataset, records of a TFRecord file. The units partition the input in order, and
unit `i` writes shard `i` of every split, so the shard count is the unit count and the output does not
depend on which worker reads what (see `shards.py` for the count).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from skewless.config import InputConfig
from skewless.errors import ConfigError
from skewless.input_formats import FILE_FORMATS
from skewless.lazy_imports import lazy_import
from skewless.pipelines.reading.batches import SourceBatch
from skewless.pipelines.reading.files import expand_paths
from skewless.pipelines.reading.held_rows import typed_rows

# Beam's filesystems on first use: the CLI checks input paths with this module before it imports Beam
filesystems = lazy_import("apache_beam.io.filesystems")

# Rows a reader hands on at a time (`sources.RowReader.read` regroups every format's rows into chunks of it).
ROW_CHUNK = 65_536


@dataclass(frozen=True)
class Segment:
    path: str
    start: int
    stop: int  # -1: to the end


@dataclass(frozen=True)
class WorkUnit:
    index: int
    segments: tuple[Segment, ...]


class InputFormat:
    """One input format's reading: its inputs, their sizes, work units, rows, column types.

    `reader` arguments are `sources.RowReader`s: a format hands its rows to `reader.chunk`, which judges
    them as every format's rows are judged (one value model, `schemas.row_checks`).
    """

    sized_in_bytes = False  # `sizes` are bytes (else rows or records, which the output estimate multiplies)
    cheap_to_split = False  # a unit can start mid-input without reading what comes before (make_raw_dataset)
    size_known = True  # `sizes` is known before reading (a generator's is not)

    def inputs(self, config: InputConfig) -> list[str]:
        """The inputs the units are cut from: by default the files `input.paths` names."""
        return expand_paths(config.paths)

    def resolved(self, config: InputConfig, paths: list[str]) -> InputConfig:
        """The config with what the inputs say filled in (a CSV header's columns); as it is by default."""
        return config

    def sizes(self, config: InputConfig, paths: list[str]) -> list[int]:
        """Per input, the size that work is divided by (bytes, rows or records)."""
        raise NotImplementedError

    def splittable(self, config: InputConfig, path: str) -> bool:
        """Whether an input can be cut into several segments (a gzip CSV cannot)."""
        return True

    def plan_units(self, config: InputConfig, paths: list[str], sizes: list[int], num_units: int) -> list[WorkUnit]:
        """Cuts the inputs, in order, into `num_units` contiguous units of about equal size.

        Unit i covers [i*T/n, (i+1)*T/n) of the concatenated inputs (T = total size); an input that is not
        splittable goes whole to the unit its first byte falls in, so there can be fewer units.
        """
        splittable = [self.splittable(config, path) for path in paths]
        total = sum(sizes)
        if total == 0:
            return [WorkUnit(0, tuple(Segment(p, 0, -1) for p in paths))]
        if not all(splittable):
            num_units = min(num_units, len(paths))
        bounds = [total * i // num_units for i in range(num_units + 1)]
        units: list[list[Segment]] = [[] for _ in range(num_units)]
        offset = 0
        for path, size, can_split in zip(paths, sizes, splittable):
            if not can_split:
                owner = max(i for i in range(num_units) if bounds[i] <= offset)
                units[owner].append(Segment(path, 0, -1))
            else:
                for i in range(num_units):
                    lo, hi = max(bounds[i], offset), min(bounds[i + 1], offset + size)
                    if lo < hi:
                        units[i].append(Segment(path, lo - offset, hi - offset))
            offset += size
        return [WorkUnit(i, tuple(segments)) for i, segments in enumerate(units)]

    def fingerprint(self, config: InputConfig, path: str) -> str:
        """What makes an input's analyzer cache stale: by default the file's name, size and modification time."""
        metadata = filesystems.FileSystems.match([path])[0].metadata_list[0]
        return f"{path}:{metadata.size_in_bytes}:{metadata.last_updated_in_seconds}"

    def read(self, reader, segment: Segment) -> Iterator:
        """The segment's rows as `sources.Chunk`s, made by `reader.chunk`."""
        raise NotImplementedError

    def batches(self, config: InputConfig, paths: list[str], batch_rows: int) -> Iterator[SourceBatch]:
        """Every row of the inputs as the file holds it, for `schema infer/validate`."""
        raise ConfigError(f"input format {config.format!r} has no files to read; use {', '.join(FILE_FORMATS)}")

    def infer_types(self, config: InputConfig, paths: list[str], lists=(), wanted=None) -> dict[str, str]:
        """Column -> "int" | "float" | "bytes", from the head of the first input."""
        raise NotImplementedError

    def column_names(self, config: InputConfig, paths: list[str], wanted: set[str]) -> list[str]:
        """The columns the inputs hold (at least whether `wanted` ones are there)."""
        return list(self.infer_types(config, paths, wanted=wanted))

    def held_rows(self, config: InputConfig, units: list[WorkUnit]) -> Iterator:
        """The input's rows as the source holds them (`held_rows.HeldRow`), in the job's order, for `skewless
        verify`: by default the values `batches` reads (ConfigError where there is no source but a generator)."""
        return typed_rows(self, config, self.inputs(config))

    def copy_head(self, path: str, target: str, rows: int) -> bool:
        """Writes the first `rows` rows of input `path` to the file `target` as the source holds them; False where the
        format has no file to copy (a database, a generator)."""
        return False

    def column_hint(self, config: InputConfig, names: list[str], missing: str) -> str:
        """What to add to "no column `missing`" when the input's columns (`names`) suggest why; nothing by default."""
        return ""

    def list_columns(self, config: InputConfig, paths: list[str]) -> dict[str, str]:
        """Column -> its type, for the columns the first input's own schema declares lists of values (a Parquet
        list column); none by default (a CSV field or an Example feature says nothing of it)."""
        return {}

    def check_columns(self, config: InputConfig, paths: list[str], names: list[str]) -> None:
        """Refuses, before any worker starts, read columns no worker could type; nothing to check by default."""
