"""Error types the project raises on purpose.

The CLI turns any `SkewlessError` into one line on stderr and exit code 2, so every message must say
what went wrong and where (file, line, column or feature) without a traceback.
"""


class SkewlessError(Exception):
    """Base class: an error caused by the user's input, config or environment, explained in one line."""


class ConfigError(SkewlessError):
    """The job config is invalid (unknown key, bad value, unknown column or transform)."""


class InputError(SkewlessError):
    """Input data cannot be read: missing file, corrupt record, undecodable content."""


class SchemaError(SkewlessError):
    """A tf.metadata schema is malformed or does not fit the data."""


class OutputExistsError(SkewlessError):
    """The output directory exists and `--overwrite` was not given."""


class TooManyBadRowsError(SkewlessError):
    """More rows went to quarantine than `max_bad_fraction` allows; no output data was written."""


class NotPortableError(SkewlessError):
    """A transform has no exact equivalent in built-in Keras layers (TransformLayer still runs it)."""
