"""skewless: Beam + tf.Transform batch preprocessing whose graph Keras 3 models reuse at serving time.

Importing `skewless` is cheap and imports neither Apache Beam nor TensorFlow: the serving path
(`skewless.layers`) must run in a container that has TensorFlow and the graph and nothing else. Which
part may import which, and where an import goes inside a function: docs/design.md "Who imports whom"
(tests/architecture/test_import_rules.py checks it).
"""

# first: the clock run.json's seconds count from (skewless/command_clock.py)
import skewless.command_clock

from pathlib import Path

from skewless.keras_registry import register_lazily
from skewless.lazy_imports import lazy_exports
from skewless.source_folders import map_checkout_folders

__version__ = "0.1.0"

# the public API: these, and the faces skewless.pipelines, skewless.layers, skewless.schemas (docs/api.md is
# generated from the four `__all__`s); every other module is internal. Imported on first use: `import skewless`
# stays cheap (the config's pydantic models, the report's templates load only when named)
_EXPORTS = {
    "load_config": "skewless.config",
    "JobConfig": "skewless.config",
    "RunDirectory": "skewless.run_directory",
    "render_report": "skewless.report",
    **{error: "skewless.errors" for error in (
        "SkewlessError", "ConfigError", "InputError", "SchemaError", "OutputError", "OutputExistsError",
        "TooManyBadRowsError", "NotPortableError", "RunnerError")},
}

__all__ = sorted(_EXPORTS)

__getattr__ = lazy_exports(__name__, _EXPORTS)

# a .keras file holding skewless layers loads after `import skewless` alone (skewless/keras_registry.py)
register_lazily()
# imported from a clone's root, `skewless.layers` and the others are the folders beside this one
map_checkout_folders(Path(__file__).parent)
