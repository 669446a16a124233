"""Every command's output read at 80 columns (issue 42, item 5): no line is longer, a number is never cut, help
wraps at word boundaries.

Each command renders at COLUMNS=80 and at COLUMNS=250. Every number the wide rendering shows must be in the
narrow one, whole, as often (a table too wide splits its columns over tables, it does not cut `185,1…`). The
commands that run a job render once; their numbers are checked against the run's run.json. Help is checked
against its own source text: every word of each help text is shown whole, and a line break comes only where
the next word would not have fitted.
"""

import collections
import csv
import inspect
import io
import json
import re
import shutil

import pytest
import typer
import yaml
from rich.console import Console
from typer.testing import CliRunner

from example_job import example_config
from skewless.cli import app

WIDTH, WIDE = 80, 250
# a number as shown: digits with thousands commas, decimals, exponent; never part of a word
NUMBER = re.compile(r"(?<![\w.,])\d(?:[\d,]*\d)?(?:\.\d+)?(?:e[-+]?\d+)?(?!\w)")
ROOT = typer.main.get_command(app)


def render(args, width: int, allowed=(0, 1)) -> str:
    shown = CliRunner().invoke(app, [str(arg) for arg in args], env={"COLUMNS": str(width)}, terminal_width=width)
    assert shown.exit_code in allowed, (shown.exit_code, shown.output, shown.exception)
    return shown.output


def assert_fits(output: str) -> None:
    """No line past the 80th column but one word alone, longer than a line (a path: never broken); no `…`."""
    long = [line for line in output.splitlines() if len(line) > WIDTH and len(line.split()) > 1]
    assert not long, "\n".join(long)
    assert "…" not in output, output


def numbers(text: str) -> collections.Counter:
    return collections.Counter(NUMBER.findall(text))


def assert_same_numbers(wide: str, narrow: str) -> None:
    """`narrow` fits 80 columns and shows every number `wide` shows, whole, at least as often."""
    assert_fits(narrow)
    missing = numbers(wide) - numbers(narrow)
    assert not missing, f"numbers shown wide but not whole at 80 columns: {dict(missing)}\n{narrow}"


# ------------------------------------------------------------------------------------------ help of every command

def _paths(group=ROOT, path=()):
    yield path, group
    for name, command in group.commands.items():
        if hasattr(command, "commands"):
            yield from _paths(command, (*path, name))
        else:
            yield (*path, name), command


def _help_texts(command) -> list[str]:
    """What help shows of a command in words: each paragraph of its help, each parameter's help, the summary of
    each subcommand in a group's list, the epilog (the exit codes)."""
    texts = [paragraph for paragraph in inspect.cleandoc(command.help or "").split("\n\n")]
    texts += [param.help for param in command.params if getattr(param, "help", None)]
    texts += [" ".join(sub.help.split("\n\n")[0].split()) for sub in getattr(command, "commands", {}).values()]
    return [text for text in texts + [command.epilog or ""] if text.strip()]


def assert_wrapped_at_words(output: str, text: str) -> None:
    """`text`'s words appear in `output` in order, each whole, and a line breaks between two of them only where the
    second would have run past the last column (a break mid-sentence leaves room that a word would have taken)."""
    lines = [line.replace("│", " ").rstrip() for line in output.splitlines()]
    shown = [(word, number) for number, line in enumerate(lines) for word in line.split()]
    words = text.split()
    starts = [i for i in range(len(shown) - len(words) + 1)
              if [word for word, _ in shown[i:i + len(words)]] == words]
    assert starts, f"not shown whole, word by word: {text!r}\n{output}"
    placed = shown[starts[0]:starts[0] + len(words)]
    for (_, line), (word, next_line) in zip(placed, placed[1:]):
        if next_line != line:
            # click wraps help to the width less a margin of 2
            assert len(lines[line]) + 1 + len(word) > WIDTH - 2, f"broken early before {word!r}:\n{lines[line]}"


@pytest.mark.parametrize("path", [path for path, _ in _paths()], ids=lambda path: " ".join(path) or "skewless")
def test_help_fits_and_wraps_at_words(path):
    command = dict(_paths())[path]
    narrow = render([*path, "--help"], WIDTH)
    assert_fits(narrow)
    for text in _help_texts(command):
        assert_wrapped_at_words(narrow, text)


# ------------------------------------------------------------------------------------------ commands that show data

@pytest.fixture(scope="module")
def run_copy(example_run, tmp_path_factory):
    """A copy of the shared run: `report` re-renders its page and `apply` reads it."""
    return shutil.copytree(example_run.output_dir, tmp_path_factory.mktemp("columns") / "run")


@pytest.fixture(scope="module")
def csv_rows(tmp_path_factory):
    """A CSV of the example's columns with a few values a schema refuses, and its inferred schema."""
    folder = tmp_path_factory.mktemp("schema")
    path = folder / "rows.csv"
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["age", "workclass", "fnlwgt", "hours_per_week"])
        for i in range(300):
            writer.writerow([17 + i % 70, ["Private", "State-gov", "Local-gov"][i % 3], 12_285 + 4_729 * i, 40 + i % 9])
    narrow_schema = folder / "schema.pbtxt"
    render(["schema", "infer", path, "--header", "--output", narrow_schema], WIDE)
    with open(path, "a", newline="") as handle:
        csv.writer(handle).writerows([["forty", "Never-worked", "1,386,152", ""], ["", "Private", "x", "99"]])
    return path, narrow_schema


SHOWN = {
    "inspect": lambda f: ["inspect", f["run"]],
    "validate (skew)": lambda f: ["validate", f["run"]],
    "validate (drift)": lambda f: ["validate", f["run"], "--against", f["run"]],
    "report": lambda f: ["report", f["run"]],
    "schema infer": lambda f: ["schema", "infer", f["csv"], "--header"],
    "schema validate": lambda f: ["schema", "validate", f["csv"], "--header", "--schema", f["schema"]],
    "clean": lambda f: ["clean", f["run"]],
}


@pytest.mark.parametrize("name", SHOWN)
def test_numbers_are_whole_at_80_columns(name, run_copy, csv_rows):
    folders = {"run": run_copy, "csv": csv_rows[0], "schema": csv_rows[1]}
    wide = render(SHOWN[name](folders), WIDE)
    assert numbers(wide) or name in ("report", "clean"), wide  # the case shows numbers (those two print paths)
    assert_same_numbers(wide, render(SHOWN[name](folders), WIDTH))


def test_verify_tables_keep_numbers_whole(example_run):
    """verify's result (one check, a few seconds a run) as the command prints it, at both widths."""
    from skewless.console.verify_tables import print_result
    from skewless.pipelines.commands.verify import verify

    result = verify(example_run.output_dir, sample=40)
    wide, narrow = (Console(file=io.StringIO(), width=width) for width in (WIDE, WIDTH))
    for console in (wide, narrow):
        print_result(result, console)
    assert numbers(wide.file.getvalue())
    assert_same_numbers(wide.file.getvalue(), narrow.file.getvalue())


# ------------------------------------------------------------------------------------------ commands that run a job

def _summary_numbers(run_dir) -> list[str]:
    """The rows run.json records, as a summary shows them: read, each split written, quarantined."""
    with open(run_dir / "run.json") as handle:
        rows = json.load(handle)["rows"]
    return [f"{n:,}" for n in (rows["read"], *rows["written"].values(), rows["quarantined"])]


def test_run_and_apply_fit_80_columns(run_copy, tmp_path):
    config = tmp_path / "job.yaml"
    config.write_text(yaml.safe_dump(example_config(tmp_path / "out")))
    ran = render(["run", config], WIDTH, allowed=(0,))
    applied = render(["apply", run_copy, "--output", tmp_path / "applied"], WIDTH, allowed=(0,))
    for output, run_dir in ((ran, tmp_path / "out"), (applied, tmp_path / "applied")):
        assert_fits(output)
        for number in _summary_numbers(run_dir):
            assert number in NUMBER.findall(output), (number, output)


def test_export_and_predict_fit_80_columns(example_run, tmp_path):
    import keras

    from scoring_data import write_scoring_csv
    from skewless.layers import model_inputs

    inputs, encoded = model_inputs(example_run.output_dir)
    keras.Model(inputs, keras.layers.Dense(1, activation="sigmoid")(encoded)).save(tmp_path / "model.keras")
    exported = render(["export", example_run.output_dir, "--model", tmp_path / "model.keras", "--output",
                       tmp_path / "export"], WIDTH, allowed=(0,))
    assert_fits(exported)
    rows = write_scoring_csv(tmp_path / "score.csv", 120)
    predicted = render(["predict", tmp_path / "export", "--input", tmp_path / "score.csv", "--output",
                        tmp_path / "predicted"], WIDTH, allowed=(0,))
    assert_fits(predicted)
    assert f"{len(rows):,}" in NUMBER.findall(predicted), predicted  # the good rows, predicted
