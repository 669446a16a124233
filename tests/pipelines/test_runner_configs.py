"""configs/flink.yaml and configs/spark.yaml, which no test can run (Beam's job-server jars are not obtainable on
this project's machines: docs/recipes/runners.md), load and carry the options the runners recipe names for each
engine, in EXTERNAL worker-pool mode (no machine here runs Docker), with endpoints the command line overrides."""

import re

import pytest
import yaml

from example_job import REPO
from skewless.config import load_config
from skewless.pipelines.assemble.launch import pipeline_options

CONFIGS = {"Flink": REPO / "configs" / "flink.yaml", "Spark": REPO / "configs" / "spark.yaml"}
RECIPE = REPO / "docs" / "recipes" / "runners.md"


def _options(path, overrides=()):
    return pipeline_options(load_config(path, overrides=list(overrides)), []).get_all_options(drop_default=True)


def _recipe_rows() -> list[list[str]]:
    """The rows of the recipe's table of options per engine: engine(s), option, value in the config, why."""
    text = RECIPE.read_text()
    table = text[text.index("| engine | option | in the config | why |"):].split("\n\n")[0]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in table.splitlines()[2:]]


def test_the_recipe_names_each_engines_options():
    options = {row[1] for row in _recipe_rows()}
    assert {"`flink_version`", "`parallelism`", "`environment_cache_millis`", "`taskmanager.memory.network.fraction`",
            "`experiments`"} <= options


@pytest.mark.parametrize("row", _recipe_rows(), ids=lambda row: row[1].strip("`"))
def test_the_configs_carry_the_options_the_recipe_names(row):
    engines, option, value = row[0].split(", "), row[1].strip("`"), re.match(r"`([^`]+)`", row[2]).group(1)
    for engine in engines:
        options = _options(CONFIGS[engine])
        if "not a Beam option" in row[2]:
            assert option not in options  # Flink's own setting: the recipe says where it goes
        else:
            assert options[option] == yaml.safe_load(value), (engine, option)


@pytest.mark.parametrize("engine", CONFIGS)
def test_workers_run_in_a_worker_pool_and_endpoints_are_overridable(engine):
    options = _options(CONFIGS[engine])
    assert options["environment_type"] == "EXTERNAL" and "environment_config" in options
    endpoint = "flink_master" if engine == "Flink" else "job_endpoint"
    overridden = _options(CONFIGS[engine], [f"runner.options.{endpoint}=cluster.example:1234",
                                            "runner.options.environment_config=pool.example:50000"])
    assert (overridden[endpoint], overridden["environment_config"]) == ("cluster.example:1234", "pool.example:50000")
