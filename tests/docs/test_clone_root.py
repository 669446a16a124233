"""The README's quickstart run from a clone's root after the README's own install, `pip install .` (issue 42).

Python started in the clone's root imports the clone's `skewless/` folder, not the installed package, and the
folders pyproject.toml maps into it (`layers/`, `pipelines/`, `schemas/`) sit beside it: skewless/source_folders.py
maps them. The other docs tests run in a scratch folder and never see the clone's root.

The install is a fresh virtualenv holding only the wheel of the clone; the stack (TensorFlow, Beam, ...) is the
running interpreter's, named by a .pth file, so that no editable install's finder (whose .pth would run only
from a site folder) maps the subpackages instead.
"""

import subprocess
import sys
import tomllib
from pathlib import Path

import yaml

from doc_blocks import reader_environment, run_blocks, runnable_blocks
from example_job import REPO
from skewless.source_folders import SUBPACKAGE_FOLDERS

PACKAGE_DIRS = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
# what `pip install .` and the README's quickstart read from a clone
CLONE_FILES = [*PACKAGE_DIRS.values(), "configs", "pyproject.toml", "setup.py", "README.md"]


def test_the_mapped_folders_are_pyprojects_package_dir():
    assert {"skewless": "skewless", **SUBPACKAGE_FOLDERS} == PACKAGE_DIRS


def _clone(into):
    for name in CLONE_FILES:
        source = REPO / name
        if source.is_dir():
            subprocess.run(["cp", "-r", str(source), str(into / name)], check=True)
        else:
            (into / name).write_bytes(source.read_bytes())
    assert not (into / "skewless" / "layers").exists()


def _non_editable_install(clone, env_dir):
    # the wheel `pip install .` builds and installs, built by this interpreter (the new one has no setuptools)
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", str(clone),
                            "-w", str(env_dir.parent / "wheel")], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr[-3000:]
    subprocess.run([sys.executable, "-m", "venv", str(env_dir)], check=True)
    python = env_dir / "bin" / "python"
    (wheel,) = (env_dir.parent / "wheel").glob("skewless-*.whl")
    installed = subprocess.run([python, "-m", "pip", "install", "-q", "--no-deps", str(wheel)], capture_output=True,
                               text=True)
    assert installed.returncode == 0, installed.stderr[-3000:]
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    stack = [path for path in sys.path if path.endswith("site-packages")]
    Path(site, "stack.pth").write_text("\n".join(stack) + "\n")
    return python


def test_readme_quickstart_runs_from_the_clone_root_after_pip_install_dot(tmp_path):
    clone = tmp_path / "clone"
    clone.mkdir()
    _clone(clone)
    python = _non_editable_install(clone, tmp_path / "venv")
    environment = reader_environment()
    environment["PATH"] = f"{python.parent}:{environment['PATH']}"

    done = run_blocks(runnable_blocks(REPO / "README.md"), python, clone, environment)
    assert done.returncode == 0, f"{done.stdout[-2000:]}\n{done.stderr[-4000:]}"

    where = subprocess.run([python, "-c", "import skewless.layers, skewless.pipelines.tfdata as t; "
                                          "print(skewless.layers.__file__); print(t.__file__)"],
                           cwd=clone, env=environment, capture_output=True, text=True)
    assert where.returncode == 0, where.stderr[-2000:]
    assert where.stdout.split() == [str(clone / "layers" / "__init__.py"),
                                    str(clone / "pipelines" / "tfdata" / "__init__.py")]

    inspected = subprocess.run([python, "-m", "skewless", "inspect", "out/example"], cwd=clone, env=environment,
                               capture_output=True, text=True)
    assert inspected.returncode == 0, inspected.stderr[-2000:]
    features = yaml.safe_load((clone / "configs" / "example.yaml").read_text())["features"]
    assert [name for name in features if name not in inspected.stdout] == []
