"""`pip install .` ships every module and data file of the tree, and the installed wheel runs the whole job.

The editable install the other tests use reads the source folders directly, so it cannot see a module the
wheel leaves out (a wheel once shipped without `skewless.report`).
"""

import json
import os
import shutil
import subprocess
import sys
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest
from example_job import REPO

ROOT = REPO
SKIPPED_PARTS = {"__pycache__"}


def _tree_files() -> set[str]:
    """Every file the mapped source folders hold, as its path inside the installed `skewless` namespace."""
    package_dir = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    installed = set()
    for package, folder in package_dir.items():
        for path in (ROOT / folder).rglob("*"):
            relative = path.relative_to(ROOT / folder)
            if path.is_file() and not SKIPPED_PARTS & set(relative.parts) and path.suffix != ".pyc":
                installed.add("/".join([*package.split("."), *relative.parts]))
    return installed


def _build_wheel(into: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", str(ROOT), "-w", str(into)],
        check=True, capture_output=True,
    )
    (wheel,) = into.glob("skewless-*.whl")
    return wheel


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    return _build_wheel(tmp_path_factory.mktemp("wheel"))


def test_wheel_holds_every_module_and_data_file_of_the_tree(wheel):
    with zipfile.ZipFile(wheel) as archive:
        shipped = {name for name in archive.namelist() if ".dist-info/" not in name}
    expected = _tree_files()
    assert "skewless/report/page.py" in expected and "skewless/schemas/census.pbtxt" in expected
    assert shipped == expected


# Run by the installed wheel's python, in a folder outside the checkout: a model on the run's output, saved
# for `skewless export`, and every split read back through make_dataset.
_TRAIN_AND_READ = """
import json, sys
import keras
from skewless.pipelines.dataset import make_dataset

run = sys.argv[1]
age = keras.Input((1,), name="age")
keras.Model(age, keras.layers.Dense(1)(age)).save("model.keras")
rows = {split: sum(int(label.shape[0]) for _, label in make_dataset(run, split, batch_size=512, shuffle_buffer=0))
        for split in ("train", "eval")}
print(json.dumps(rows))
"""


@pytest.mark.wheel
@pytest.mark.timeout(900)
def test_installed_wheel_runs_inspects_reports_verifies_exports_and_reads_outside_the_checkout(wheel, tmp_path):
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True, system_site_packages=False).create(env_dir)
    python, skewless = env_dir / "bin" / "python", env_dir / "bin" / "skewless"
    # dependencies come from the package index (pip's cache makes a rerun fast); the wheel itself is local
    subprocess.run([python, "-m", "pip", "install", "-q", str(wheel)], check=True)

    outside = tmp_path / "user"
    (outside / "configs").mkdir(parents=True)
    shutil.copy(ROOT / "configs" / "example.yaml", outside / "configs")
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{python.parent}{os.pathsep}{env['PATH']}"

    def cli(*args: str) -> str:
        done = subprocess.run([skewless, *args], cwd=outside, env=env, capture_output=True, text=True)
        assert done.returncode == 0, f"skewless {' '.join(args)}: {done.stderr[-3000:]}"
        return done.stdout

    cli("run", "configs/example.yaml")
    run_dir = outside / "out" / "example"
    described = json.loads(cli("inspect", str(run_dir), "--json"))
    written = described["rows"]["written"]
    assert sum(written.values()) == 50_000  # configs/example.yaml's rows; none is bad
    cli("report", str(run_dir))
    assert (run_dir / "report.html").stat().st_size > 0
    cli("verify", str(run_dir))
    read = subprocess.run([python, "-c", _TRAIN_AND_READ, str(run_dir)], cwd=outside, env=env,
                          capture_output=True, text=True)
    assert read.returncode == 0, read.stderr[-3000:]
    assert json.loads(read.stdout.strip().splitlines()[-1]) == written
    cli("export", str(run_dir), "--model", "model.keras", "--out", "export/1")
    assert (outside / "export" / "1" / "saved_model.pb").is_file()
    # nothing came from the checkout: the installed package is the wheel's
    origin = subprocess.run([python, "-c", "import skewless.report; print(skewless.report.__file__)"],
                            cwd=outside, env=env, capture_output=True, text=True, check=True).stdout
    assert str(env_dir) in origin and str(ROOT) not in origin
