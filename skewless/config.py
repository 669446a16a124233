"""The job config: a YAML file (or a dict) validated into a `JobConfig`.

Errors name the file, the line and the key path, e.g.
``configs/census.yaml:14: features.age.transform: unknown value 'zscore' (expected one of ...)``.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any, Literal, Union

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from skewless.errors import ConfigError

NUMERIC_TRANSFORMS = ("z_score", "scale_0_1", "bucketize")
CATEGORICAL_TRANSFORMS = ("vocabulary", "hash")
TRANSFORMS = NUMERIC_TRANSFORMS + CATEGORICAL_TRANSFORMS + ("passthrough",)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class InputConfig(_Strict):
    format: Literal["csv", "tfrecord", "parquet", "synthetic"]
    paths: list[str] = Field(default_factory=list)
    # csv
    header: bool = False
    columns: list[str] | None = None
    delimiter: str = ","
    skip_initial_space: bool = True
    # synthetic
    rows: int | None = Field(default=None, gt=0)
    seed: int = 0

    @model_validator(mode="after")
    def _check(self) -> "InputConfig":
        if self.format == "synthetic":
            if self.rows is None:
                raise ValueError("input.format synthetic needs input.rows")
        elif not self.paths:
            raise ValueError(f"input.format {self.format} needs input.paths (a list of files or globs)")
        if self.format == "csv" and not self.header and not self.columns:
            raise ValueError("csv input without a header needs input.columns (the column names in order)")
        if len(self.delimiter) != 1:
            raise ValueError(f"input.delimiter must be one character, got {self.delimiter!r}")
        return self


class FeatureConfig(_Strict):
    transform: Literal["z_score", "scale_0_1", "bucketize", "vocabulary", "hash", "passthrough"]
    # bucketize
    num_buckets: int | None = Field(default=None, ge=1)
    # vocabulary
    top_k: int | None = Field(default=None, ge=1)
    frequency_threshold: int | None = Field(default=None, ge=0)
    num_oov_buckets: int = Field(default=1, ge=0)
    # hash
    hash_buckets: int | None = Field(default=None, ge=1)
    # used where the raw value is missing; a feature without one requires a value in every row
    default: Union[float, int, str, None] = None

    @model_validator(mode="after")
    def _check(self) -> "FeatureConfig":
        if self.transform == "bucketize" and self.num_buckets is None:
            raise ValueError("transform bucketize needs num_buckets")
        if self.transform == "hash" and self.hash_buckets is None:
            raise ValueError("transform hash needs hash_buckets")
        options = {
            "num_buckets": "bucketize",
            "top_k": "vocabulary",
            "frequency_threshold": "vocabulary",
            "hash_buckets": "hash",
        }
        for option, transform in options.items():
            if getattr(self, option) is not None and self.transform != transform:
                raise ValueError(f"{option} only applies to transform {transform}, not {self.transform}")
        return self


class LabelConfig(_Strict):
    column: str
    map: dict[str, int] | None = None
    transform: Literal["vocabulary"] | None = None

    @model_validator(mode="after")
    def _check(self) -> "LabelConfig":
        if self.map is not None and self.transform is not None:
            raise ValueError("label takes either map or transform, not both")
        return self


class OutputConfig(_Strict):
    dir: str
    splits: dict[str, float] = Field(default_factory=lambda: {"train": 0.8, "eval": 0.2})
    split_key: str | None = None
    compression: Literal["gzip", "none"] = "gzip"
    shards: Union[Literal["auto"], int] = "auto"
    target_shard_mb: int = Field(default=128, ge=1)
    readers: int = Field(default=1, ge=1)
    max_bad_fraction: float = Field(default=0.01, ge=0.0, le=1.0)

    @field_validator("splits")
    @classmethod
    def _fractions(cls, splits: dict[str, float]) -> dict[str, float]:
        if not splits:
            raise ValueError("output.splits needs at least one split")
        for name, fraction in splits.items():
            if not name.isidentifier():
                raise ValueError(f"split name {name!r} must be a plain identifier (it names files)")
            if fraction <= 0:
                raise ValueError(f"split {name!r} has fraction {fraction}; fractions must be > 0")
        total = sum(splits.values())
        if abs(total - 1.0) > 1e-6:
            raise ValueError(f"output.splits fractions sum to {total:g}, not 1")
        return splits

    @field_validator("shards")
    @classmethod
    def _shards(cls, shards: Union[str, int]) -> Union[str, int]:
        if isinstance(shards, int) and shards < 1:
            raise ValueError("output.shards must be 'auto' or an integer >= 1")
        return shards


class RunnerConfig(_Strict):
    name: str = "DirectRunner"
    options: dict[str, Any] = Field(default_factory=dict)


class JobConfig(_Strict):
    name: str
    input: InputConfig
    schema_path: str | None = Field(default=None, alias="schema")
    features: dict[str, FeatureConfig] = Field(default_factory=dict)
    label: LabelConfig | None = None
    preprocessing_fn: str | None = None
    output: OutputConfig
    runner: RunnerConfig = Field(default_factory=RunnerConfig)
    # tf.Transform's analyzer cache: each input file is analyzed once; reruns read only new or changed files
    cache_dir: str | None = None
    # The folder relative paths in the config are resolved against (the config file's folder).
    base_dir: str = Field(default=".", exclude=True)

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    @model_validator(mode="after")
    def _check(self) -> "JobConfig":
        if not self.features and not self.preprocessing_fn:
            raise ValueError("the config needs features (declarative transforms) or a preprocessing_fn")
        if self.label is not None and self.label.column in self.features:
            raise ValueError(f"column {self.label.column!r} is the label; it cannot also be a feature")
        if self.preprocessing_fn is not None and ":" not in self.preprocessing_fn:
            raise ValueError("preprocessing_fn must be 'module.path:function'")
        return self

    def resolve(self, path: str) -> str:
        """A path from the config, made absolute against the config file's folder (URLs untouched)."""
        if "://" in path or os.path.isabs(path):
            return path
        return os.path.normpath(os.path.join(self.base_dir, path))

    @property
    def raw_columns(self) -> list[str]:
        """The raw columns the job feeds to tf.Transform: the features, then the label."""
        columns = list(self.features)
        if self.label is not None:
            columns.append(self.label.column)
        return columns


def load_config(
    source: Union[str, os.PathLike, dict],
    overrides: list[str] | None = None,
    output_dir: str | None = None,
) -> JobConfig:
    """Loads and validates a job config from a YAML path or a dict.

    `overrides` are ``key.path=value`` strings (the CLI's ``--set``); the value is parsed as YAML.
    `output_dir` replaces ``output.dir``.
    """
    lines: dict[tuple, int] = {}
    if isinstance(source, dict):
        raw = copy.deepcopy(source)
        where, base_dir = "config", "."
    else:
        path = Path(source)
        where, base_dir = str(path), str(path.parent)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ConfigError(f"{path}: config file not found") from None
        except (OSError, UnicodeDecodeError) as error:
            raise ConfigError(f"{path}: cannot read config: {error}") from None
        try:
            raw = yaml.safe_load(text)
            lines = _key_lines(yaml.compose(text, Loader=yaml.SafeLoader))
        except yaml.YAMLError as error:
            mark = getattr(error, "problem_mark", None)
            line = f":{mark.line + 1}" if mark is not None else ""
            problem = getattr(error, "problem", None) or str(error)
            raise ConfigError(f"{path}{line}: invalid YAML: {problem}") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: the config must be a mapping of keys to values")
    for override in overrides or []:
        _apply_override(raw, override)
    if output_dir is not None:
        raw.setdefault("output", {})
        if not isinstance(raw["output"], dict):
            raise ConfigError(f"{where}: output must be a mapping")
        raw["output"]["dir"] = output_dir
    raw.setdefault("base_dir", base_dir)
    try:
        return JobConfig.model_validate(raw)
    except ValidationError as error:
        raise ConfigError(_describe(error, where, lines)) from None


def _apply_override(raw: dict, override: str) -> None:
    key, sep, value = override.partition("=")
    if not sep or not key:
        raise ConfigError(f"--set {override!r}: expected key.path=value")
    try:
        parsed = yaml.safe_load(value) if value else ""
    except yaml.YAMLError:
        parsed = value
    node = raw
    parts = key.split(".")
    for part in parts[:-1]:
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise ConfigError(f"--set {override!r}: {part} is not a mapping")
        node = child
    node[parts[-1]] = parsed


def _key_lines(node, path: tuple = ()) -> dict[tuple, int]:
    """Maps each key path of a composed YAML document to its 1-based line number."""
    lines: dict[tuple, int] = {}
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = path + (key_node.value,)
            lines[key] = key_node.start_mark.line + 1
            lines.update(_key_lines(value_node, key))
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            lines[path + (index,)] = item.start_mark.line + 1
            lines.update(_key_lines(item, path + (index,)))
    return lines


def _describe(error: ValidationError, where: str, lines: dict[tuple, int]) -> str:
    messages = []
    for item in error.errors():
        loc = tuple("schema" if part == "schema_path" else part for part in item["loc"])
        # Pydantic appends the union branch or literal name to a location; keep only real keys.
        keys = tuple(part for part in loc if isinstance(part, int) or "[" not in str(part))
        line = _nearest_line(keys, lines)
        message = item["msg"].removeprefix("Value error, ")
        if item["type"] == "extra_forbidden":
            message = "unknown key"
        elif item["type"] == "literal_error":
            message = f"unknown value {item.get('input')!r} ({message[0].lower()}{message[1:]})"
        dotted = ".".join(str(part) for part in keys)
        prefix = f"{where}:{line}" if line else where
        messages.append(f"{prefix}: {dotted}: {message}" if dotted else f"{prefix}: {message}")
    return "; ".join(messages)


def _nearest_line(keys: tuple, lines: dict[tuple, int]) -> int | None:
    for end in range(len(keys), 0, -1):
        if keys[:end] in lines:
            return lines[keys[:end]]
    return None
