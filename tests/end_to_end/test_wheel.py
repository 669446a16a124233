"""`pip install .` ships every module and data file of the tree, and the installed wheel runs the whole job on
every Python the package supports that this machine has.

The editable install the other tests use reads the source folders directly, so it cannot see a module the
wheel leaves out (a wheel once shipped without `skewless.report`). The default suite runs on one Python only: a
Python-version-specific feature (tomllib, typing.Self, ...) shows only when a fresh virtualenv on another one
installs the wheel, runs the job and a smoke subset of the tests.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from example_job import REPO
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = REPO
SKIPPED_PARTS = {"__pycache__"}
# setup.py's C extension, compiled for Python's limited API of 3.10: one wheel for every Python 3.10-3.13. The tree
# holds it only where an editable install built it there, so it is expected by name, not found.
NATIVE_MODULE = "skewless/pipelines/write/_native_records.abi3.so"
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
# the minor versions the classifiers promise, e.g. [10, 11, 12, 13]
SUPPORTED = sorted(int(c.rsplit(".", 1)[1]) for c in PROJECT["classifiers"]
                   if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c))
# the exact pins pyproject.toml gives Python 3.10 alone, where the unpinned stack does not resolve in useful time
PYTHON_3_10 = "python_version < '3.11'"
# Run by each other Python's virtualenv from the checkout's tests, against the installed wheel: every module
# imports, the config parses, the job runs in-process and the Keras layers transform (the CLI's run, export and
# make_dataset run in the test itself). Small, for CI's time: each Python adds its install to it.
SMOKE_TESTS = [
    "tests/architecture/test_every_module_imports.py::test_every_module_of_the_package_imports",
    "tests/cli/test_config.py",
    "tests/pipelines/test_job.py",
    "tests/layers/test_transform_layer.py",
]


def find_python(minor: int) -> str | None:
    """An interpreter of Python 3.<minor>: the one running the tests, else python3.<minor> on PATH, else the
    newest pyenv build of it (where this project's machines keep the other versions). Each candidate must run
    and say it is 3.<minor>: pyenv's shim of python3.12 is on PATH but fails where 3.12 is not selected."""
    if sys.version_info[:2] == (3, minor):
        return sys.executable
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    builds = sorted(pyenv.glob(f"3.{minor}.*/bin/python"), key=lambda p: int(p.parts[-3].split(".")[2]))
    for candidate in [shutil.which(f"python3.{minor}"), *map(str, reversed(builds))]:
        if candidate is None:
            continue
        said = subprocess.run([candidate, "-c", "import sys; print(sys.version_info[1])"],
                              capture_output=True, text=True)
        if said.returncode == 0 and said.stdout.strip() == str(minor):
            return candidate
    return None


def _pythons():
    for minor in SUPPORTED:
        python = find_python(minor)
        yield pytest.param(minor, python, id=f"py3.{minor}",
                           marks=pytest.mark.skipif(python is None, reason=f"no Python 3.{minor} on this machine"))


def test_requires_python_is_the_range_the_classifiers_list():
    assert SUPPORTED == list(range(SUPPORTED[0], SUPPORTED[-1] + 1)) and SUPPORTED[0] <= 10 and SUPPORTED[-1] >= 13
    assert PROJECT["requires-python"] == f">=3.{SUPPORTED[0]},<3.{SUPPORTED[-1] + 1}"


def _requirements() -> tuple[list[Requirement], dict[str, Version]]:
    """pyproject.toml's requirements, and the exact version each 3.10 pin names."""
    requirements = [Requirement(line) for line in PROJECT["dependencies"]]
    pins = {}
    for requirement in requirements:
        exact = [spec for spec in requirement.specifier if spec.operator == "=="]
        if str(requirement.marker) == PYTHON_3_10.replace("'", '"') and exact:
            pins[canonicalize_name(requirement.name)] = Version(exact[0].version)
    return requirements, pins


def test_python_3_10_pins_every_requirement_within_its_range():
    """The wheel resolves on 3.10 by itself only if the pins leave pip nothing to choose: each requirement the
    package has there is pinned, at a version its range allows (a requirement added without regenerating the pins
    fails here, not after 25 minutes of pip's backtracking)."""
    requirements, pins = _requirements()
    on_3_10 = {"python_version": "3.10", "python_full_version": "3.10.13", "sys_platform": "linux",
               "platform_system": "Linux", "extra": ""}
    wanted = [r for r in requirements if r.marker is None or r.marker.evaluate(on_3_10)]
    unpinned = sorted({canonicalize_name(r.name) for r in wanted} - set(pins))
    assert not unpinned and len(pins) > 100, unpinned
    outside = [f"{r} (pinned {pins[canonicalize_name(r.name)]})" for r in wanted
               if pins[canonicalize_name(r.name)] not in r.specifier]
    assert not outside


def _tree_files() -> set[str]:
    """Every file the mapped source folders hold, as its path inside the installed `skewless` namespace."""
    package_dir = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    installed = set()
    for package, folder in package_dir.items():
        for path in (ROOT / folder).rglob("*"):
            relative = path.relative_to(ROOT / folder)
            if path.is_file() and not SKIPPED_PARTS & set(relative.parts) and path.suffix not in (".pyc", ".so"):
                installed.add("/".join([*package.split("."), *relative.parts]))
    return installed


def _build_wheel(into: Path, python=sys.executable, source: Path = ROOT, env: dict | None = None) -> Path:
    built = subprocess.run([python, "-m", "pip", "wheel", "--no-deps", "-q", str(source), "-w", str(into)],
                           capture_output=True, text=True, env=env)
    assert built.returncode == 0, built.stderr[-3000:]
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
    assert shipped == expected | {NATIVE_MODULE}


def test_wheel_is_one_build_for_python_3_10_and_later(wheel):
    assert "-cp310-abi3-" in wheel.name


def test_a_machine_without_a_c_compiler_builds_the_wheel_without_the_extension(tmp_path):
    """setup.py's extension is optional: a failed compile leaves it out (the job then encodes in Python)."""
    source = tmp_path / "source"  # a copy without the checkout's build/ folder, which may hold a compiled module
    source.mkdir()
    for name in ["pyproject.toml", "setup.py", "README.md"]:
        shutil.copy(ROOT / name, source / name)
    package_dir = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    for folder in package_dir.values():
        shutil.copytree(ROOT / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    wheel = _build_wheel(tmp_path / "wheel", source=source, env={**os.environ, "CC": "false"})
    with zipfile.ZipFile(wheel) as archive:
        shipped = {name for name in archive.namelist() if ".dist-info/" not in name}
    assert shipped == _tree_files()


# Run by the installed wheel's python, in a folder outside the checkout: a model on the run's output, saved
# for `skewless export`, and every split read back through make_dataset.
_TRAIN_AND_READ = """
import json, sys
import keras
from skewless.pipelines.tfdata.dataset import make_dataset

run = sys.argv[1]
age = keras.Input((1,), name="age")
keras.Model(age, keras.layers.Dense(1)(age)).save("model.keras")
rows = {split: sum(int(label.shape[0]) for _, label in make_dataset(run, split, batch_size=512, shuffle_buffer=0))
        for split in ("train", "eval")}
print(json.dumps(rows))
"""


@pytest.mark.wheel
# a cold pip cache took 391 s (3.12) and 516 s (3.13) to install the stack; the job's first run after it ~100 s
@pytest.mark.timeout(1800)
@pytest.mark.parametrize(("minor", "base_python"), _pythons())
def test_installed_wheel_runs_inspects_reports_verifies_exports_and_reads_outside_the_checkout(
        wheel, minor, base_python, tmp_path):
    env_dir = tmp_path / "venv"
    subprocess.run([base_python, "-m", "venv", env_dir], check=True)
    python, skewless = env_dir / "bin" / "python", env_dir / "bin" / "skewless"
    other_python = Path(base_python) != Path(sys.executable)
    if other_python:
        # that Python builds the wheel itself, so setup.py runs on it too (it reads pyproject.toml with tomllib,
        # or tomli before 3.11); pytest for the smoke subset below (pytest-xdist too: pyproject.toml's addopts use it)
        wheel = _build_wheel(env_dir / "wheel", python)
    # dependencies come from the package index (pip's cache makes a rerun fast); the wheel itself is local
    extras = ["pytest", "pytest-timeout", "pytest-xdist"] if other_python else []
    outside = tmp_path / "user"
    (outside / "configs").mkdir(parents=True)
    # as a user installs a wheel: outside the checkout, nothing but the wheel's own requirements (on 3.10 its pins)
    subprocess.run([python, "-m", "pip", "install", "-q", str(wheel), *extras], check=True, cwd=outside)
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
    assert str(env_dir) in origin and str(ROOT) not in origin and f"/python3.{minor}/" in origin
    if other_python:
        # the checkout's tests against the installed wheel, from outside the checkout so that `import skewless`
        # finds the wheel's package (tests/ is on sys.path only for its helper modules)
        smoke = subprocess.run([env_dir / "bin" / "pytest", "-q", "-p", "no:cacheprovider",
                                *(str(ROOT / test) for test in SMOKE_TESTS)],
                               cwd=outside, env=env, capture_output=True, text=True)
        assert smoke.returncode == 0, smoke.stdout[-4000:] + smoke.stderr[-2000:]
