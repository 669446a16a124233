"""Config validation and the CLI's answer to bad input: one line, naming file, line and key; exit code 2."""


import copy
import functools

import pytest
import yaml

from commands import cli
from skewless.config import load_config
from skewless.errors import ConfigError

GOOD = """\
name: t
input:
  format: synthetic
  rows: 10
features:
  age: {transform: z_score}
output:
  dir: out
"""


def write(tmp_path, text):
    path = tmp_path / "job.yaml"
    path.write_text(text)
    return path


def test_good_config_resolves_paths_against_its_folder(tmp_path):
    config = load_config(write(tmp_path, GOOD))
    assert config.output.dir == str(tmp_path / "out")
    assert config.output.splits == {"train": 0.8, "eval": 0.2}


def test_relative_config_path_resolves_to_absolute_paths(tmp_path, monkeypatch):
    """The run stores resolved paths in its config.yaml: they must hold from any working directory."""
    write(tmp_path, GOOD)
    monkeypatch.chdir(tmp_path.parent)
    config = load_config(f"{tmp_path.name}/job.yaml")
    assert config.output.dir == str(tmp_path / "out")
    from_dict = load_config({"name": "t", "input": {"format": "synthetic", "rows": 5},
                             "features": {"a": {"transform": "z_score"}}, "output": {"dir": "out"}})
    assert from_dict.base_dir == str(tmp_path.parent) and from_dict.output.dir == str(tmp_path.parent / "out")


def test_every_path_of_the_config_is_absolute_once_loaded_and_stays_so(tmp_path, monkeypatch):
    """Resolved once, against the config's folder: the run's config.yaml (its dump) loads to the same paths
    from anywhere; URLs and absolute paths are left as they are."""
    folder = tmp_path / "configs"
    folder.mkdir()
    (folder / "job.yaml").write_text(
        "name: t\ninput: {format: csv, header: true, paths: [data/a.csv, '../shared/*.csv', gs://bucket/b.csv, /abs/c.csv]}\n"
        "schema: schema.pbtxt\ncache_dir: cache\nfeatures: {age: {transform: z_score}}\noutput: {dir: out}\n"
    )
    monkeypatch.chdir(tmp_path)
    config = load_config("configs/job.yaml", overrides=["output.dir=../runs/x"])
    assert config.base_dir == str(folder)
    assert config.input.paths == [str(folder / "data" / "a.csv"), str(tmp_path / "shared" / "*.csv"),
                                  "gs://bucket/b.csv", "/abs/c.csv"]
    assert (config.schema_path, config.cache_dir) == (str(folder / "schema.pbtxt"), str(folder / "cache"))
    assert config.output.dir == str(tmp_path / "runs" / "x")  # --set: against the config's folder too
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    stored = write(elsewhere, yaml.safe_dump(config.model_dump(by_alias=True)))  # what a run's config.yaml holds
    again = load_config(stored)
    assert (again.input.paths, again.schema_path, again.cache_dir, again.output.dir) == (
        config.input.paths, config.schema_path, config.cache_dir, config.output.dir)


def test_unknown_transform_names_file_line_and_key(tmp_path):
    path = write(tmp_path, GOOD.replace("z_score", "zscore"))
    with pytest.raises(ConfigError) as error:
        load_config(path)
    message = str(error.value)
    assert message.startswith(f"{path}:6: features.age.transform: unknown value 'zscore'")


def test_unknown_key_and_bad_splits(tmp_path):
    with pytest.raises(ConfigError, match=r"job.yaml:4: input.rowz: unknown key"):
        load_config(write(tmp_path, GOOD.replace("rows: 10", "rowz: 10")))
    with pytest.raises(ConfigError, match="sum to 0.9, not 1"):
        load_config(write(tmp_path, GOOD + "  splits: {train: 0.6, eval: 0.3}\n"))


@pytest.mark.parametrize("level", ["0", "10", "-1", "fast", "2.5"])
def test_a_gzip_level_outside_deflates_is_refused_naming_the_key(tmp_path, level):
    with pytest.raises(ConfigError, match=r"job.yaml:9: output.gzip_level"):
        load_config(write(tmp_path, GOOD + f"  gzip_level: {level}\n"))
    assert load_config(write(tmp_path, GOOD + "  gzip_level: 9\n")).output.gzip_level == 9
    assert load_config(write(tmp_path, GOOD)).output.gzip_level == 2


# Issue 42 item 3: a misspelt key is answered with the known key of that mapping it is closest to. Each case: a
# config with every section, where one real key (dotted path) is replaced by a misspelling of it.
_FULL = {"name": "t", "input": {"format": "csv", "paths": ["a.csv"], "header": True, "delimiter": ";"},
         "features": {"age": {"transform": "bucketize", "num_buckets": 4, "default": 0},
                      "tags": {"transform": "vocabulary", "list": True, "top_k": 10}},
         "label": {"column": "label", "map": {"no": 0, "yes": 1}},
         "output": {"dir": "out", "splits": {"train": 0.8, "eval": 0.2}, "shards": 2, "compression": "gzip"},
         "runner": {"options": {"direct_num_workers": 2}}}
TYPOS = [("output", "outptu"), ("features", "featuers"), ("input.header", "headr"), ("input.delimiter", "delimter"),
         ("features.age.num_buckets", "num_bucket"), ("features.age.default", "defualt"),
         ("features.tags.list", "lsit"), ("features.tags.top_k", "topk"), ("label.column", "colum"),
         ("output.splits", "splts"), ("output.compression", "compresion"), ("runner.options", "optoins")]


@pytest.mark.parametrize(("key", "typo"), TYPOS, ids=[key for key, _ in TYPOS])
def test_a_misspelt_key_names_the_key_it_is_closest_to(tmp_path, key, typo):
    config = copy.deepcopy(_FULL)
    *parents, last = key.split(".")
    mapping = functools.reduce(dict.__getitem__, parents, config)
    mapping[typo] = mapping.pop(last)
    with pytest.raises(ConfigError) as error:
        load_config(write(tmp_path, yaml.safe_dump(config, sort_keys=False)))
    dotted = ".".join([*parents, typo])
    assert f"{dotted}: unknown key; did you mean {last!r}?" in str(error.value)


def test_a_key_close_to_none_is_only_unknown(tmp_path):
    with pytest.raises(ConfigError) as error:
        load_config(write(tmp_path, GOOD + "bogus: 1\n"))
    assert str(error.value).endswith("bogus: unknown key")


def test_option_of_another_transform_is_rejected():
    with pytest.raises(ConfigError, match="hash_buckets only applies to transform hash"):
        load_config({"name": "t", "input": {"format": "synthetic", "rows": 1},
                     "features": {"a": {"transform": "z_score", "hash_buckets": 3}}, "output": {"dir": "o"}})


def test_overrides_parse_yaml_values(tmp_path):
    config = load_config(write(tmp_path, GOOD), overrides=["output.shards=3", "input.rows=99"])
    assert config.output.shards == 3 and config.input.rows == 99


def test_invalid_yaml_names_the_line(tmp_path):
    with pytest.raises(ConfigError, match=r"job.yaml:4: invalid YAML: mapping values are not allowed"):
        load_config(write(tmp_path, "name: t\ninput:\n  format: csv\n   rows: 3\n"))


def test_cli_bad_config_is_one_line_and_exit_2(tmp_path):
    done = cli("run", str(write(tmp_path, GOOD.replace("z_score", "zscore"))))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "features.age.transform" in done.stderr
    assert "Traceback" not in done.stderr


def test_cli_unknown_column_and_missing_input(tmp_path):
    done = cli("run", str(write(tmp_path, GOOD.replace("age:", "agee:"))))
    assert done.returncode == 2 and "features.agee: no column 'agee'" in done.stderr
    missing = GOOD.replace("format: synthetic\n  rows: 10", "format: csv\n  paths: [nope/*.csv]\n  header: true")
    done = cli("run", str(write(tmp_path, missing)))
    assert done.returncode == 2 and "no input file matches" in done.stderr and "nope/*.csv" in done.stderr


def test_runner_flags_after_the_double_dash_win():
    from skewless.config import load_config
    from skewless.pipelines.assemble.launch import pipeline_options

    config = load_config({"name": "t", "input": {"format": "synthetic", "rows": 1},
                          "features": {"age": {"transform": "z_score"}}, "output": {"dir": "o"}})
    direct = pipeline_options(config, []).get_all_options()
    # in-process by default: threads or processes would number the graph's traced functions differently
    assert direct["runner"] == "DirectRunner" and direct["direct_running_mode"] == "in_memory"
    flagged = pipeline_options(config, ["--runner=FlinkRunner", "--flink_master=host:8081"]).get_all_options()
    assert flagged["runner"] == "FlinkRunner" and flagged["flink_master"] == "host:8081"
    processes = pipeline_options(config, ["--direct_running_mode=multi_processing"]).get_all_options()
    assert processes["direct_running_mode"] == "multi_processing"


def test_label_map_on_a_numeric_label_is_refused(tmp_path):
    """A number outside the map would become -1 unseen; the job refuses rather than lose it silently."""
    from skewless.pipelines import run

    (tmp_path / "rows.csv").write_text("x,label\n1.5,0\n2.5,1\n3.5,7\n")
    config = {"name": "t", "input": {"format": "csv", "paths": [str(tmp_path / "rows.csv")], "header": True},
              "features": {"x": {"transform": "z_score"}}, "label": {"column": "label", "map": {"0": 0, "1": 1}},
              "output": {"dir": str(tmp_path / "out")}}
    with pytest.raises(ConfigError, match="label.map: the label column 'label' holds int values"):
        run(config)
