"""Reading and writing tf.metadata `Schema` protos in text format (`.pbtxt`).

Local paths use plain file access; URLs such as ``gs://`` go through `tf.io.gfile`, imported only then,
so loading a local schema never pays for importing TensorFlow (and never touches Apache Beam).
"""

from __future__ import annotations

import os
import re

from google.protobuf import text_format
from tensorflow_metadata.proto.v0 import schema_pb2

from skewless.errors import SchemaError
from skewless.lazy_imports import lazy_import

# TensorFlow on first use: `import skewless.schemas` (schema infer/validate, the CLI before its heavy import) stays
# light
tf = lazy_import("tensorflow")

# The short names skewless uses for the three tf.Example value kinds.
TYPE_NAMES = {
    schema_pb2.INT: "int",
    schema_pb2.FLOAT: "float",
    schema_pb2.BYTES: "bytes",
}

# protobuf prefixes its parse messages with "LINE:COLUMN : "; the error message carries them in front instead.
_POSITION_PREFIX = re.compile(r"^\d+:\d+ : ")


def load_schema(path: str | os.PathLike) -> schema_pb2.Schema:
    """Parses a text-format schema file.

    Raises `SchemaError` ("FILE:LINE: message") when the file is missing, unreadable or not a valid
    Schema, or when a feature has no name, no known type, or a name used twice.
    """
    path = os.fspath(path)
    text = _read_text(path)
    schema = schema_pb2.Schema()
    try:
        text_format.Parse(text, schema)
    except text_format.ParseError as error:
        line, column = error.GetLine(), error.GetColumn()
        message = _POSITION_PREFIX.sub("", str(error)) or "invalid text-format Schema"
        where = f"{path}:{line}" if line else path
        suffix = f" (column {column})" if column else ""
        raise SchemaError(f"{where}: {message}{suffix}") from None
    _check_features(schema, path)
    return schema


def write_schema(schema: schema_pb2.Schema, path: str | os.PathLike) -> None:
    """Writes `schema` as text format, creating the parent folder when it is missing."""
    path = os.fspath(path)
    text = text_format.MessageToString(schema)
    try:
        if _is_url(path):
            _write_url(path, text)
            return
        folder = os.path.dirname(path)
        if folder:
            os.makedirs(folder, exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as error:
        raise SchemaError(f"{path}: cannot write schema: {error}") from None


def schema_types(schema: schema_pb2.Schema) -> dict[str, str]:
    """Feature name -> "int" | "float" | "bytes", in the schema's order (feature lists included)."""
    return {feature.name: TYPE_NAMES[feature.type] for feature in value_features(schema)}


def feature_list_names(schema: schema_pb2.Schema) -> list[str]:
    """The SequenceExample feature lists a schema declares: the features of its STRUCT (TFX's ``##SEQUENCE##``)."""
    return [child.name for feature in schema.feature if feature.type == schema_pb2.STRUCT
            for child in feature.struct_domain.feature]


def value_features(schema: schema_pb2.Schema) -> list:
    """The features that hold values: the top-level ones, and for a STRUCT its children instead."""
    features = []
    for feature in schema.feature:
        features.extend(feature.struct_domain.feature if feature.type == schema_pb2.STRUCT else [feature])
    return features


def _check_features(schema: schema_pb2.Schema, path: str) -> None:
    structs = [feature.name for feature in schema.feature if feature.type == schema_pb2.STRUCT]
    if len(structs) > 1:
        raise SchemaError(f"{path}: STRUCT features {', '.join(map(repr, structs))}: a SequenceExample schema "
                          "has one, holding the feature lists")
    seen: set[str] = set()
    for index, feature in enumerate(value_features(schema)):
        if not feature.name:
            raise SchemaError(f"{path}: feature #{index + 1} has no name")
        if feature.name in seen:
            raise SchemaError(f"{path}: feature {feature.name!r} is declared twice")
        seen.add(feature.name)
        if feature.type not in TYPE_NAMES:
            raise SchemaError(
                f"{path}: feature {feature.name!r} needs a type of INT, FLOAT or BYTES, "
                f"got {schema_pb2.FeatureType.Name(feature.type)}"
            )


def _read_text(path: str) -> str:
    try:
        if _is_url(path):
            data = _read_url(path)
        else:
            with open(path, "rb") as handle:
                data = handle.read()
    except FileNotFoundError:
        raise SchemaError(f"{path}: schema file not found") from None
    except IsADirectoryError:
        raise SchemaError(f"{path}: is a folder, not a schema file") from None
    except OSError as error:
        raise SchemaError(f"{path}: cannot read schema: {error}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise SchemaError(f"{path}:{line}: schema file is not UTF-8 text") from None


def _read_url(path: str) -> bytes:
    try:
        if not tf.io.gfile.exists(path):
            raise SchemaError(f"{path}: schema file not found")
        with tf.io.gfile.GFile(path, "rb") as handle:
            return handle.read()
    except tf.errors.OpError as error:
        raise SchemaError(f"{path}: cannot read schema: {error.message}") from None


def _write_url(path: str, text: str) -> None:
    try:
        with tf.io.gfile.GFile(path, "w") as handle:
            handle.write(text)
    except tf.errors.OpError as error:
        raise SchemaError(f"{path}: cannot write schema: {error.message}") from None


def _is_url(path: str) -> bool:
    return "://" in path
