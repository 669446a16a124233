"""The input-format registry (skewless/input_formats.py) against what reads it: a format is one module and one
registry line, so no module outside those tests a value against a format's name, every line names a module
with a `FORMAT`, each format's options are declared by its own model (issue 44 item 4), and the config
reference's formats table is the registry's."""

import ast
import dataclasses

import pytest
from example_job import REPO
from project_modules import MODULES, module_names
from pydantic import Field

from skewless.config import load_config, parse_input
from skewless.input_formats import INPUT_FORMATS, formats_table, formats_taking
from skewless.input_options import InputOptions

# the registry, the formats' base class and each format's module may name formats; nothing else branches on one
OWNERS = {"skewless.input_formats", "skewless.pipelines.reading.format",
          *(entry.module for entry in INPUT_FORMATS.values())}


def _names_a_format(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return node.value in INPUT_FORMATS
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_names_a_format(item) for item in node.elts)
    return False


def format_branches(source: str, filename: str = "<source>") -> list[str]:
    """`== "csv"`, `in ("parquet", ...)` and the like in `source`, as "line: text". A comparison whose other side
    names an output format (`output_format`, `config.output.format`) is about outputs, not input formats."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(_names_a_format(operand) for operand in operands):
                text = ast.get_source_segment(source, node) or ""
                if "output" not in text:
                    found.append(f"{node.lineno}: {text}")
        elif isinstance(node, ast.match_case) and _names_a_format(getattr(node.pattern, "value", None)):
            found.append(f"{node.lineno}: case {ast.get_source_segment(source, node.pattern)}")
    return found


def test_the_rule_finds_a_format_branch():
    source = ('if config.format == "csv":\n    pass\n'
              'ok = fmt in ("parquet", "tfrecord")\n'
              'fine = output_format == "parquet"\n'
              'other = name == "csv_reader"\n')
    assert format_branches(source) == ['1: config.format == "csv"', '3: fmt in ("parquet", "tfrecord")']


def test_no_module_outside_the_registry_branches_on_an_input_format():
    found = []
    for module, path in sorted(MODULES.items()):
        if module not in OWNERS:
            found += [f"{path.relative_to(REPO)}:{branch}" for branch in format_branches(path.read_text(), str(path))]
    assert not found, ("input-format branches outside skewless/input_formats.py and the format modules "
                       "(ask `reader_of(format)` or the format's FormatEntry instead):\n" + "\n".join(found))


def test_every_registry_line_names_a_module_with_a_format_object():
    for entry in INPUT_FORMATS.values():
        assert entry.module in MODULES, entry
        assert "FORMAT" in module_names(entry.module), f"{entry.module} defines no FORMAT"


def _declared_by(model: type, key: str) -> list[type]:
    """The classes of `model`'s bases (itself included) whose own body annotates `key`."""
    return [kind for kind in model.__mro__ if key in vars(kind).get("__annotations__", {})]


def test_each_formats_options_are_declared_once_by_its_own_model():
    """Adding an option to a format is one field of its model: each key a format takes is declared by one class,
    its model or a base of the options (`InputOptions`: every format's keys; `LineOptions`: a line's bound), and
    `format` alone is narrowed by each model (the union's discriminator)."""
    for entry in INPUT_FORMATS.values():
        assert issubclass(entry.options, InputOptions), entry
        for key in entry.options.model_fields:
            owners = _declared_by(entry.options, key)
            if key == "format":
                assert owners[0] is entry.options, f"{entry.name}'s model does not narrow format to its name"
                continue
            assert len(owners) == 1, f"input.{key} is declared by {owners} (once, by its format or a shared base)"
            owner = owners[0]
            assert owner is entry.options or (owner.__module__ == "skewless.input_options"
                                              and owner in InputOptions.__subclasses__() + [InputOptions]), owner


def test_the_config_declares_no_input_key_of_its_own():
    """skewless/config.py builds `input` from the registry's models: none of its classes declares an input key."""
    keys = {key for entry in INPUT_FORMATS.values() for key in entry.options.model_fields} - {"format"}
    tree = ast.parse(MODULES["skewless.config"].read_text())
    declared = {(node.name, statement.target.id) for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
                for statement in node.body
                if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)
                and statement.target.id in keys}
    assert not declared, f"input keys declared in skewless/config.py instead of their format's model: {declared}"


def test_the_config_reference_holds_the_registrys_formats_table():
    page = (REPO / "docs" / "config.md").read_text()
    assert formats_table() in page, ("docs/config.md's input formats table differs from "
                                     "`python -m skewless.input_formats`")


def test_an_option_added_to_a_formats_model_is_known_everywhere_the_config_and_docs_ask(monkeypatch):
    """One field on one model: the formats that take it, the error on another format, the dump's keys and the
    docs' table follow (the registry line names the model; nothing else lists a format's keys)."""
    entry = INPUT_FORMATS["parquet"]

    class WithBatchSize(entry.options):
        batch_rows: int = Field(default=1024, description="rows a read asks for at a time")

    monkeypatch.setitem(INPUT_FORMATS, "parquet", dataclasses.replace(entry, options=WithBatchSize))
    assert formats_taking("batch_rows") == ("parquet",)
    assert "`batch_rows` (1,024): rows a read asks for at a time" in formats_table()
    with pytest.raises(ValueError, match="input.batch_rows 8 needs input.format parquet, not csv"):
        parse_input(format="csv", paths=["a.csv"], header=True, batch_rows=8)
    assert "batch_rows" in load_config({"name": "t", "input": {"format": "synthetic", "rows": 3},
                                        "features": {"a": {"transform": "z_score"}},
                                        "output": {"dir": "o"}}).model_dump()["input"]
