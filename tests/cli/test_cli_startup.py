"""The command line answers what needs no TensorFlow without importing it: --version, --help, a config error,
an existing output (issue 18, item 5). Checked on the modules a real `skewless` process loaded, not on time."""

import importlib.metadata
import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
import time
import zipfile

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from example_job import example_config

HEAVY = ("tensorflow", "tensorflow_transform", "apache_beam", "keras", "tfx_bsl")

# Runs the command as the `skewless` script does, then prints on stdout's last line which heavy modules it loaded.
_RUN_AND_LIST = """
import atexit, json, sys
atexit.register(lambda: print(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules))))
sys.argv = ["skewless", *{args!r}]
from skewless.cli import main
main()
"""


def skewless(*args, cwd=None, heavy=HEAVY):
    """Runs `skewless ARGS` in a fresh process: (exit code, stdout without the last line, stderr, which of the
    `heavy` modules it loaded)."""
    environment = {key: value for key, value in os.environ.items() if key != "SKEWLESS_DEBUG"}
    done = subprocess.run([sys.executable, "-c", _RUN_AND_LIST.format(heavy=heavy, args=list(args))],
                          capture_output=True, text=True, env=environment, cwd=cwd, timeout=300)
    *out, loaded = done.stdout.splitlines()
    return done.returncode, "\n".join(out), done.stderr, json.loads(loaded)


def test_version_from_the_package_metadata():
    code, out, err, loaded = skewless("--version")
    assert (code, err, loaded) == (0, "", [])
    assert out == f"skewless {importlib.metadata.version('skewless')}"


def test_help_loads_nothing_heavy():
    code, out, _, loaded = skewless("--help")
    assert code == 0 and "--version" in out and "run" in out
    assert loaded == []


def test_config_error_before_tensorflow(tmp_path):
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(example_config(tmp_path / "out")) + "bogus: 1\n")
    code, _, err, loaded = skewless("run", str(path))
    assert code == 2
    assert err.splitlines() == [f"skewless: error: {path}:{len(path.read_text().splitlines())}: bogus: unknown key"]
    assert loaded == []


def test_set_error_names_the_override_not_a_config_line(tmp_path):
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(example_config(tmp_path / "out")))
    code, _, err, loaded = skewless("run", str(path), "--set", "features.age.transform=zscore")
    assert code == 2 and loaded == []
    [line] = err.splitlines()
    assert line.startswith("skewless: error: --set features.age.transform=zscore: unknown value 'zscore' (")
    assert str(path) not in line


@pytest.mark.parametrize("name,input_format", [("rows.jsonl", "jsonl"), ("rows.tfrecord", "tfrecord")])
def test_an_input_without_rows_is_refused_as_empty_before_tensorflow(tmp_path, name, input_format):
    # these formats' columns are read from the rows: with no row there is no column, and the refusal must say
    # why (was "features.age: no column 'age' in rows.jsonl (columns: )"); tfx_bsl counts TFRecord records
    data = tmp_path / name
    data.write_bytes(b"")
    path = tmp_path / "job.yaml"
    config = example_config(tmp_path / "out", input={"format": input_format, "paths": [str(data)]},
                            features={"age": {"transform": "z_score"}}, label=None)
    path.write_text(yaml.safe_dump(config))
    code, _, err, loaded = skewless("run", str(path))
    assert (code, err.splitlines()) == (2, [f"skewless: error: {data}: holds no rows"])
    assert set(loaded) <= {"tfx_bsl"}
    assert not (tmp_path / "out").exists()


def test_existing_output_refused_before_tensorflow(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(example_config(out)))
    code, _, err, loaded = skewless("run", str(path))
    assert code == 2
    assert err.splitlines() == [f"skewless: error: {out}: output directory exists (pass --overwrite to replace it)"]
    assert loaded == []


# Issue 42 item 2: what the config, the input paths and the input's head show is answered before the heavy
# import (a wrong column name took 2.7 s, a missing input 3.1 s, an export refusal 11 s). Each case: files to make
# in tmp_path (name -> text, or None for a folder), the command's arguments, the one line it must print.
_CSV = "age,city,label\n30,a,1\n40,b,0\n"


def _job(paths, features=None, label=None, **input_options):
    config = {"name": "t", "input": {"format": "csv", "paths": paths, "header": True, **input_options},
              "features": features or {"age": {"transform": "z_score"}, "city": {"transform": "vocabulary"}},
              "label": label or {"column": "label"}, "output": {"dir": "out"}}
    return yaml.safe_dump(config)


EARLY_ERRORS = {
    "wrong column": ({"data.csv": _CSV, "job.yaml": _job(["data.csv"], {"agee": {"transform": "z_score"}})},
                     ["run", "job.yaml"],
                     "features.agee: no column 'agee' in {tmp}/data.csv (columns: age, city, label)"),
    "wrong label column": ({"data.csv": _CSV, "job.yaml": _job(["data.csv"], label={"column": "lable"})},
                           ["run", "job.yaml"],
                           "label.column 'lable': no column 'lable' in {tmp}/data.csv (columns: age, city, label)"),
    "label map on numbers": ({"data.csv": _CSV, "job.yaml": _job(["data.csv"], label={"column": "label",
                                                                                        "map": {"a": 0, "b": 1}})},
                             ["run", "job.yaml"],
                             "label.map: the label column 'label' holds int values in {tmp}/data.csv; a map needs "
                             "string labels (declare the column BYTES in the schema, or drop the map to use the "
                             "numbers as they are)"),
    "';'-delimited CSV": ({"data.csv": _CSV.replace(",", ";"), "job.yaml": _job(["data.csv"])}, ["run", "job.yaml"],
                          "features.age: no column 'age' in {tmp}/data.csv (columns: age;city;label); the header is "
                          "one column at delimiter ',', and ';' splits it into age, city, label: set "
                          "input.delimiter: ';'"),
    "missing input": ({"job.yaml": _job(["nope.csv"])}, ["run", "job.yaml"],
                      "{tmp}/nope.csv: no input file matches"),
    "glob matching nothing": ({"data.csv": _CSV, "job.yaml": _job(["data/*.csv"])}, ["run", "job.yaml"],
                              "{tmp}/data/*.csv: no input file matches"),
    "input is a folder": ({"data": None, "job.yaml": _job(["data"])}, ["run", "job.yaml"],
                          "{tmp}/data: is a folder; name the files (a glob works)"),
    "CSV headers differ": ({"a.csv": _CSV, "b.csv": "age,town,label\n1,x,0\n", "job.yaml": _job(["*.csv"])},
                           ["run", "job.yaml"],
                           "{tmp}/b.csv: the CSV header names age, town, label, but {tmp}/a.csv's names age, city, "
                           "label; CSV inputs must share one header (or set input.columns)"),
    "apply: missing input": ({"run/config.yaml": "", }, ["apply", "run", "-o", "new", "-i", "nope.csv"],
                             "{tmp}/nope.csv: no input file matches"),
    "predict: missing input": ({"export": None}, ["predict", "export", "-o", "scored", "-i", "*.jsonl"],
                               "{tmp}/*.jsonl: no input file matches"),
    "export: folder exists": ({"model.keras": "", "export/1/saved_model.pb": ""},
                              ["export", "run", "--model", "model.keras", "-o", "export/1"],
                              "export/1: already exists (pass overwrite=True / --overwrite to replace it)"),
    "export --overwrite: not an export": (
        {"model.keras": "", "export/1/notes.txt": "mine"},
        ["export", "run", "--model", "model.keras", "-o", "export/1", "--overwrite"],
        "export/1: holds files but is not an export of skewless (no assets.extra/skewless_features.json); "
        "--overwrite replaces only a previous export (delete it yourself if it should go)"),
    "export: model missing": ({}, ["export", "run", "--model", "model.keras", "-o", "export/1"],
                              "model.keras: model file not found"),
    "export: not a model file": ({"model.keras": "text"}, ["export", "run", "--model", "model.keras", "-o", "e"],
                                 "model.keras: not a Keras model file (neither a zip archive nor HDF5); --model "
                                 "takes a .keras file (model.save)"),
}


@pytest.mark.parametrize("case", EARLY_ERRORS)
def test_errors_the_inputs_show_come_before_the_heavy_import(case, tmp_path):
    files, args, expected = EARLY_ERRORS[case]
    for name, text in files.items():
        path = tmp_path / name
        if text is None:
            path.mkdir(parents=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    code, out, err, loaded = skewless(*args, cwd=tmp_path)
    assert (code, err.splitlines(), loaded) == (2, [f"skewless: error: {expected.format(tmp=tmp_path)}"], [])


def test_parquet_column_names_come_before_the_heavy_import(tmp_path):
    pq.write_table(pa.table({"age": [30, 40], "label": [1, 0]}), tmp_path / "data.parquet")
    config = {"name": "t", "input": {"format": "parquet", "paths": ["data.parquet"]},
              "features": {"agee": {"transform": "z_score"}}, "label": {"column": "label"}, "output": {"dir": "out"}}
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(config))
    code, _, err, loaded = skewless("run", "job.yaml", cwd=tmp_path)
    assert (code, loaded) == (2, [])
    assert err.splitlines() == [f"skewless: error: features.agee: no column 'agee' in {tmp_path}/data.parquet "
                                "(columns: age, label)"]


def test_a_parquet_list_column_read_as_one_value_names_list_true(tmp_path):
    """Issue 42 item 3: the job read every row, then failed with "tags: has 3 values, expected 1..1" per row."""
    pq.write_table(pa.table({"tags": [["a", "b", "c"], ["d"]], "label": [1, 0]}), tmp_path / "data.parquet")
    config = {"name": "t", "input": {"format": "parquet", "paths": ["data.parquet"]},
              "features": {"tags": {"transform": "vocabulary"}}, "label": {"column": "label"}, "output": {"dir": "out"}}
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(config))
    code, _, err, loaded = skewless("run", "job.yaml", cwd=tmp_path)
    assert (code, loaded) == (2, [])
    assert err.splitlines() == [f"skewless: error: features.tags: {tmp_path}/data.parquet declares 'tags' a list "
                                f"column ({pq.read_schema(tmp_path / 'data.parquet').field('tags').type}); add `list: true` to the feature (0..n values per row), or "
                                "`shape:` for a fixed number of values"]
    config["features"]["tags"]["list"] = True
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(config))
    code, _, err, _ = skewless("run", "job.yaml", cwd=tmp_path)
    assert code == 0, err
    rows = json.loads((tmp_path / "out" / "run.json").read_text())["rows"]
    assert sum(rows["written"].values()) == 2


def test_inspect_reads_a_plain_run_without_tensorflow(example_run):
    """The example's schemas hold plain features only: their specs (compared with tf.Transform's in
    test_inspect.py) and vocabularies are read from the files."""
    code, out, err, loaded = skewless("inspect", example_run.output_dir, "--json")
    assert (code, err, loaded) == (0, "", [])
    assert json.loads(out)["rows"]["read"] == example_run.rows["read"]


def test_tensorflow_native_log_lines_only_with_debug(tmp_path):
    """`export` imports TensorFlow before Keras finds the model file unreadable: its C++ start-up lines (absl's
    format) are hidden, unless --debug asks for everything."""
    with zipfile.ZipFile(tmp_path / "broken.keras", "w") as archive:
        archive.writestr("config.json", "{}")  # looks like a .keras file until Keras reads it
    args = ["-m", "skewless", "export", str(tmp_path / "run"), "--model", str(tmp_path / "broken.keras"),
            "--out", str(tmp_path / "x")]
    environment = {k: v for k, v in os.environ.items() if k not in ("SKEWLESS_DEBUG", "TF_CPP_MIN_LOG_LEVEL")}
    quiet, debug = (subprocess.run([sys.executable, *args, *extra], capture_output=True, text=True, env=environment,
                                   timeout=300) for extra in ([], ["--debug"]))
    native = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d\d", re.MULTILINE)
    assert quiet.returncode == 2 and len(quiet.stderr.splitlines()) == 1, quiet.stderr
    assert debug.returncode != 0 and native.search(debug.stderr), debug.stderr


def test_run_loads_no_keras_3_and_ends_through_the_exit_handlers(tmp_path):
    """A job needs tf.Transform's Keras 2 (tf_keras), not Keras 3, which `import tensorflow` used to load;
    the process skips the interpreter's teardown, yet runs the exit handlers (the one that lists the loaded
    modules is one) and flushes what it printed (stdout is a pipe here, so buffered)."""
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(example_config(tmp_path / "out")))
    code, out, err, loaded = skewless("run", str(path))
    assert code == 0, err
    assert loaded == ["apache_beam", "tensorflow", "tensorflow_transform", "tfx_bsl"]
    rows = json.loads((tmp_path / "out" / "run.json").read_text())["rows"]
    assert out.splitlines()[-2].startswith(f"{tmp_path / 'out'}: read {rows['read']:,} rows")
    assert out.splitlines()[-1] == f"report: {tmp_path / 'out' / 'report.html'}"  # the last line names the page


def test_a_run_with_one_split_loads_no_scipy(tmp_path):
    """SciPy is the p-values of drift between splits (skewless/significance.py): a run with one split has none to
    compute, and neither its import of the stack nor its report loads SciPy (0.5-1 s of a fresh run)."""
    path = tmp_path / "job.yaml"
    config = example_config(tmp_path / "out", input={"format": "synthetic", "rows": 500, "seed": 2},
                            output={"shards": 1, "splits": {"train": 1.0}})
    path.write_text(yaml.safe_dump(config))
    code, _, err, loaded = skewless("run", str(path), heavy=("tensorflow", "scipy"))
    assert code == 0, err
    assert loaded == ["tensorflow"]
    assert (tmp_path / "out" / "report.html").stat().st_size > 0


def test_run_json_seconds_count_from_the_command_not_from_its_process_id(tmp_path):
    """Issue 42 item 4: `bash -c 'pip install ... && skewless run ...'` execs skewless in the shell's process,
    whose start the kernel records: run.json counted the install as start-up (136-409 s for a 9 s job)."""
    pause = 5  # seconds the shell spends before exec'ing skewless under its own process ID
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(example_config(tmp_path / "out", input={"format": "synthetic", "rows": 300})))
    started = time.time()
    done = subprocess.run(["bash", "-c", f"sleep {pause}; exec {shlex.quote(sys.executable)} -m skewless run {path}"],
                          capture_output=True, text=True, timeout=600)
    wall = time.time() - started
    assert done.returncode == 0, done.stderr
    seconds = json.loads((tmp_path / "out" / "run.json").read_text())["seconds"]
    assert 0 < seconds["startup"] and seconds["startup"] + seconds["pipeline"] <= seconds["total"] <= wall - pause


# Runs the command as the `skewless` script does, then prints on stdout's last line the programs it started.
_RUN_AND_LIST_STARTED = """
import atexit, json, sys
started = []
sys.addaudithook(lambda event, args: started.append([event, repr(args)[:200]])
                 if event in ("subprocess.Popen", "os.fork", "os.posix_spawn", "os.system", "os.exec") else None)
atexit.register(lambda: print(json.dumps(started)))
sys.argv = ["skewless", *{args!r}]
from skewless.cli import main
main()
"""


def test_a_run_starts_no_program(tmp_path):
    """A fork of the job's process (~0.8 GB once TensorFlow is imported) counts its memory twice in the process
    tree's until it execs: `ctypes.util.find_library` ran `ldconfig -p` for the job's `malloc_trim`, h5py's import
    `uname -p` (a 1M-row run's tree peaked at 1.72 GB in a benchmark). A run too small to parse ahead starts none."""
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(example_config(tmp_path / "out")))
    done = subprocess.run([sys.executable, "-c", _RUN_AND_LIST_STARTED.format(args=["run", str(path)])],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == []


@pytest.mark.parametrize("hidden", ["jax", "scipy", "h5py"])
def test_a_package_is_hidden_only_while_the_stack_is_imported(hidden):
    """tf.lite imports JAX, TensorFlow's legacy Keras engine SciPy and h5py, if installed; the job commands' import
    leaves them out, and each imports as usual after."""
    if importlib.util.find_spec(hidden) is None:
        pytest.skip(f"{hidden} is not installed: nothing to hide")
    script = ("import sys\nfrom skewless import runtime\nruntime.import_tf_transform_stack('tensorflow')\n"
              f"print({hidden!r} in sys.modules)\nimport {hidden}\nprint({hidden!r} in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True"]


def test_run_with_the_keras_preprocessor_loads_keras_3_after_the_stack(tmp_path):
    """The job command imports the stack with tf.keras as Keras 2; output.keras_preprocessor still builds a
    Keras 3 model in that process, and the job's own check finds every feature's output equal to the graph's."""
    path = tmp_path / "job.yaml"
    config = example_config(tmp_path / "out", input={"format": "synthetic", "rows": 1500, "seed": 4},
                            output={"shards": 1, "keras_preprocessor": True})
    path.write_text(yaml.safe_dump(config))
    code, out, err, loaded = skewless("run", str(path))
    assert code == 0, err
    assert "keras" in loaded
    check = json.loads((tmp_path / "out" / "keras_preprocessor.json").read_text())
    assert check["rows"] >= 1000
    assert {feature["status"] for feature in check["features"]} == {"exact"}, check["features"]
    assert (tmp_path / "out" / "keras_preprocessor.keras").stat().st_size > 0
