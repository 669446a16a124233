"""The run directory as one typed thing: run.json is a `RunSummary` every reader and writer shares, and the
names of the run's parts (and the file-name templates of its shards, unit files, quarantine and progress) are
spelled in `skewless.run_directory` only."""

import ast
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from project_modules import lazily_imported
from run_output import minimal_summary
from skewless.cli import app
from skewless.errors import InputError
from skewless.report import render_report
from skewless.run_directory import CONFIG_FILE, GRAPH_DIR, PROGRESS_DIR, RUN_FILE, RunDirectory
from skewless.run_summary import SCHEMA_VERSION, UNVERSIONED, RunSummary

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("skewless", "pipelines", "layers", "schemas")


def test_the_job_writes_run_json_as_a_run_summary_that_round_trips(example_run):
    run = RunDirectory(example_run.output_dir)
    written = Path(run.summary_file).read_bytes()
    summary = run.read_summary()
    # every key of the file is a field (the model refuses unknown keys) and nothing is lost on the way back
    assert summary.to_json() == written
    assert summary.schema_version == SCHEMA_VERSION
    # the typed numbers are the run's: shard rows add up to the rows written, and the shards exist
    for split, shards in summary.shards.items():
        assert sum(shard.rows for shard in shards) == summary.rows.written[split]
        for shard in shards:
            assert Path(run.shard_file(shard.path)).stat().st_size == shard.bytes
    assert summary.transformed_rows + summary.rows.quarantined == summary.rows.read
    assert summary.label_column == example_run_label(run)


def example_run_label(run: RunDirectory) -> str | None:
    return (run.read_config().get("label") or {}).get("column")


def test_a_run_json_without_schema_version_still_reads(example_run, tmp_path):
    run_dir = Path(shutil.copytree(example_run.output_dir, tmp_path / "old"))
    old = json.loads((run_dir / RUN_FILE).read_text())
    del old["schema_version"]
    (run_dir / RUN_FILE).write_text(json.dumps(old))
    summary = RunDirectory(str(run_dir)).read_summary()
    assert summary.schema_version == UNVERSIONED
    assert {key: value for key, value in json.loads(summary.to_json()).items() if key != "schema_version"} == old
    assert Path(render_report(run_dir)).stat().st_size > 0


@pytest.mark.parametrize("change, named", [
    (lambda summary: summary.update(schema_version=SCHEMA_VERSION + 1), "newer than this skewless reads"),
    (lambda summary: summary.update(surprise=1), "surprise"),
    (lambda summary: summary["rows"].pop("read"), "rows.read"),
])
def test_a_run_json_skewless_cannot_read_is_one_line_naming_it(example_run, tmp_path, change, named):
    run_dir = Path(shutil.copytree(example_run.output_dir, tmp_path / "run"))
    summary = json.loads((run_dir / RUN_FILE).read_text())
    change(summary)
    (run_dir / RUN_FILE).write_text(json.dumps(summary))
    with pytest.raises(InputError) as error:
        RunDirectory(str(run_dir)).read_summary()
    assert str(error.value).startswith(f"{run_dir / RUN_FILE}: ") and named in str(error.value)
    shown = CliRunner().invoke(app, ["report", str(run_dir)])
    assert shown.exit_code == 2 and shown.output.count("\n") == 1 and named in shown.output, shown.output


def test_a_summary_built_in_code_equals_its_json():
    summary = RunSummary.from_json(json.dumps(minimal_summary()), "test")
    assert RunSummary.from_json(summary.to_json(), "again") == summary
    assert summary.schema_version == SCHEMA_VERSION


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the string constants that are docstrings (prose may name the files), or the module a
    `lazy_import("M")` names (skewless.layers.transform_graph is a module, not the run's graph folder)."""
    found = {id(node.args[0]) for node in ast.walk(tree) if lazily_imported(node) is not None}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


PARTS = (GRAPH_DIR, RUN_FILE, CONFIG_FILE, PROGRESS_DIR)
# pieces a second copy of a file-name template (an f-string or a format string) would have to spell
TEMPLATE_PIECES = ("-of-", "unit-", "rows-", "Split-")


def _templates(tree: ast.AST) -> set[int]:
    """The ids of the string constants that are pieces of f-strings."""
    return {id(part) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for part in node.values}


def _spells(node: ast.Constant, in_template: bool) -> bool:
    if any(name in node.value for name in PARTS):
        return True
    # in an f-string a piece ends where a field starts ("unit-{unit:05d}"); prose ("out-of-vocabulary") does not
    pieces = [node.value] if in_template else node.value.split("{")[:-1]
    return any(text.endswith(piece) for text in pieces for piece in TEMPLATE_PIECES)


def test_only_the_run_directory_module_spells_the_run_s_parts():
    owner = ROOT / "skewless" / "run_directory.py"
    spelled = []
    for folder in SOURCES:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path == owner:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            docstrings, templates = _docstrings(tree), _templates(tree)
            for node in ast.walk(tree):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                    if _spells(node, id(node) in templates):
                        spelled.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}")
    assert not spelled, "name the run's parts through skewless.run_directory:\n" + "\n".join(spelled)
    # the check looks for the names the module really gives
    assert all(name in owner.read_text() for name in PARTS + TEMPLATE_PIECES)
