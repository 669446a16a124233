"""Error types the project raises on purpose.

The CLI turns any `SkewlessError` into one line on stderr and exit code 2, so every message must say
what went wrong and where (file, line, column or feature) without a traceback.
"""

import errno
import re


class SkewlessError(Exception):
    """Base class: an error caused by the user's input, config or environment, explained in one line."""


class ConfigError(SkewlessError):
    """The job config is invalid (unknown key, bad value, unknown column or transform)."""


class InputError(SkewlessError):
    """Input data cannot be read: missing file, corrupt record, undecodable content."""


class SchemaError(SkewlessError):
    """A tf.metadata schema is malformed or does not fit the data."""


class OutputError(SkewlessError):
    """The output path cannot take this run: not creatable, or holding something a run must not replace."""


class OutputExistsError(OutputError):
    """The output directory exists and `--overwrite` was not given."""


class TooManyBadRowsError(SkewlessError):
    """More rows went to quarantine than `max_bad_fraction` allows; no output data was written."""


class NotPortableError(SkewlessError):
    """A transform has no exact equivalent in built-in Keras layers (TransformLayer still runs it)."""


class LimitError(SkewlessError):
    """The data is past a stated limit of the config (analysis.max_keys, analysis.max_vocabulary): what it bounds
    would cost more memory than the limit allows; the message names the option that raises it."""


class RunnerError(SkewlessError):
    """The Beam runner cannot run the job: its job service is unreachable, or its workers never started."""


# what Beam appends to the message of an error raised in a step (apache_beam/runners/common.py, _reraise_augmented)
_BEAM_STEP = re.compile(r" \[while running '[^\n]*'\]$")


def own_message(error: SkewlessError) -> str:
    """What one of ours says, without the step Beam appends when it was raised in a pipeline step: the message says
    what and where itself."""
    return _BEAM_STEP.sub("", str(error))


def _disk_full(error: BaseException) -> BaseException | None:
    """The error, or one it was raised from, that is a full disk (ENOSPC), also as Beam passes it on: the text of
    an OSError re-raised from a pipeline step ("OSError: [Errno 28] No space left on device [while running ..."); or
    None."""
    seen = []
    while error is not None and error not in seen:
        seen.append(error)
        if (isinstance(error, OSError) and error.errno == errno.ENOSPC) or f"[Errno {errno.ENOSPC}]" in str(error):
            return error
        error = error.__cause__ or error.__context__
    return None


# the most of an unexpected error's message its line shows; --debug shows all of it
MESSAGE_CHARACTERS = 500


def one_line(error: BaseException, where: str) -> str:
    """An unexpected error (a bug, or Beam's wrapping of one raised in the pipeline) as `file: what`.

    Beam appends the failed step and sometimes the worker's whole traceback to the message; the first
    line names the error, the rest is for `--debug`.
    """
    cause = error
    while cause is not None and not isinstance(cause, SkewlessError):
        cause = cause.__cause__ or cause.__context__
    if cause is not None:  # ours, raised in a Beam worker and wrapped by Beam on the way out
        return own_message(cause).splitlines()[0]
    full = _disk_full(error)
    if full is not None:
        return (f"{getattr(full, 'filename', None) or where}: No space left on device: the disk where the command "
                "writes is full (its output's staging folder beside the output, or the temporary folder); free "
                "space and run it again (what the output path held is unchanged)")
    filename = getattr(error, "filename", None)
    if isinstance(error, OSError) and filename:
        return f"{filename}: {error.strerror or error}"
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    what = lines[0] if lines else "no message"
    if len(what) > MESSAGE_CHARACTERS:  # Beam quotes whole elements in some errors (a singleton view's two)
        what = f"{what[:MESSAGE_CHARACTERS]}... ({len(what) - MESSAGE_CHARACTERS:,} more characters)"
    return f"{where}: {type(error).__name__}: {what} (rerun with --debug for the traceback)"
