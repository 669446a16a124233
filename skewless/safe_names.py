"""Names derived from the names a config or the data gives (columns, features), for places that accept
fewer characters: file names, Keras layer names, serving signature arguments.

A name already valid there is kept, so existing configs keep their file and input names; any other
becomes its allowed characters plus 12 hex digits of the whole name's sha256, which keeps different
names apart. Where a derived name is recorded: README "Schemas and bad input".
"""

from __future__ import annotations

import hashlib
import re

_FILE = re.compile(r"[A-Za-z0-9_.-]{1,64}")
# what TensorFlow accepts as an op name, without '/' (a name scope) and starting with a letter
_GRAPH = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{0,63}")


def safe_file_name(name: str) -> str:
    """A file name for `name`: never '.', '..' or with a '/', so a file named after it stays in its folder."""
    if _FILE.fullmatch(name) and name not in (".", ".."):
        return name
    return _with_digest(re.sub(r"[^A-Za-z0-9_.-]", "", name).lstrip("."), name)


def missing_indicator_name(feature: str) -> str:
    """The transformed feature that says, 1 or 0, whether `feature` was missing (`missing_indicator: true`)."""
    return f"{feature}_missing"


def vocabulary_filename(feature: str) -> str:
    """The asset name of a feature's vocabulary inside the graph (TFTransformOutput.vocabulary_file_by_name),
    also its file name: safe for any feature name (run.json's features.<name>.vocabulary_file records it)."""
    return safe_file_name(f"vocab_{feature}")


def shared_vocabulary_filename(name: str) -> str:
    """The asset name (and file name) of the vocabulary several features share (`shared_vocabulary: name`): apart
    from every feature's own (`vocab_...`)."""
    return safe_file_name(f"shared_vocab_{name}")


def most_frequent_filename(feature: str) -> str:
    """The asset name (and file name: safe for any feature name) of the one-line vocabulary holding a
    feature's most frequent value."""
    return safe_file_name(f"most_frequent_{feature}")


def keras_layer_name(name: str) -> str:
    """The name of a feature's Keras input (and the prefix of its layers' names): Keras refuses '/', and
    TensorFlow warns on names outside its op-name characters."""
    return _graph_name(name)


def signature_argument_name(name: str) -> str:
    """The argument of a serving signature (`predict_raw`) that takes raw feature `name`: a Python
    identifier, as tf.function parameters must be. A name of op-name characters gets '_' for '.' and
    '-', as TensorFlow itself renamed them (so existing exports keep their arguments)."""
    if _GRAPH.fullmatch(name):
        return re.sub(r"[.-]", "_", name)
    return _graph_name(name, r"[^A-Za-z0-9_]")


def _graph_name(name: str, refused: str = r"[^A-Za-z0-9_.-]") -> str:
    if _GRAPH.fullmatch(name):
        return name
    plain = re.sub(refused, "", name)
    return _with_digest(plain if plain[:1].isalpha() else f"f{plain}", name)


def _with_digest(plain: str, name: str) -> str:
    return f"{plain[:40]}_{hashlib.sha256(name.encode()).hexdigest()[:12]}"
