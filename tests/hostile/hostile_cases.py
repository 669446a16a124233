"""Hostile and careless input as data (issue 29): each case makes its input in a fresh folder, names the command,
and says what must come out: the exit code, a fragment of the one line on stderr, and what must hold after.

`test_hostile.py` runs every case the same way and checks, besides the case's own expectations, that nothing was
written outside what the case allows (`writes`: paths relative to the case's folder), that no staging folder was
left, and that an error is one line (`skewless: error: ...`, or `skewless: interrupted`).

`item` names the item of issue 29 a case proves (it failed before the fix); `run` cases get a copy of the example
run (tests/conftest.py) to damage; `process` cases run `python -m skewless` in a subprocess, where what only a real
process shows (TensorFlow's start-up lines, signals, pipes) can be seen.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import yaml

from example_job import example_config

# A small job: 300 synthetic rows, one split, one shard (tests/end_to_end/test_output_safety.py's)
SMALL = {
    "input": {"format": "synthetic", "rows": 300, "seed": 1},
    "features": {"age": {"transform": "z_score"}, "workclass": {"transform": "vocabulary"}},
    "output": {"splits": {"train": 1.0}, "shards": 1},
}


@dataclass(frozen=True)
class Case:
    name: str
    make: Callable[[Path], list]  # makes the input in the folder; returns the command's arguments
    code: int
    line: str | None  # a fragment of the one stderr line; None: nothing on stderr
    item: int | None = None  # the item of `issue` it proves (it failed before the fix)
    issue: int = 29
    run: bool = False  # the folder holds a copy of the example run as run/
    process: bool = False  # run `python -m skewless` in a subprocess (`drive` may steer it)
    drive: Callable | None = None  # process cases: (Popen, folder) -> (stdout, stderr), instead of waiting
    writes: tuple[str, ...] = ()  # what the command may create, change or remove (relative to the folder)
    after: Callable[[Path], None] | None = None  # what must hold afterwards
    printed: Callable[[str], None] | None = None  # what must hold of what the command printed (stdout + stderr)
    slow: bool = False


# ---------------------------------------------------------------------------------------------------------- helpers

def small_config(folder: Path, **changes) -> dict:
    return example_config(folder / "out", **{**SMALL, **changes})


def write(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data)
    return path


def config_file(folder: Path, text: str | bytes) -> list:
    return ["run", str(write(folder / "job.yaml", text))]


def job(folder: Path, config: dict | None = None, *extra: str) -> list:
    """`skewless run` of a config (the small job's unless given), written as YAML in the folder."""
    path = write(folder / "job.yaml", yaml.safe_dump(config or small_config(folder), sort_keys=False))
    return ["run", str(path), *extra]


def output_is_input(folder: Path) -> list:
    """A CSV job whose output.dir names its own input file."""
    rows = write(folder / "rows.csv", "age\n" + "".join(f"{20 + i}\n" for i in range(30)))
    config = small_config(folder, input={"format": "csv", "paths": [str(rows)], "header": True},
                          features={"age": {"transform": "z_score"}}, label=None)
    config["output"]["dir"] = str(rows)
    return job(folder, config)


def every_row_bad(folder: Path) -> list:
    """A CSV job whose every row fails its feature's type (text in a z_score column)."""
    rows = write(folder / "rows.csv", "age\n" + "".join(f"x{i}\n" for i in range(30)))
    return job(folder, small_config(folder, input={"format": "csv", "paths": [str(rows)], "header": True},
                                    features={"age": {"transform": "z_score"}}, label=None))


def progress_ends_failed(text: str) -> None:
    """The job's last progress line says it failed (it said "done" before the refusal of what the pass found)."""
    lines = [line for line in text.splitlines() if line.startswith("skewless run ")]
    assert lines and ": failed" in lines[-1] and all(": done" not in line for line in lines), text[-2000:]


def with_yaml(folder: Path, tail: str) -> list:
    """The small job's config with `tail` appended to its YAML text."""
    text = yaml.safe_dump(small_config(folder), sort_keys=False)
    return config_file(folder, text + tail)


def changed(folder: Path, section: str, **values) -> list:
    config = small_config(folder)
    config[section] = {**config.get(section, {}), **values} if isinstance(config.get(section), dict) else values
    return job(folder, config)


def billion_laughs(levels: int = 9) -> str:
    lines = ['l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, levels + 1):
        lines.append(f"l{level}: &l{level} [" + ", ".join([f"*l{level - 1}"] * 10) + "]")
    return "\n".join(lines) + "\n"


def run_copy(folder: Path) -> Path:
    return folder / "run"


def damaged(damage: Callable[[Path], None], command: Callable[[Path], list]) -> Callable[[Path], list]:
    def make(folder):
        damage(run_copy(folder))
        return command(folder)
    return make


def set_summary(**fields) -> Callable[[Path], None]:
    def damage(run):
        summary = json.loads((run / "run.json").read_text())
        summary.update(fields)
        (run / "run.json").write_text(json.dumps(summary))
    return damage


def replace_file(name: str, data) -> Callable[[Path], None]:
    def damage(run):
        path = run / name
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()
        if data is not None:
            write(path, data)
    return damage


def truncate(name: str) -> Callable[[Path], None]:
    def damage(run):
        data = (run / name).read_bytes()
        (run / name).write_bytes(data[: len(data) // 2])
    return damage


def remove(name: str) -> Callable[[Path], None]:
    def damage(run):
        path = run / name
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    return damage


def run_json_a_folder(run: Path) -> None:
    (run / "run.json").unlink()
    (run / "run.json").mkdir()
    (run / "run.json" / "x").write_text("{}")


def tree(folder: Path) -> dict[str, bytes | None]:
    """Every path under `folder` with a file's bytes (None for a folder or link)."""
    found = {}
    for path in sorted(folder.rglob("*")):
        key = str(path.relative_to(folder))
        found[key] = path.read_bytes() if path.is_file() and not path.is_symlink() else None
    return found


def unchanged(name: str) -> Callable[[Path], None]:
    """An invariant: `name` (relative to the folder) holds what it held before the command (`before/` copy)."""
    def check(folder):
        assert tree(folder / name) == tree(folder / ".before" / name), f"{name} changed"
    return check


def keep(name: str, make: Callable[[Path], list]) -> Callable[[Path], list]:
    """Makes the input, then copies `name` aside so that `unchanged(name)` can compare."""
    def made(folder):
        args = make(folder)
        source = folder / name
        target = folder / ".before" / name
        if source.is_dir() and not source.is_symlink():
            shutil.copytree(source, target, symlinks=True)
        elif source.exists() or source.is_symlink():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target, follow_symlinks=False)
        return args
    return made


def gone(name: str) -> Callable[[Path], None]:
    def check(folder):
        assert not os.path.lexists(folder / name), f"{name} is still there"
    return check


# ---------------------------------------------------------------------------------------- hostile and careless YAML

YAML_CASES = [
    Case("yaml: billion laughs", lambda f: config_file(f, billion_laughs()), 2, "an alias bomb", item=1),
    Case("yaml: billion laughs in --set", lambda f: job(f, None, "--set", "runner.options={" + ", ".join(
        f"k{i}: " + ("&a [x, x, x, x, x, x, x, x, x, x]" if i == 0 else "&a" + str(i) + " [" + ", ".join(
            ["*a" if i == 1 else f"*a{i - 1}"] * 10) + "]") for i in range(8)) + "}"), 2, "alias bomb"),
    Case("yaml: alias inside the node it names", lambda f: with_yaml(f, "extra: &x [1, *x]\n"), 2, "(a cycle)"),
    Case("yaml: 100,000 nested flow lists", lambda f: config_file(f, "name: " + "[" * 100_000 + "]" * 100_000),
         2, "nested more than 64 levels"),
    Case("yaml: 500 nested mappings", lambda f: config_file(f, "".join("  " * i + "k:\n" for i in range(500))),
         2, "nested more than 64 levels"),
    Case("yaml: deep nesting through aliases", lambda f: config_file(
        f, "a: &a " + "[" * 40 + "1" + "]" * 40 + "\nb: [" + "[" * 30 + "*a" + "]" * 30 + "]\n"),
        2, "nested more than 64 levels"),
    Case("yaml: 2 MiB of comments", lambda f: config_file(f, "# padding\n" * 220_000), 2, "at most 1 MiB"),
    Case("yaml: /dev/zero as the config", lambda f: ["run", "/dev/zero"], 2, "/dev/zero: more than"),
    Case("yaml: 200,000 values in one list", lambda f: with_yaml(f, "extra: [" + "1," * 200_000 + "]\n"),
         2, "more than 100,000 values"),
    Case("yaml: a key given twice at the top", lambda f: with_yaml(f, "name: again\n"), 2, "name: key given twice"),
    Case("yaml: a feature option given twice", lambda f: config_file(
        f, "name: t\ninput: {format: synthetic, rows: 10}\nfeatures:\n  age:\n    transform: z_score\n"
           "    transform: vocabulary\noutput: {dir: out}\n"), 2, "features.age.transform: key given twice"),
    Case("yaml: the root is a list", lambda f: config_file(f, "- a\n- b\n"), 2, "must be a mapping"),
    Case("yaml: the root is a number", lambda f: config_file(f, "42\n"), 2, "must be a mapping"),
    Case("yaml: an empty file", lambda f: config_file(f, ""), 2, "must be a mapping"),
    Case("yaml: only comments", lambda f: config_file(f, "# nothing\n"), 2, "must be a mapping"),
    Case("yaml: random bytes", lambda f: config_file(f, bytes(range(256)) * 4), 2, "not UTF-8"),
    Case("yaml: NUL bytes", lambda f: config_file(f, "name: a\x00b\n"), 2, "invalid YAML"),
    Case("yaml: UTF-16 text", lambda f: config_file(f, "name: t\n".encode("utf-16")), 2, "not UTF-8"),
    Case("yaml: Latin-1 text", lambda f: config_file(f, "name: caf\xe9\n".encode("latin-1")), 2, "not UTF-8"),
    Case("yaml: python/object/apply tag", lambda f: with_yaml(f, "x: !!python/object/apply:os.system ['true']\n"),
         2, "invalid YAML"),
    Case("yaml: python/name tag", lambda f: with_yaml(f, "x: !!python/name:os.system\n"), 2, "invalid YAML"),
    Case("yaml: an unknown local tag", lambda f: with_yaml(f, "x: !secret value\n"), 2, "invalid YAML"),
    Case("yaml: two documents", lambda f: with_yaml(f, "---\nname: second\n"), 2, "invalid YAML"),
    Case("yaml: a tab for indentation", lambda f: config_file(f, "name: t\ninput:\n\tformat: csv\n"), 2,
         "invalid YAML"),
    Case("yaml: unclosed flow list", lambda f: config_file(f, "name: [a, b\n"), 2, "invalid YAML"),
    Case("yaml: an undefined alias", lambda f: with_yaml(f, "x: *nowhere\n"), 2, "invalid YAML"),
    Case("yaml: a list as a key", lambda f: with_yaml(f, "? [a, b]\n: 1\n"), 2, "invalid YAML"),
    Case("yaml: the config is a folder", lambda f: ["run", str(f)], 2, "cannot read config"),
    Case("yaml: no such config", lambda f: ["run", str(f / "none.yaml")], 2, "config file not found"),
    Case("config: an unknown key", lambda f: with_yaml(f, "extra: 1\n"), 2, "extra: unknown key"),
    Case("config: rows is negative", lambda f: changed(f, "input", rows=-1), 2, "input.rows"),
    Case("config: a seed of 1.0e+400 (infinite)", lambda f: config_file(
        f, yaml.safe_dump(small_config(f), sort_keys=False).replace("seed: 1", "seed: 1.0e+400")), 2,
        "input.seed: Input should be a finite number"),
    Case("config: a split fraction is NaN", lambda f: changed(f, "output", splits={"train": float("nan")}), 2,
         "fractions must be > 0"),
    Case("config: a split fraction is infinite", lambda f: changed(f, "output", splits={"train": float("inf")}),
         2, "sum to inf"),
    Case("config: a split named ../x", lambda f: changed(f, "output", splits={"../x": 1.0}), 2,
         "must be a plain identifier"),
    Case("config: zero shards", lambda f: changed(f, "output", shards=0), 2, "output.shards"),
    Case("config: a delimiter of two characters", lambda f: job(f, small_config(
        f, input={"format": "csv", "paths": ["a.csv"], "header": True, "delimiter": ";;"})), 2,
        "input.delimiter must be one character"),
    Case("config: max_bad_fraction 2", lambda f: changed(f, "output", max_bad_fraction=2), 2,
         "output.max_bad_fraction"),
    Case("config: a feature key with a newline", lambda f: job(f, small_config(
        f, features={"a\nb": {"transform": "zz"}})), 2, "features.a\\nb.transform: unknown value"),
    Case("config: a 10,000-character feature name", lambda f: job(f, small_config(
        f, features={"x" * 10_000: {"transform": "nope"}})), 2, "unknown value 'nope'"),
    Case("config: the label is also a feature", lambda f: job(f, small_config(
        f, label={"column": "age"})), 2, "is the label; it cannot also be a feature"),
    Case("config: preprocessing_fn without a function", lambda f: job(f, small_config(
        f, features={}, preprocessing_fn="os")), 2, "preprocessing_fn must be 'module.path:function'"),
    Case("config: --set without =", lambda f: job(f, None, "--set", "output.shards"), 2, "expected key.path=value"),
    Case("config: --set into a value", lambda f: job(f, None, "--set", "name.x=1"), 2, "name is not a mapping"),
    Case("config: --set with a 100-deep value", lambda f: job(f, None, "--set", "runner.options=" + "[" * 100),
         2, "nested more than 64 levels"),
]


# ----------------------------------------------------------------------------------------------- the Beam runner

RUNNER_CASES = [
    Case("runner: a dotted name that is no runner (os.system)", lambda f: changed(f, "runner", name="os.system"), 2,
         "runner os.system: not a Beam PipelineRunner subclass", item=6),
    Case("runner: a dotted name that is a class but no runner", lambda f: changed(
        f, "runner", name="collections.OrderedDict"), 2, "not a Beam PipelineRunner subclass", item=6),
    Case("runner: a dotted name that does not import", lambda f: changed(f, "runner", name="no_such_mod.Runner"),
         2, "runner no_such_mod.Runner: cannot import it"),
    Case("runner: an unknown name", lambda f: changed(f, "runner", name="Bogus"), 2,
         "runner 'Bogus': not a Beam runner"),
    Case("runner: an unknown name after --", lambda f: job(f, None, "--", "--runner=Nope"), 2,
         "runner 'Nope': not a Beam runner"),
    Case("runner: Beam's legacy direct runner", lambda f: job(f, None, "--", "--runner=BundleBasedDirectRunner"), 2,
         "runner BundleBasedDirectRunner: Beam's legacy direct runner drops a step's tagged outputs"),
]


# --------------------------------------------------------------------------------- damaged and foreign run folders

def _command(name: str) -> Callable[[Path], list]:
    return {
        "inspect": lambda f: ["inspect", str(run_copy(f))],
        "report": lambda f: ["report", str(run_copy(f))],
        "validate": lambda f: ["validate", str(run_copy(f))],
        "apply": lambda f: ["apply", str(run_copy(f)), "--output", str(f / "applied")],
    }[name]


DAMAGES = {
    "run.json missing": (remove("run.json"), "run.json: not found"),
    "run.json not JSON": (replace_file("run.json", "{not json"), "cannot read run summary"),
    "run.json empty": (replace_file("run.json", ""), "cannot read run summary"),
    "run.json a list": (replace_file("run.json", "[1, 2]"), "not a JSON object"),
    "run.json truncated": (truncate("run.json"), "cannot read run summary"),
    "run.json schema_version 99": (set_summary(schema_version=99), "schema_version 99 is newer"),
    "run.json schema_version '99'": (set_summary(schema_version="99"), 'schema_version "99" is not a whole number'),
    "run.json schema_version -1": (set_summary(schema_version=-1), "schema_version -1 is not a whole number"),
    "run.json schema_version true": (set_summary(schema_version=True), "schema_version true is not a whole number"),
    "run.json someone else's JSON": (replace_file("run.json", '{"hello": "world"}'), "not a skewless run summary"),
    "run.json nested 100,000 deep": (replace_file("run.json", "[" * 100_000 + "]" * 100_000), "nested too deeply"),
    "run.json a folder": (run_json_a_folder, "run.json"),
}
# what each command's message looks like where it differs (apply reads the run's config before its summary)
RUN_COMMANDS = ("inspect", "report", "validate")

RUN_CASES = [
    Case(f"{command}: {damage}", damaged(DAMAGES[damage][0], _command(command)), 2, DAMAGES[damage][1],
         run=True, writes=("run",),
         item=3 if command == "validate" and damage in ("run.json schema_version 99", "run.json missing",
                                                        "run.json not JSON") else None)
    for command in RUN_COMMANDS for damage in DAMAGES
] + [
    Case("validate: --against a run of a newer skewless", lambda f: (
        shutil.copytree(run_copy(f), f / "other"), set_summary(schema_version=7)(run_copy(f)),
        ["validate", str(f / "other"), "--against", str(run_copy(f))])[-1], 2, "schema_version 7 is newer", item=3,
        run=True, writes=("run", "other")),
    Case("inspect: the run folder is a file", lambda f: ["inspect", str(write(f / "afile", "x"))], 2, "afile"),
    Case("inspect: no such run", lambda f: ["inspect", str(f / "nothing")], 2, "nothing"),
    Case("validate: no such run", lambda f: ["validate", str(f / "nothing")], 2, "no statistics"),
    Case("report: run.json schema_version 99 names it", damaged(set_summary(schema_version=99), _command("report")),
         2, "upgrade skewless", run=True, writes=("run",)),
    Case("validate: statistics deleted", damaged(remove("statistics"), _command("validate")), 2,
         "no statistics/Split-*/FeatureStats.pb", run=True, writes=("run",)),
    Case("validate: a FeatureStats.pb of garbage", damaged(
        replace_file("statistics/Split-train/FeatureStats.pb", b"\xff" * 64), _command("validate")), 2,
        "FeatureStats.pb", run=True, writes=("run",)),
    Case("validate: --threshold not a number", lambda f: ["validate", str(run_copy(f)), "--threshold", "abc"], 2,
         "abc", run=True, writes=("run",)),
    Case("inspect: a vocabulary file deleted", damaged(
        remove("transform_graph/transform_fn/assets"), _command("inspect")), 2, "vocabulary file", run=True,
        writes=("run",)),
    Case("report: config.yaml a list", damaged(replace_file("config.yaml", "- a\n"), _command("report")), 0, None,
         run=True, writes=("run",)),
    Case("apply: config.yaml missing", damaged(remove("config.yaml"), _command("apply")), 2,
         "not a run directory of `skewless run`", run=True, writes=("run",)),
    Case("apply: run.json of a newer skewless", damaged(set_summary(schema_version=5), _command("apply")), 2,
         "schema_version 5 is newer", run=True, writes=("run",)),
    # verify: a damaged run is an input error in one line, not a table of checks that could not run
    Case("verify: run.json not JSON", damaged(replace_file("run.json", "{not json"), lambda f: [
        "verify", str(run_copy(f)), "--sample", "5"]), 2, "run.json: cannot read run summary", item=4, run=True,
        writes=("run",)),
    Case("verify: run.json schema_version 99", damaged(set_summary(schema_version=99), lambda f: [
        "verify", str(run_copy(f)), "--sample", "5"]), 2, "schema_version 99 is newer", item=4, run=True,
        writes=("run",)),
    Case("verify: saved_model.pb truncated", damaged(truncate("transform_graph/transform_fn/saved_model.pb"),
                                                     lambda f: ["verify", str(run_copy(f)), "--sample", "5"]),
         2, "cannot load the run's transform graph", item=4, run=True, writes=("run",)),
    Case("verify: the graph deleted", damaged(remove("transform_graph"), lambda f: [
        "verify", str(run_copy(f)), "--sample", "5"]), 2, "transform graph is missing", run=True, writes=("run",)),
]


# ------------------------------------------------------------------------------------------ --overwrite and outputs

def over(make_output: Callable[[Path], None]) -> Callable[[Path], list]:
    def make(folder):
        make_output(folder / "out")
        return job(folder, None, "--overwrite")
    return keep("out", make)


def folder_with(**contents) -> Callable[[Path], None]:
    def make(out):
        out.mkdir()
        for name, data in contents.items():
            write(out / name.replace("__", "/"), data)
    return make


def run_json_folder(out: Path) -> None:
    (out / "run.json").mkdir(parents=True)
    write(out / "thesis.tex", "precious")


def link_to_run(name: str) -> Callable[[Path], None]:
    def make(out):
        out.mkdir()
        (out / "run.json").symlink_to(out.parent / "run" / name)
    return make


OVERWRITE_CASES = [
    Case("--overwrite: a folder whose run.json is someone's JSON", over(folder_with(
        **{"run.json": '{"name": "my notes"}', "thesis.tex": "precious"})), 2, "not a skewless run summary",
        item=2, after=unchanged("out")),
    Case("--overwrite: a folder whose run.json is a folder", over(run_json_folder), 2, "its run.json is a folder",
         item=2, after=unchanged("out")),
    Case("--overwrite: a folder whose run.json is empty", over(folder_with(**{"run.json": "", "a.txt": "x"})), 2,
         "cannot read run summary", item=2, after=unchanged("out")),
    Case("--overwrite: a folder whose run.json is a JSON list", over(folder_with(**{"run.json": "[]"})), 2,
         "not a JSON object", item=2, after=unchanged("out")),
    Case("--overwrite: a run of a newer skewless", over(lambda out: (shutil.copytree(out.parent / "run", out),
                                                                     set_summary(schema_version=9)(out))), 2,
         "schema_version 9 is newer", item=2, run=True, writes=("run",), after=unchanged("out")),
    Case("--overwrite: run.json a link to a real run's", over(link_to_run("run.json")), 2, "its run.json is a link",
         run=True, writes=("run",), after=unchanged("out")),
    Case("--overwrite: a plain file", over(lambda out: write(out, "precious")), 2, "is a file, not a skewless run",
         after=unchanged("out")),
    Case("--overwrite: a link to a folder", over(lambda out: (write(out.parent / "mine" / "a.txt", "x"),
                                                              out.symlink_to(out.parent / "mine"))), 2,
         "is a file, not a skewless run", after=unchanged("out")),
    Case("--overwrite: a folder without run.json", over(folder_with(**{"photos__a.jpg": b"\xff\xd8"})), 2,
         "no run.json; holds photos", after=unchanged("out")),
    Case("no --overwrite: an existing folder", keep("out", lambda f: (folder_with(**{"a": "b"})(f / "out"),
                                                                      job(f))[-1]), 2,
         "a folder that is not a skewless output (no run.json); write the output elsewhere", after=unchanged("out")),
    Case("no --overwrite: a previous run", keep("out", lambda f: (shutil.copytree(run_copy(f), f / "out"),
                                                                  job(f))[-1]), 2,
         "output directory exists (pass --overwrite to replace it)", run=True, after=unchanged("out")),
    Case("every row quarantined: the progress ends 'failed', nothing written", every_row_bad, 2,
         "30 of 30 rows (100.0%) failed to decode or validate", printed=progress_ends_failed),
    Case("no --overwrite: the output is the input CSV", lambda f: output_is_input(f), 2,
         "exists and is a file or a link, not a folder; write the output elsewhere", after=unchanged("rows.csv")),
]


# ---------------------------------------------------------------------------------- staging leftovers, `clean`

def staged(make_leftover: Callable[[Path], None], command: Callable[[Path], list] = job) -> Callable[[Path], list]:
    def make(folder):
        make_leftover(folder / "out.staging")
        return command(folder)
    return keep("out.staging", make)


def owned_by(pid: int) -> Callable[[Path], None]:
    def make(claim):
        write(claim / "owner", str(pid))
        write(claim / "run" / "data" / "half.tfrecord.gz", b"x")
    return make


def clean(folder: Path) -> list:
    return ["clean", str(folder / "out")]


STAGING_CASES = [
    Case("staging: a file where the run stages", staged(lambda claim: write(claim, "x")), 2,
         "move or delete it yourself", item=9, after=unchanged("out.staging")),
    Case("staging: a link where the run stages", staged(lambda claim: (
        write(claim.parent / "elsewhere" / "a", "x"), claim.symlink_to(claim.parent / "elsewhere"))), 2,
         "a link is where this output must be staged", after=unchanged("out.staging")),
    Case("staging: a folder without an owner", staged(lambda claim: write(claim / "mine.txt", "x")), 2,
         "a folder that no skewless run made", after=unchanged("out.staging")),
    Case("staging: an owner file of garbage", staged(lambda claim: write(claim / "owner", "pid?")), 2,
         "move or delete it yourself", after=unchanged("out.staging")),
    Case("staging: an owner file naming a live pid, written by hand", staged(owned_by(os.getppid())), 2,
         "move or delete it yourself", after=unchanged("out.staging")),
    Case("clean: never touches the output", keep("out", lambda f: (folder_with(**{"run.json": "{}"})(f / "out"),
                                                                   clean(f))[-1]), 0, None,
         after=unchanged("out")),
]
# the cases of claims made by real processes (a live run's, a killed run's): tests/hostile/cases_output_safety.py


# ------------------------------------------------------------------------------------------------ export, serving

def export(model: Callable[[Path], str]) -> Callable[[Path], list]:
    return lambda f: ["export", str(run_copy(f)), "--model", model(f), "--out", str(f / "exported")]


def zipped(names: dict) -> Callable[[Path], str]:
    def make(folder):
        with zipfile.ZipFile(folder / "model.keras", "w") as archive:
            for name, data in names.items():
                archive.writestr(name, data)
        return str(folder / "model.keras")
    return make


EXPORT_CASES = [
    Case("export: --model a text file", export(lambda f: str(write(f / "model.keras", "hello"))), 2,
         "not a Keras model file (neither a zip archive nor HDF5)", item=10, run=True, writes=("run",)),
    Case("export: --model a folder", export(lambda f: str((f / "m.keras").mkdir() or f / "m.keras")), 2,
         "not a Keras model file (a folder)", item=10, run=True, writes=("run",)),
    Case("export: --model an empty file", export(lambda f: str(write(f / "m.keras", b""))), 2, "an empty file",
         run=True, writes=("run",)),
    Case("export: --model a zip without config.json", export(zipped({"a.txt": "x"})), 2,
         "a zip archive without a Keras model's config.json", run=True, writes=("run",)),
    Case("export: --model the run's SavedModel", export(lambda f: str(run_copy(f) / "transform_graph" /
                                                                      "transform_fn")), 2,
         "a SavedModel: export takes the Keras model", run=True, writes=("run",)),
    Case("export: --model missing", export(lambda f: str(f / "none.keras")), 2, "model file not found", run=True,
         writes=("run",)),
    Case("export --overwrite: a folder that is no export", keep("exported", lambda f: (
        write(f / "exported" / "thesis.tex", "precious"),
        export(lambda g: str(write(g / "m.keras", "x")))(f) + ["--overwrite"])[-1]), 2,
        "is not an export of skewless", run=True, writes=("run",), after=unchanged("exported")),
    Case("predict: the export folder missing", lambda f: ["predict", str(f / "none"), "--input", "x.csv",
                                                          "--output", str(f / "p")], 2, "no such directory"),
    Case("predict: --format xml", lambda f: ["predict", str(f), "--input", "x.csv", "--output", str(f / "p"),
                                             "--format", "xml"], 2, "not one of csv, parquet, jsonl"),
]


# ------------------------------------------------------------------------------------------------- bad input data

def data_job(name: str, data: bytes, **input_options) -> Callable[[Path], list]:
    def make(folder):
        path = write(folder / name, data)
        options = {"format": "csv", "paths": [str(path)], "header": True, **input_options}
        config = small_config(folder, input=options, features={"a": {"transform": "z_score"}}, label=None)
        return job(folder, config)
    return make


def sql_job(url: str | Callable[[Path], str], setup: str | None = None, **input_options) -> Callable[[Path], list]:
    """A job reading `input.format: sql` at `url` (a function of the folder: a database made there, with the
    DuckDB statements `setup`), feature a a z_score."""
    def make(folder):
        address = url(folder) if callable(url) else url
        if setup is not None:
            import duckdb  # the sql extra; only these cases need it

            with duckdb.connect(address.removeprefix("duckdb://")) as connection:
                connection.execute(setup)
        options = {"format": "sql", "url": address, **input_options}
        config = small_config(folder, input=options, features={"a": {"transform": "z_score"}}, label=None)
        return job(folder, config)
    return make


def cached_sql(folder: Path) -> list:
    """A job over a DuckDB query with an analyzer cache: nothing says whether a database's rows changed, so a
    cache keyed on the query would hand a changed table's old statistics back."""
    config = small_config(folder, input={"format": "sql", "url": "duckdb://", "query": "SELECT 1.5 AS a"},
                          features={"a": {"transform": "z_score"}}, label=None, cache_dir=str(folder / "cache"))
    return job(folder, config)


def _database(folder: Path) -> str:
    return f"duckdb://{folder / 'rows.duckdb'}"


def odd_names(folder: Path) -> list:
    """A DuckDB table whose columns are named with a space, a double quote, a dot and non-ASCII letters."""
    import duckdb  # the sql extra; only this case needs it

    path = folder / "odd.duckdb"
    with duckdb.connect(str(path)) as connection:
        connection.execute('CREATE TABLE "my table" ("a b" INTEGER, "say ""hi""" VARCHAR, "x.y" DOUBLE, "ünï" VARCHAR)')
        connection.execute("INSERT INTO \"my table\" SELECT i, 'v' || (i % 3), i / 2, 'w' FROM range(40) t(i)")
    features = {"a b": {"transform": "z_score"}, 'say "hi"': {"transform": "vocabulary"},
                "x.y": {"transform": "scale_0_1"}, "ünï": {"transform": "vocabulary"}}
    config = small_config(folder, input={"format": "sql", "url": f"duckdb://{path}", "table": "my table",
                                         "order_by": ["a b"]}, features=features, label=None)
    return job(folder, config)


def huge_value(folder: Path) -> list:
    """A CSV whose string column holds one 5 MB value among 50 short ones."""
    rows = [b"%d,v%d" % (i, i % 3) for i in range(50)] + [b"50," + b"x" * 5_000_000]
    path = write(folder / "x.csv", b"a,s\n" + b"\n".join(rows) + b"\n")
    config = small_config(folder, input={"format": "csv", "paths": [str(path)], "header": True},
                          features={"a": {"transform": "z_score"}, "s": {"transform": "vocabulary"}}, label=None)
    return job(folder, config)


def kept_small(folder: Path) -> None:
    """run.json, report.html and the statistics stay small, the statistics keeping the long value cut with its
    length and digest (issue 29 item 5: run.json and the page held it whole, 52 MB and 157 MB for a 50 MB field)."""
    out = folder / "out"
    statistics = (out / "statistics" / "Split-train" / "FeatureStats.pb").read_bytes()
    assert len((out / "run.json").read_bytes()) < 100_000 and len((out / "report.html").read_bytes()) < 2_000_000
    assert len(statistics) < 100_000 and "… [5,000,000 bytes, sha256 ".encode() in statistics


def full_disk(folder: Path) -> list:
    """The small job writing to a 64 KiB tmpfs (mounted here; skipped where mounting is not allowed): its
    tf.Transform temp files alone fill it."""
    import subprocess

    import pytest

    disk = folder / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(disk)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.decode(errors='replace').strip()}")
    config = small_config(folder)
    config["output"]["dir"] = str(disk / "out")
    return job(folder, config)


def _half(data: bytes) -> bytes:
    return data[: len(data) // 2]


DATA_CASES = [
    Case("data: one 5 MB value in a string column", huge_value, 0, None, item=5, writes=("out",), after=kept_small),
    Case("disk: the output's disk fills up", full_disk, 2, "No space left on device", writes=("disk",), slow=True,
         after=lambda f: (gone("disk/out")(f), gone("disk/out.staging")(f))),
    Case("data: a glob matching nothing", lambda f: job(f, small_config(
        f, input={"format": "csv", "paths": [str(f / "none*.csv")], "header": True},
        features={"a": {"transform": "z_score"}}, label=None)), 2, "none*.csv"),
    Case("data: a CSV file that is a folder", lambda f: ((f / "d.csv").mkdir(), data_job("x.csv", b"a\n1\n")(f),
                                                          job(f, small_config(f, input={
                                                              "format": "csv", "paths": [str(f / "d.csv" / "*")],
                                                              "header": True}, features={"a": {"transform": "z_score"}},
                                                              label=None)))[-1], 2, "d.csv"),
    Case("data: a header without the feature's column", data_job("x.csv", b"b\n1\n2\n"), 2, "a"),
    Case("data: an empty CSV", data_job("x.csv", b""), 2, "x.csv"),
    Case("data: a .gz CSV cut short", data_job("x.csv.gz", _half(gzip.compress(b"a\n" + b"".join(
        b"%d\n" % (i * 7919 % 100_003) for i in range(5000))))), 2,
         "x.csv.gz"),
    Case("data: a Parquet file of text", data_job("x.parquet", b"a,b\n1,2\n", format="parquet", header=False), 2,
         "x.parquet"),
    Case("data: a TFRecord file of text", data_job("x.tfrecord", b"hello world, not records", format="tfrecord",
                                                   header=False), 2, "x.tfrecord"),
    Case("data: a JSON Lines file of bad lines", data_job("x.jsonl", b'{"a": 1,}\n[1]\n{"a": {"b": 2}}\n',
                                                          format="jsonl", header=False), 2, "x.jsonl"),
    Case("sql: a URL of no known database", sql_job("mysql://db.example/rows", query="SELECT 1 AS a"), 2,
         "expected a duckdb:// or postgresql:// URL"),
    Case("sql: a PostgreSQL server that does not answer",
         sql_job("postgresql://postgres:secret@127.0.0.1:9/rows", table="rows"), 2,
         "input.url postgresql://postgres@127.0.0.1:9/rows rows: cannot connect"),  # the password is not shown
    Case("sql: a query the engine refuses", sql_job("duckdb://", query="SELEC 1 AS a"), 2,
         "refuses the query"),
    Case("sql: a table that is not there", sql_job(_database, "CREATE TABLE other (a INTEGER)", table="rows"), 2,
         "refuses the query", writes=("rows.duckdb",)),
    Case("sql: a DuckDB file that is not there", sql_job("duckdb:///no/such/folder/rows.duckdb", table="rows"), 2,
         "cannot connect"),
    Case("sql: a query of no rows", sql_job("duckdb://", query="SELECT 1 AS a WHERE false"), 2, "no rows"),
    Case("sql: an analyzer cache on a database", cached_sql, 2, "cache_dir: an analyzer cache is reused while"),
    Case("sql: a table with odd column names", odd_names, 0, None, writes=("odd.duckdb", "out")),
    Case("config: a fixed shape of ten billion values a row", lambda f: job(f, small_config(
        f, features={"age": {"transform": "z_score", "shape": [100000, 100000]}})), 2,
         "shape [100000, 100000] holds 10,000,000,000 values a row"),
    Case("data: a JSON row nested unlike its fixed shape", lambda f: job(f, small_config(f, input={
        "format": "jsonl", "paths": [str(write(f / "x.jsonl", b'{"a": [[1, 2], [3, 4]]}\n{"a": [[1, 2, 3], [4]]}\n'))]},
        features={"a": {"transform": "z_score", "shape": [2, 2]}}, label=None)), 2,
         "x.jsonl:2: a: a list at depth 1 holds 3 items where shape [2, 2] has 2", writes=("x.jsonl",)),
]


# ------------------------------------------------------------------------------------------------ usage errors

USAGE_CASES = [
    Case("usage: apply --format xml", lambda f: ["apply", str(f), "--output", str(f / "o"), "--format", "xml"], 2,
         "--format xml: not one of csv, parquet, tfrecord"),
    Case("usage: apply --splits some", lambda f: ["apply", str(f), "--output", str(f / "o"), "--splits", "x"], 2,
         "--splits x: only 'all'"),
    Case("usage: apply to a folder that is no run", lambda f: ["apply", str(f), "--output", str(f / "o")], 2,
         "not a run directory of `skewless run`"),
    Case("usage: validate one split only", lambda f: ["validate", str(run_copy(f)), "--splits", "train"], 2,
         "give --against OTHER_RUN", run=True, writes=("run",)),
    Case("usage: schema infer of a missing file", lambda f: ["schema", "infer", str(f / "none.csv"), "--header"], 2,
         "none.csv"),
    Case("usage: schema validate with a schema of garbage", lambda f: [
        "schema", "validate", str(write(f / "a.csv", "a\n1\n")), "--header",
        "--schema", str(write(f / "s.pbtxt", b"\x00\xff garbage {"))], 2, "s.pbtxt"),
]


# ------------------------------------------------------------------------------- what only a real process shows

def interrupt_when_claimed(process, folder):
    """Ctrl-C (SIGINT to the process group, as a terminal sends it) once the run has claimed its staging folder
    and started its pipeline."""
    import signal
    import time

    deadline = time.time() + 300
    while not (folder / "out.staging" / "run" / "tmp").exists():
        assert process.poll() is None and time.time() < deadline, "the run ended before it could be interrupted"
        time.sleep(0.01)
    os.killpg(process.pid, signal.SIGINT)
    return process.communicate(timeout=300)


def read_one_line_then_close(process, folder):
    """`skewless ... | head -1`: one line read, then the pipe closed."""
    first = process.stdout.readline()
    process.stdout.close()
    return first, process.stderr.read()


PROCESS_CASES = [
    Case("process: inspect with the graph deleted says one line, no TensorFlow start-up lines",
         damaged(remove("transform_graph"), lambda f: ["inspect", str(run_copy(f))]), 2,
         "transform graph is missing", item=7, run=True, process=True, writes=("run",)),
    Case("process: validate | head -1 is no error", lambda f: ["validate", str(run_copy(f))], 0, None, item=8,
         run=True, process=True, drive=read_one_line_then_close, writes=("run",)),
    Case("process: inspect | head -1 is no error", lambda f: ["inspect", str(run_copy(f))], 0, None, run=True,
         process=True, drive=read_one_line_then_close, writes=("run",)),
    Case("process: Ctrl-C during the pipeline", job, 130, "skewless: interrupted", item=8, process=True,
         drive=interrupt_when_claimed, after=gone("out")),
]


CASES = (YAML_CASES + RUNNER_CASES + RUN_CASES + OVERWRITE_CASES + STAGING_CASES + EXPORT_CASES + DATA_CASES
         + USAGE_CASES + PROCESS_CASES)
