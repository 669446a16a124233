"""The `input` section as a union on `format` (issue 44 item 4): each format takes the common keys and its own;
another format's option is one line naming the option, the format given and the formats that take it; a run's
config.yaml (the dump) lists every format's keys as it always has, and loads back."""

import pytest
import yaml

from skewless.config import load_config
from skewless.errors import ConfigError

# What each format needs to load, and the contract this file checks the code against: each format's own option,
# the formats that take it, and a value other than its default.
MINIMAL = {"csv": {"paths": ["a.csv"], "columns": ["a"]}, "parquet": {"paths": ["a.parquet"]},
           "tfrecord": {"paths": ["a.tfrecord"]}, "jsonl": {"paths": ["a.jsonl"]},
           "sql": {"url": "duckdb://", "query": "SELECT 1 AS a"}, "synthetic": {"rows": 5},
           "python": {"generator": "rows:read"}}
OPTIONS = {  # key: (formats taking it, a value besides its default, how the error shows that value)
    "header": (("csv",), True, "true"), "columns": (("csv",), ["a"], "['a']"),
    "delimiter": (("csv",), ";", ";"), "skip_initial_space": (("csv",), True, "true"),
    "multiline": (("csv",), True, "true"), "max_line_bytes": (("csv", "jsonl"), 4096, "4096"),
    "record": (("tfrecord",), "sequence_example", "sequence_example"), "url": (("sql",), "duckdb://", "duckdb://"),
    "query": (("sql",), "SELECT 1", "SELECT 1"), "table": (("sql",), "t", "t"), "order_by": (("sql",), ["a"], "['a']"),
    "rows": (("synthetic",), 5, "5"), "seed": (("synthetic",), 3, "3"), "generator": (("python",), "m:f", "m:f"),
    "args": (("python",), {"n": 1}, "{'n': 1}")}
COMMON = {"list_delimiter": ";", "nonfinite": "missing", "na_values": ["NA"], "types": {"a": "int"},
          "keep_parsed": False}
# the keys and their order in every run's config.yaml since the input was one flat model (skewless 0.1)
FLAT_KEYS = ["format", "paths", "record", "header", "columns", "delimiter", "skip_initial_space", "multiline",
             "list_delimiter", "nonfinite", "na_values", "types", "max_line_bytes", "keep_parsed", "url", "query",
             "table", "order_by", "rows", "seed", "generator", "args"]
MISPLACED = [(fmt, key) for fmt in MINIMAL for key, (takers, _, _) in OPTIONS.items() if fmt not in takers]
OWN = [(fmt, key) for fmt in MINIMAL for key, (takers, _, _) in OPTIONS.items() if fmt in takers]


def job(input_section: dict) -> dict:
    return {"name": "t", "input": input_section, "features": {"a": {"transform": "z_score"}}, "output": {"dir": "o"}}


@pytest.mark.parametrize(("fmt", "key"), MISPLACED, ids=[f"{key}-on-{fmt}" for fmt, key in MISPLACED])
def test_another_formats_option_is_one_line_naming_it_and_the_formats_that_take_it(tmp_path, fmt, key):
    takers, value, shown = OPTIONS[key]
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(job({"format": fmt, **MINIMAL[fmt], key: value}), sort_keys=False))
    with pytest.raises(ConfigError) as error:
        load_config(path)
    message = str(error.value)
    assert "\n" not in message and message.startswith(f"{path}:")
    assert f"input.{key} {shown} needs input.format {' or '.join(takers)}, not {fmt}" in message


@pytest.mark.parametrize(("fmt", "key"), OWN, ids=[f"{key}-on-{fmt}" for fmt, key in OWN])
def test_a_formats_own_option_is_taken(fmt, key):
    value = OPTIONS[key][1]
    extra = {"query": None} if key == "table" else {}  # a table or a query, not both
    config = load_config(job({"format": fmt, **MINIMAL[fmt], **extra, key: value}))
    assert getattr(config.input, key) == value


@pytest.mark.parametrize("fmt", MINIMAL)
def test_every_format_takes_the_common_keys(fmt):
    config = load_config(job({"format": fmt, **MINIMAL[fmt], **COMMON}))
    assert {key: getattr(config.input, key) for key in COMMON} == COMMON


@pytest.mark.parametrize("fmt", MINIMAL)
def test_the_dump_lists_every_formats_keys_in_one_order_and_loads_back(fmt):
    """apply, verify and predict load a run's config.yaml, which lists every key of every format (another
    format's at its default), in the order runs have always written them."""
    config = load_config(job({"format": fmt, **MINIMAL[fmt]}))
    dumped = config.model_dump(by_alias=True)
    assert list(dumped["input"]) == FLAT_KEYS
    assert load_config(dumped) == config


def test_a_typo_of_an_input_key_names_the_nearest_key_whatever_the_format():
    with pytest.raises(ConfigError, match=r"input.sede: unknown key; did you mean 'seed'\?"):
        load_config(job({"format": "synthetic", "rows": 5, "sede": 3}))


@pytest.mark.parametrize(("section", "expected"), [
    ({"paths": ["a.csv"]}, "config: input.format: Field required"),
    ({"format": "xml"}, "config: input.format: unknown value 'xml' (input should be 'csv', 'parquet', 'tfrecord', "
                        "'jsonl', 'sql', 'synthetic' or 'python')"),
])
def test_a_missing_or_unknown_format_is_named(section, expected):
    with pytest.raises(ConfigError) as error:
        load_config(job(section))
    assert str(error.value) == expected
