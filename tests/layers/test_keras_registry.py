"""A `.keras` file holding skewless layers loads after `import skewless` alone, in a fresh process, whichever of
skewless and Keras is imported first; a file naming a layer this skewless lacks fails with one line (issue 32)."""

import importlib.metadata
import json
import os
import subprocess
import sys
import zipfile

import keras
import numpy as np
import pytest

from skewless.layers import Cast, Clip, Standardize

ROWS = np.array([[25.0], [38.5], [51.75], [90.0]], dtype="float32")

# Loads the file in a fresh process after the given imports and prints the predictions and whether the imports
# alone loaded Keras (`import skewless` must not).
_LOAD = """
import json, sys
{imports}
keras_after_imports = "keras" in sys.modules
import keras, numpy as np
model = keras.saving.load_model(sys.argv[1])
print(json.dumps({{"keras_after_imports": keras_after_imports,
                  "predictions": model.predict(np.array({rows}, dtype="float32"), verbose=0).tolist()}}))
"""


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A model of skewless layers saved as .keras, and its predictions in this process."""
    inputs = keras.Input(shape=(1,), dtype="float32")
    scaled = Standardize(center=38.5, scale=13.25)(inputs)
    outputs = Cast("float64")(Clip(-1.0, 1.0)(scaled))
    model = keras.Model(inputs, outputs)
    path = tmp_path_factory.mktemp("keras_registry") / "model.keras"
    model.save(path)
    return path, model.predict(ROWS, verbose=0)


def _load(path, imports):
    environment = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    return subprocess.run([sys.executable, "-c", _LOAD.format(imports=imports, rows=ROWS.tolist()), str(path)],
                          capture_output=True, text=True, env=environment, timeout=300)


@pytest.mark.parametrize("imports", ["import skewless", "import keras\nimport skewless"])
def test_loads_after_import_skewless(saved, imports):
    path, predictions = saved
    done = _load(path, imports)
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout.splitlines()[-1])
    assert loaded["keras_after_imports"] == ("import keras" in imports)
    # (x - 38.5) / 13.25 clipped to [-1, 1]
    expected = np.clip((ROWS - 38.5) / np.float32(13.25), -1, 1)
    np.testing.assert_allclose(loaded["predictions"], expected, rtol=1e-6)
    np.testing.assert_array_equal(loaded["predictions"], predictions)


def test_without_import_skewless_keras_cannot_find_the_layers(saved):
    # what the lazy registration fixes: Keras imports the module a file names only for its own packages
    done = _load(saved[0], "")
    assert done.returncode != 0
    assert "Could not locate class 'Standardize'" in done.stderr


def test_a_layer_this_skewless_lacks_fails_with_one_line(saved, tmp_path):
    path = tmp_path / "renamed.keras"
    with zipfile.ZipFile(saved[0]) as source, zipfile.ZipFile(path, "w") as target:
        for item in source.infolist():
            data = source.read(item)
            if item.filename == "config.json":
                data = data.replace(b'"skewless>Clip"', b'"skewless>Winsorize"')
            target.writestr(item, data)
    done = _load(path, "import skewless")
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    version = importlib.metadata.version("skewless")
    # the layers this skewless registers with Keras, as Keras itself lists them
    layers = sorted(name.removeprefix("skewless>") for name in keras.saving.get_custom_objects()
                    if name.startswith("skewless>"))
    assert {"Cast", "Clip", "Standardize", "TransformLayer"} <= set(layers)
    assert last == (
        f"skewless.keras_registry.UnknownLayerError: skewless>Winsorize: skewless {version} has no layer 'Winsorize' "
        f"(it has {', '.join(layers)}); the file was saved by another version of skewless"
    )
