"""The job builds its pipeline without Beam's construction-time type checks (assemble/launch.py): its files are those
of a job built with them, for every kind of tf.Transform graph, every transform family and
the census config, and Beam sizes the analysis's Arrow values as it did (without pickling them)."""

import pytest
from apache_beam.options.pipeline_options import DirectOptions, TypeOptions
from arrow_pickles import arrow_pickles
from example_job import PHASE_CONFIGS, census_config_or_skip
from family_rows import every_family_config
from run_output import files_of, forget_kept_graphs

from skewless.config import load_config
from skewless.pipelines import run
from skewless.pipelines.assemble import launch


def _type_checked(config):
    """`config` (a dict, or census_config's JobConfig) with Beam's type checks turned on."""
    if isinstance(config, dict):
        runner = config.get("runner", {})
        return {**config, "runner": {**runner, "options": {**runner.get("options", {}), "pipeline_type_check": True}}}
    checked = config.model_copy(deep=True)
    checked.runner.options["pipeline_type_check"] = True
    return checked


def test_the_checks_are_off_unless_the_config_turns_them_on(tmp_path):
    config = {**every_family_config(tmp_path), "runner": {"options": {"direct_num_workers": 1}}}
    for config, checked in ((config, False), (_type_checked(config), True)):
        options = launch.pipeline_options(load_config(config), ["--no_pipeline_type_check"] * checked)
        assert options.view_as(TypeOptions).pipeline_type_check is checked  # the config's word wins over a flag
        assert options.view_as(DirectOptions).direct_num_workers == 1


@pytest.mark.parametrize("name", [*PHASE_CONFIGS, "every_family", "census"])
def test_a_job_built_without_type_checks_writes_the_type_checked_jobs_bytes(tmp_path, name):
    """The same files, and Arrow values pickled no more often: only where a later phase reads the record batches
    across a stage boundary (ArrowCoder encodes them), never to size them."""
    make = {**PHASE_CONFIGS, "every_family": every_family_config, "census": census_config_or_skip}[name]
    config = make(tmp_path)  # one folder for both: the graph names its own path
    with arrow_pickles() as unchecked_pickles:
        unchecked = files_of(run(config).output_dir)
    forget_kept_graphs()  # a fresh process's rerun: the same config would otherwise get the kept graphs
    with arrow_pickles() as checked_pickles:
        checked = files_of(run(_type_checked(config), overwrite=True).output_dir)
    assert unchecked_pickles == checked_pickles
    assert unchecked.keys() == checked.keys()
    assert any(name.startswith("data/") for name in unchecked)
    assert [name for name in unchecked if unchecked[name] != checked[name]] == []
