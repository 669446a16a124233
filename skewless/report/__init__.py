"""The run report: RUN_DIR/report.html, one self-contained page about a run (summary, features, train vs eval,
warnings, quarantine), or about an output of `skewless apply` (skewless.report.applied_page).

It reads only the run directory's small files (`RunDirectory`: run summary, config, quarantine, vocabularies,
statistics protos), never TensorFlow or Apache Beam, so it renders in well under a second and anywhere the run
can be read.

Examples:

```python
from skewless.report import render_report

path = render_report("out/example")   # "out/example/report.html"
```
"""

from __future__ import annotations

import os

from skewless.pipelines.output import files
from skewless.pipelines.output import object_store
from skewless.redaction import without_credentials
from skewless.report.applied_page import render_applied_page
from skewless.report.page import render_page
from skewless.report.run_files import quarantine_reasons, run_statistics, split_order, vocabulary
from skewless.report.split_views import split_views
from skewless.run_directory import REPORT_FILE, RunDirectory

__all__ = ["REPORT_FILE", "render_report"]


def render_report(run_dir: str | os.PathLike) -> str:
    """Writes RUN_DIR/report.html from the run's files and returns its path.

    A run on an object store is read from a local copy and gets the page uploaded beside its files;
    the path returned is then the store's.

    Raises InputError when RUN_DIR has no readable run summary.

    Examples:
        After ``skewless run configs/example.yaml -o out/example`` (which renders it too):

        >>> import os
        >>> from skewless.report import render_report
        >>> os.remove("out/example/report.html")
        >>> page = render_report("out/example")
        >>> os.path.relpath(page)
        'out/example/report.html'
        >>> text = open(page).read()
        >>> text.startswith("<!DOCTYPE html>"), "50,000" in text, "native_country" in text
        (True, True, True)
    """
    run_dir = os.fspath(run_dir)
    if not files.is_local(run_dir):
        return _render_remote(run_dir)
    return _render(run_dir, os.path.abspath(run_dir))


def _render_remote(run_dir: str) -> str:
    path = _render(object_store.local_run(run_dir), run_dir)
    target = f"{run_dir.rstrip('/')}/{REPORT_FILE}"
    object_store.copy_file(path, target)
    return target


def _render(run_dir: str, shown: str) -> str:
    run = RunDirectory(run_dir)
    summary = run.read_summary()
    if summary.applied is not None:
        return _write(run, render_applied_page(shown, run_dir, summary, quarantine_reasons(run)))
    summary = run_statistics(run)
    vocabularies = {
        name: vocabulary(run, name, feature.get("vocabulary_file")) for name, feature in summary.features.items()
        if "vocabulary_size" in feature
    }
    config = run.read_config()
    views = split_views(run_dir, split_order(summary, config))
    page = render_page(shown, summary, config, quarantine_reasons(run), vocabularies, run.read_config_text() or "",
                       views)
    return _write(run, page)


def _write(run: RunDirectory, page: str) -> str:
    path = run.report_file
    # Written beside and renamed, so a browser reloading the page never sees half of it.
    partial = f"{path}.partial"
    with open(partial, "w", encoding="utf-8") as handle:
        # every URL on the page without its password: the config's, quarantine's, and any a value holds (a run
        # of an older skewless kept the password in its config.yaml)
        handle.write(without_credentials(page))
    os.replace(partial, path)
    return path
