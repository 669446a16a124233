"""Shared fixtures: a small real run of the job, the census file where it exists, and a run of the census config.

Their data and helpers are in example_job.py (conftest files hold fixtures; tests import no conftest)."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
# pytest imports readline, which exports a terminal size (COLUMNS=80, LINES=24 where there is no terminal) into the
# process's C environment, beside os.environ: every `skewless` child would take its pipe for a screen 80 columns
# wide and wrap its lines (skewless/terminal_text.py). The tests that want a width give it to their child.
for _size in ("COLUMNS", "LINES"):
    os.environ.pop(_size, None)
    os.unsetenv(_size)

import pytest  # noqa: E402
from example_job import CENSUS, NATIVE_FEATURES, census_config, example_config, gaps_run  # noqa: E402


@pytest.fixture(scope="session")
def example_run(tmp_path_factory):
    """One run of the small synthetic job, shared by the tests that only read its output."""
    from skewless.pipelines import run

    return run(example_config(tmp_path_factory.mktemp("example") / "run"))


@pytest.fixture(scope="session")
def native_run(tmp_path_factory):
    """The synthetic job with the transforms of real configs (NATIVE_FEATURES), for the native preprocessor."""
    from skewless.pipelines import run

    return run(example_config(tmp_path_factory.mktemp("native") / "run", features=NATIVE_FEATURES,
                              input={"format": "synthetic", "rows": 1500, "seed": 7}))


@pytest.fixture(scope="session")
def gaps_job(tmp_path_factory):
    """The job on rows with gaps and infinities (example_job.gaps_run), shared by the tests that only read its
    output: (result, rows)."""
    return gaps_run(tmp_path_factory.mktemp("gaps"))


@pytest.fixture(scope="session")
def census_path():
    if not CENSUS.exists():
        pytest.skip(f"{CENSUS} is absent (the census tests need ../shared/data/census/adult.data)")
    return CENSUS


@pytest.fixture(scope="session")
def census_run(census_path, tmp_path_factory):
    from skewless.pipelines import run

    return run(census_config(census_path, tmp_path_factory.mktemp("census") / "out"))


@pytest.fixture
def unit_reads(monkeypatch):
    """The work units this process parsed from the input (`RowReader.read`), by index, in the order it did."""
    from skewless.pipelines.reading.sources import RowReader

    seen = []
    original = RowReader.read

    def counted(self, unit):
        seen.append(unit.index)
        return original(self, unit)

    monkeypatch.setattr(RowReader, "read", counted)
    return seen
