"""skewless: Beam + tf.Transform batch preprocessing whose graph Keras 3 models reuse at serving time.

Importing `skewless` is cheap and imports neither Apache Beam nor TensorFlow: the serving path
(`skewless.layers`) must run in a container that has TensorFlow and the graph and nothing else.

Imports follow rules that tests/test_import_rules.py checks: no import cycles; `skewless.layers` and
`skewless.schemas` never import `skewless.pipelines` or Beam; `skewless.pipelines` never imports the CLI,
the report or the progress display (`run()` takes a progress watcher and returns its result; `skewless run`
draws the progress and renders report.html). A name several of these parts need lives in a module that
imports nothing of the project (`skewless.safe_names`, `skewless.progress_snapshot`). Imports go at the
top of a module, with one exception: code that light commands load (the CLI, `inspect`, `report`, the
tf.data readers) imports TensorFlow, Beam, or a project module that imports them, inside the function
that needs it, so `skewless --help` and `skewless report` start fast and `skewless export` runs without Beam.
"""

__version__ = "0.1.0"
