"""The output-format registry (skewless/output_formats.py) against what writes and reads it: a format is one module
and one registry line, so no module outside those compares a value to a format's name, every line names a module
with a `FORMAT`, the config reference's table is the registry's, and predict's formats each have an encoder."""

import ast

from example_job import REPO
from project_modules import MODULES, module_names

from skewless.output_formats import OUTPUT_FORMATS, PREDICTION_FORMATS, formats_table

# the registry, the formats' base class and each format's module may name output formats; nothing else compares one
OWNERS = {"skewless.output_formats", "skewless.pipelines.write.format",
          *(entry.module for entry in OUTPUT_FORMATS.values())}


def _constants(node: ast.AST) -> set[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return set().union(*(_constants(item) for item in node.elts)) if node.elts else set()
    return set()


def _branches_on_output(named: set[str], text: str) -> bool:
    # input.record's values are the same words as two output formats (a tfrecord input's option, not an output);
    # predict's formats are named as input formats are: about outputs when the other side says so
    return bool(named & set(OUTPUT_FORMATS) and "record" not in text or named & set(PREDICTION_FORMATS)
                and "output" in text)


def output_format_branches(source: str, filename: str = "<source>") -> list[str]:
    """`config.output.format == "sequence_example"`, `output_format in ("csv", ...)` and the like, as "line: text"."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Compare):
            text = ast.get_source_segment(source, node) or ""
            named = set().union(*(_constants(operand) for operand in (node.left, *node.comparators)))
            if _branches_on_output(named, text):
                found.append((node.lineno, f"{node.lineno}: {text}"))
        elif isinstance(node, ast.Match):
            subject = ast.get_source_segment(source, node.subject) or ""
            for case in node.cases:
                named = _constants(getattr(case.pattern, "value", None))
                if _branches_on_output(named, subject + " output"):
                    pattern = ast.get_source_segment(source, case.pattern)
                    found.append((case.pattern.lineno, f"{case.pattern.lineno}: match {subject}: case {pattern}"))
    return [text for _, text in sorted(found)]


def test_the_rule_finds_an_output_format_branch():
    source = ('if config.output.format == "sequence_example":\n    pass\n'
              'binary = fmt in ("example", "other")\n'
              'if output_format == "parquet":\n    pass\n'
              'fine = input_config.record == "sequence_example"\n'
              'input_side = config.format == "csv"\n'
              'match spec.output_format:\n    case "example":\n        pass\n')
    assert output_format_branches(source) == ['1: config.output.format == "sequence_example"',
                                              '3: fmt in ("example", "other")', '4: output_format == "parquet"',
                                              '9: match spec.output_format: case "example"']


def test_no_module_outside_the_registry_branches_on_an_output_format():
    found = []
    for module, path in sorted(MODULES.items()):
        if module not in OWNERS:
            found += [f"{path.relative_to(REPO)}:{branch}"
                      for branch in output_format_branches(path.read_text(), str(path))]
    assert not found, ("output-format branches outside skewless/output_formats.py and the format modules "
                       "(ask `output_format(name)`'s FORMAT instead):\n" + "\n".join(found))


def test_every_registry_line_names_a_module_with_a_format_object():
    for entry in OUTPUT_FORMATS.values():
        assert entry.module in MODULES, entry
        assert "FORMAT" in module_names(entry.module), f"{entry.module} defines no FORMAT"


def test_the_config_reference_holds_the_registrys_formats_table():
    page = (REPO / "docs" / "config.md").read_text()
    assert formats_table() in page, ("docs/config.md's output formats table differs from "
                                     "`python -m skewless.output_formats`")


def test_every_prediction_format_has_an_encoder():
    from skewless.pipelines.write.prediction_files import ENCODERS

    assert set(ENCODERS) == set(PREDICTION_FORMATS)


def test_the_registry_imports_nothing_heavy():
    # the config and the CLI read it: it must not load TensorFlow, Beam or the format modules it names
    tree = ast.parse(MODULES["skewless.output_formats"].read_text())
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported <= {"__future__", "dataclasses", "importlib"}, imported
