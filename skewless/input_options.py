"""What every input format's options share: the `input` keys each format takes (`InputOptions`).

Each format declares its own options as a subclass, beside its line in the registry
(`skewless.input_formats`): `format` narrowed to its name, then its own keys with their defaults and a
`description` (the docs' formats table shows it). The config's `input` is the union of those models on
`format` (`skewless.config.InputConfig`). Only pydantic is imported here: the config loads before
TensorFlow and pyarrow.
"""

from __future__ import annotations

import os
from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, model_validator


def absolute_path(path: str, base_dir: str) -> str:
    """`path` made absolute against `base_dir` (URLs and absolute paths untouched)."""
    if "://" in path or os.path.isabs(path):
        return path
    return os.path.normpath(os.path.join(base_dir, path))


class InputOptions(BaseModel):
    """The keys of every input format: its name, its files, and what a raw value means (docs/values.md)."""

    model_config = ConfigDict(extra="forbid")

    format: str
    paths: list[str] = Field(default_factory=list, description="files or globs, relative to the config's folder")
    # splits the values of list columns (features with list: true) where a field holds several
    list_delimiter: str = "|"
    # ±inf and numbers beyond their column's type (float32, int64): quarantined, or taken as missing values
    # (filled by `default`/`fill`) like NaN always is
    nonfinite: Literal["quarantine", "missing"] = "quarantine"
    # text read as a missing value besides the empty string (docs/values.md): tokens for every column, or a
    # mapping column -> tokens (pandas' na_values), e.g. ["NA", "N/A"]; at serving too
    na_values: Union[list[str], dict[str, list[str]]] = Field(default_factory=list)
    # a column's type where the data would be judged (csv, jsonl, python, ... without a schema): column -> int |
    # float | string, e.g. {zip_code: string}; the others are inferred
    types: dict[str, Literal["int", "float", "string"]] = Field(default_factory=dict)
    # the analysis pass keeps the parsed rows (uncompressed Arrow, in the staging folder) for the transform pass
    keep_parsed: bool = True

    @model_validator(mode="after")
    def _check_values(self) -> "InputOptions":
        if not self.list_delimiter:
            raise ValueError("input.list_delimiter must not be empty")
        lists = self.na_values.values() if isinstance(self.na_values, dict) else [self.na_values]
        if any(not token.strip() for tokens in lists for token in tokens):
            raise ValueError("input.na_values: an empty token (the empty string is always a missing value)")
        return self

    @classmethod
    def own_options(cls) -> tuple[str, ...]:
        """The keys this format takes that not every format does, in the order it declares them."""
        return tuple(name for name in cls.model_fields if name not in InputOptions.model_fields)

    @property
    def sequence_examples(self) -> bool:
        """Whether the rows are tf.train.SequenceExample records (feature lists); only TFRecord input's can be."""
        return False

    def declared_kinds(self) -> dict[str, str]:
        """`types` as column kinds: column -> "int" | "float" | "bytes"."""
        return {name: "bytes" if kind == "string" else kind for name, kind in self.types.items()}

    def missing_tokens(self, column: str) -> frozenset[bytes]:
        """The NA tokens of `column` (`input.na_values`), as the bytes values are compared with."""
        tokens = self.na_values.get(column, []) if isinstance(self.na_values, dict) else self.na_values
        return frozenset(token.strip().encode() for token in tokens)

    def resolve_paths(self, base_dir: str) -> None:
        """Makes the paths it reads absolute against the config's folder `base_dir` (once, when it loads)."""
        self.paths = [absolute_path(path, base_dir) for path in self.paths]

    def files_read(self) -> list[str]:
        """The files and globs it reads (an output may neither be nor hold one)."""
        return list(self.paths)


class LineOptions(InputOptions):
    """A format whose rows are lines of a file (CSV, JSON Lines): a line's length is bounded."""

    max_line_bytes: int = Field(default=8 << 20, ge=1024, description=(
        "a longer line is quarantined unread (errors.md, \"What a value may cost\")"))


def option_default(model: type[BaseModel], key: str) -> Any:
    """What `model` takes for `key` when the config leaves it out."""
    return model.model_fields[key].get_default(call_default_factory=True)
