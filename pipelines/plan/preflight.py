"""What a job's config, its input paths and the head of its first input can refuse, refused before TensorFlow,
tf.Transform and Beam are imported (seconds; a minute on a cold disk): a path that matches no file, a feature
naming no column, a column whose type its transform cannot take.

The checks are the job's own (`plan.plan` runs them again): the paths as `files.local_matches` finds them
without Beam, then the format's `resolved`, the column names and `raw_types.resolve_columns`, which read only
the first input's head. Where only Beam can tell (a path on an object store, a `?` or `**` glob), the job answers as before.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from skewless.config import InputConfig, JobConfig
from skewless.errors import InputError
from skewless.input_formats import INPUT_FORMATS, reader_of
from skewless.pipelines.output.files import is_local
from skewless.pipelines.plan.raw_types import check_named_columns, resolve_columns
from skewless.pipelines.reading.columns import RawColumn
from skewless.pipelines.reading.files import a_folder, local_matches, no_match


@dataclass(frozen=True)
class CheckedInputs:
    """What `check_inputs` read: the input files in the job's order, the input config the format resolved for them
    and the raw columns' types; a plan made before the imports starts from it (`plan.plan`)."""

    paths: list[str]
    input_config: InputConfig
    columns: list[RawColumn]


def check_inputs(config: JobConfig) -> CheckedInputs | None:
    """Raises the error the job would raise on its inputs' paths and columns, where that needs no Beam; returns
    what it read, or None where it could not read without Beam (the job then answers)."""
    if "paths" not in INPUT_FORMATS[config.input.format].needs:
        return None  # a database or a generator: reading it is the job's
    paths = local_inputs(config.input.paths)
    if paths is None:
        return None
    input_format = reader_of(config.input.format)
    input_config = input_format.resolved(config.input, paths)
    if not config.schema_path:
        # the names first: a CSV's are its header, read in a moment; the types need pyarrow's compute functions,
        # whose first call imports pandas (most of a second)
        names = input_format.column_names(input_config, paths, set(config.raw_columns))
        if not names and not sum(input_format.sizes(input_config, paths)):
            raise no_rows(config)  # as the plan says it: no file holds a row, so none holds a column either
        check_named_columns(config, input_config, names, paths[0])
    return CheckedInputs(paths, input_config, resolve_columns(config, input_config, paths))


def no_rows(config: JobConfig) -> InputError:
    """The refusal of an input without a row (docs/errors.md, "Empty input"): its statistics, vocabularies and
    scales would be those of nothing, which a graph would then serve. It names the files, or the database's URL
    (without its password) and table (a generator is named where its rows are first asked for)."""
    names = config.input.paths or reader_of(config.input.format).inputs(config.input)
    return InputError(f"{', '.join(names) or 'the input'}: holds no rows")


def local_inputs(patterns) -> list[str] | None:
    """The files `patterns` name, in the job's order (files.expand_paths), or None when one needs Beam to tell;
    a local pattern that matches nothing raises the job's error."""
    paths: list[str] = []
    certain = True
    for pattern in patterns:
        matches = local_matches(pattern) if is_local(pattern) else None
        if matches is None:
            certain = False
        elif os.path.isdir(pattern):
            raise a_folder(pattern)
        elif not matches:
            raise no_match(pattern)
        else:
            paths.extend(path for path in matches if path not in paths)
    return paths if certain else None
