"""tf.metadata Schema protos: load, infer, validate; and the .pbtxt schemas of the bundled datasets."""

from skewless.schemas.schema_io import TYPE_NAMES, load_schema, schema_types, write_schema

__all__ = ["TYPE_NAMES", "load_schema", "schema_types", "write_schema"]
