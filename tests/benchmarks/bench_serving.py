"""Issue 6's serving latency: `skewless export` against a stock tf.Transform + tf_keras export, one Example per call.

Every SavedModel holds the same transform graph (a `skewless run` on the census rows) and the same model head
(one Keras 3 model; its weights copied into an identical tf_keras model for the stock export). The stock export is
written the way tf.Transform's census example serves: `transform_features_layer()` tracked beside the tf_keras
model, a `tf.function` that parses raw Examples, transforms and predicts, saved as `serving_default`. A third
export, the stock recipe around the Keras 3 model itself, tells how much of a difference is that model's own.

A fresh process that imports TensorFlow only loads all three, checks they predict the same on every request,
warms each up, then times `--calls` single-Example calls of each `serving_default`, taking turns (each export
first in turn) so that other load on the machine hits all alike, and prints p50 / p99 / mean milliseconds and the
nodes TensorFlow runs per call (after Grappler's optimizations: what a call costs beside its fixed overhead).

    python tests/benchmarks/bench_serving.py              # 1,000 calls each after 200 warm-up calls
    python tests/benchmarks/bench_serving.py --json FILE  # also the p50 / p99 figures as JSON (bench_job.py reads them)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from bench_job import CHILD_ENV, skewless_command, skewless_missing, write_skewless_config  # noqa: E402
from census_data import (  # noqa: E402
    ADULT_ROWS,
    CATEGORICAL_COLUMNS,
    COLUMNS,
    DEFAULT_CACHE_DIR,
    LABEL_COLUMN,
    NUMERIC_COLUMNS,
    census_csv,
)

# More ids than any census vocabulary + OOV bucket holds (native-country: 42 + 1).
EMBEDDING_IDS = 64
DISTINCT_REQUESTS = 200

# Runs in a fresh interpreter, as a serving container would.
TIME_CALLS = r"""
import json, sys, time
import numpy as np
import tensorflow as tf

paths, examples_path, calls, warmup = json.loads(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
loaded = {name: tf.saved_model.load(path) for name, path in paths.items()}
serve = {name: model.signatures["serving_default"] for name, model in loaded.items()}
requests = [tf.constant([record]) for record in tf.data.TFRecordDataset(examples_path).as_numpy_iterator()]

# Nodes each call runs: the largest graph TensorFlow runs for the first call, after Grappler (RunMetadata).
from tensorflow.python.eager import context
nodes = {}
for name, f in serve.items():
    context.context().enable_run_metadata()
    f(examples=requests[0])
    metadata = context.context().export_run_metadata()
    context.context().disable_run_metadata()
    nodes[name] = max(len(g.node) for run in metadata.function_graphs for g in run.partition_graphs)

predictions = {name: np.concatenate([list(f(examples=r).values())[0].numpy().reshape(-1) for r in requests])
               for name, f in serve.items()}
difference = max(float(np.max(np.abs(p - predictions["stock"]))) for p in predictions.values())
for i in range(warmup):
    for f in serve.values():
        f(examples=requests[i % len(requests)])
millis = {name: [] for name in serve}
names = list(serve)
for i in range(calls):
    request = requests[i % len(requests)]
    for name in names[i % len(names):] + names[:i % len(names)]:  # each export first in turn
        start = time.perf_counter_ns()
        serve[name](examples=request)
        millis[name].append((time.perf_counter_ns() - start) / 1e6)
heavy = sorted({"skewless", "tensorflow_transform", "apache_beam", "keras", "tf_keras"} & set(sys.modules))
print(json.dumps({"difference": difference, "modules": heavy, "millis": millis, "nodes": nodes}))
"""


def ensure_run(cache_dir: Path) -> Path:
    """A `skewless run` of the census rows with the benchmark's transforms (built once per cache folder)."""
    csv_path, source = census_csv(ADULT_ROWS, cache_dir)
    work_dir = cache_dir / "runs" / str(ADULT_ROWS)
    work_dir.mkdir(parents=True, exist_ok=True)
    run_dir = work_dir / "skewless"
    if not (run_dir / "run.json").exists():
        print(f"building the run: skewless run on {source}", flush=True)
        config = write_skewless_config(csv_path, run_dir, work_dir / "skewless.yaml")
        subprocess.run(skewless_command() + ["run", str(config), "--overwrite"], check=True, env=CHILD_ENV,
                       stdout=subprocess.DEVNULL)
    return run_dir


def keras3_head():
    """The model head on transformed features: numeric z-scores and an embedding per vocabulary id."""
    import keras

    keras.utils.set_random_seed(0)
    inputs = {name: keras.Input((1,), name=name) for name in NUMERIC_COLUMNS}
    inputs.update({name: keras.Input((), dtype="int64", name=name) for name in CATEGORICAL_COLUMNS})
    embedded = [keras.layers.Embedding(EMBEDDING_IDS, 4, name=f"embed_{i}")(inputs[name])
                for i, name in enumerate(CATEGORICAL_COLUMNS)]
    hidden = keras.layers.Concatenate()([*(inputs[name] for name in NUMERIC_COLUMNS), *embedded])
    hidden = keras.layers.Dense(16, activation="relu", name="hidden")(hidden)
    return keras.Model(inputs, keras.layers.Dense(1, activation="sigmoid", name="output")(hidden))


def tf_keras_head(weights_from):
    """The same head in tf_keras, with the Keras 3 head's weights, layer by layer."""
    import tf_keras

    inputs = {name: tf_keras.Input((1,), name=name) for name in NUMERIC_COLUMNS}
    inputs.update({name: tf_keras.Input((), dtype="int64", name=name) for name in CATEGORICAL_COLUMNS})
    embedded = [tf_keras.layers.Embedding(EMBEDDING_IDS, 4, name=f"embed_{i}")(inputs[name])
                for i, name in enumerate(CATEGORICAL_COLUMNS)]
    hidden = tf_keras.layers.Concatenate()([*(inputs[name] for name in NUMERIC_COLUMNS), *embedded])
    hidden = tf_keras.layers.Dense(16, activation="relu", name="hidden")(hidden)
    model = tf_keras.Model(inputs, tf_keras.layers.Dense(1, activation="sigmoid", name="output")(hidden))
    for layer in model.layers:
        if layer.weights:
            layer.set_weights(weights_from.get_layer(layer.name).get_weights())
    return model


def export_stock(graph_dir: Path, head, export_dir: Path) -> None:
    """tf.Transform's documented serving export: the transform layer tracked beside the model, one tf.function.

    `head` is the tf_keras model for the stock reference; given the Keras 3 model, the same recipe shows how
    much of a difference is the Keras 3 model's own.
    """
    import tensorflow as tf
    import tensorflow_transform as tft

    tft_output = tft.TFTransformOutput(str(graph_dir))
    served = tf.Module()
    served.head = head
    served.tft_layer = tft_output.transform_features_layer()
    raw_spec = tft_output.raw_feature_spec()
    raw_spec.pop(LABEL_COLUMN)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="examples")])
    def serve(examples):
        transformed = served.tft_layer(tf.io.parse_example(examples, raw_spec))
        features = {name: tf.expand_dims(transformed[name], -1) for name in NUMERIC_COLUMNS}
        features.update({name: transformed[name] for name in CATEGORICAL_COLUMNS})
        return {"output_0": served.head(features)}

    tf.saved_model.save(served, str(export_dir), signatures={"serving_default": serve})


def write_requests(csv_path: Path, raw_spec: dict, path: Path) -> None:
    """The first census rows as raw serialized Examples, typed by the export's raw spec."""
    import tensorflow as tf

    from skewless.layers import serialize_raw_examples

    rows = []
    with open(csv_path) as lines:
        for line, _ in zip(lines, range(DISTINCT_REQUESTS)):
            rows.append(dict(zip(COLUMNS, (value.strip() for value in line.split(",")))))
    with tf.io.TFRecordWriter(str(path)) as writer:
        for record in serialize_raw_examples(rows, raw_spec):
            writer.write(record)


def percentiles(millis: dict[str, list[float]]) -> dict[str, dict[str, float]]:
    """{"p50": {export: ms}, "p99": {export: ms}}: what bench_job.py reads for issue 20's serving goal."""
    import numpy as np

    return {f"p{q}": {name: float(np.percentile(values, q)) for name, values in millis.items()} for q in (50, 99)}


def percentile_row(name: str, millis: list[float], stock: list[float], nodes: int) -> str:
    import numpy as np

    p50, p99, mean = np.percentile(millis, 50), np.percentile(millis, 99), np.mean(millis)
    ratios = p50 / np.percentile(stock, 50), p99 / np.percentile(stock, 99)
    return (f"| {name} | {len(millis):,} | {p50:.3f} | {p99:.3f} | {mean:.3f} | {ratios[0]:.2f}x | {ratios[1]:.2f}x "
            f"| {nodes} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--cache-dir", default=str(DEFAULT_CACHE_DIR), help="inputs, runs, exports (not the repo)")
    parser.add_argument("--json", type=Path, metavar="PATH",
                        help="also write each export's p50 / p99 ms and whether they predict the same here")
    args = parser.parse_args()
    missing = skewless_missing()
    if missing:
        print(f"needs the skewless job, which does not exist yet: {missing}")
        return 1
    from bench_job import machine_line
    from skewless.layers import export_serving_model, read_spec_file

    cache_dir = Path(args.cache_dir)
    run_dir = ensure_run(cache_dir)
    exports = {name: cache_dir / "serving" / name for name in ("stock", "stock_keras3", "skewless")}
    head = keras3_head()
    export_serving_model(run_dir, head, exports["skewless"], overwrite=True)
    export_stock(run_dir / "transform_graph", tf_keras_head(head), exports["stock"])
    export_stock(run_dir / "transform_graph", head, exports["stock_keras3"])
    requests = cache_dir / "serving" / "requests.tfrecord"
    write_requests(census_csv(ADULT_ROWS, cache_dir)[0], read_spec_file(exports["skewless"])["raw"], requests)

    print(f"machine: {machine_line()}")
    timed = subprocess.run(
        [sys.executable, "-c", TIME_CALLS, json.dumps({k: str(v) for k, v in exports.items()}), str(requests),
         str(args.calls), str(args.warmup)],
        capture_output=True, text=True, env=CHILD_ENV,
    )
    if timed.returncode != 0:
        print("timing process failed:", timed.stderr[-3000:])
        return 1
    result = json.loads(timed.stdout.strip().splitlines()[-1])
    print(f"\nserving_default, one serialized raw tf.Example per call, {args.warmup} warm-up calls each, "
          f"calls alternating between the exports\n")
    print("| export | calls | p50 ms | p99 ms | mean ms | p50 vs stock | p99 vs stock | nodes run |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    labels = {"stock": "stock (tf.Transform + tf_keras)", "stock_keras3": "stock recipe, Keras 3 head",
              "skewless": "skewless export"}
    for name, label in labels.items():
        print(percentile_row(label, result["millis"][name], result["millis"]["stock"], result["nodes"][name]))
    same = result["difference"] <= 1e-6
    print(f"\npredictions on {DISTINCT_REQUESTS} requests: max abs difference {result['difference']:.2g} "
          f"({'SAME' if same else 'DIFFERENT'})")
    print(f"modules loaded by the serving process besides TensorFlow: {result['modules'] or 'none'}")
    if args.json:
        args.json.write_text(json.dumps({"same": same, **percentiles(result["millis"])}))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
