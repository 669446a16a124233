"""The staging folder of a job's output (a run, an applied run, predictions): claimed before the pipeline starts,
published when everything succeeded.

A job writes only into ``<output>.staging/run/``. Its fixed name keeps the temp paths, which
tf.Transform bakes into the graph's table names, the same on every run of an output.

On a local disk (a path without a scheme) the claim is exclusive and the publish atomic, both by rename
(skewless/staged_folder.py, which `skewless export` shares): the output path holds a whole output or nothing at
every moment (the old output or the new one, with `--overwrite`), a second live run of the same output is refused,
and only what a skewless run made is ever removed (its owner record proves it, not its name). Without
`--overwrite` the publishing rename itself refuses an existing output (`renameat2(RENAME_NOREPLACE)`), so a run
published by another process while this one ran is never replaced; with it, only a previous output of the same
command (`check_replaceable`: a run for `run`, an applied run for `apply`, predictions for `predict`, each known by
its run.json) or an empty folder is replaced, both before the pipeline and at publish time, and never what the
command reads (`StagedOutput`'s `inputs`). An object store (gs://, s3://) has
no atomic rename and no way to create a name only if it is absent, so there a claim clears what an
earlier run left (a concurrent run of the same output is not detected) and publishing copies the run
file by file, run.json last: a run directory is complete when its run.json exists; a replaced output
loses its run.json first, then its files.
"""

from __future__ import annotations

import fnmatch
import os
from contextlib import contextmanager
from typing import Iterable, Iterator

from apache_beam.io.filesystems import FileSystems

from skewless import interrupt_request, staged_folder
from skewless.errors import InputError, OutputError, OutputExistsError
from skewless.output_formats import OUTPUT_FORMATS, output_format
from skewless.pipelines.output import files, object_store
from skewless.run_directory import (
    CONFIG_FILE,
    DATA_DIR,
    GRAPH_DIR,
    KERAS_PREPROCESSOR_CHECK_FILE,
    KERAS_PREPROCESSOR_FILE,
    PREDICTIONS_GLOB,
    QUARANTINE_DIR,
    QUARANTINE_GLOB,
    REPORT_FILE,
    RUN_FILE,
    SHARD_GLOB,
    STATISTICS_DIR,
)
from skewless.run_summary import PredictionSummary, output_summary
from skewless.staged_folder import STAGED, staging_name

# what each command writes, as its --overwrite names it: it replaces only an output of its own kind
KINDS = {"run": "a run of `skewless run`", "applied": "an output of `skewless apply`",
         "predictions": "predictions of `skewless predict`"}


class StagedOutput:
    """The output of a job (a run, an applied run, predictions): checked before any work starts, written in a
    claimed staging folder, published whole when the work succeeded, and the staging folder removed either way.

    ``StagedOutput(output_dir, overwrite, beam_args, kind, ...)`` refuses in one line an existing output (or,
    with `overwrite`, one that is not a previous output of `kind`, a key of `KINDS`), and an output that is, holds
    or lies inside what the command reads (`folders`: a run, an export; `inputs`: files or globs);
    ``with output.staging() as folder:`` yields the folder to write.
    """

    def __init__(self, output_dir: str, overwrite: bool, beam_args: list[str], kind: str,
                 folders: Iterable[str] = (), inputs: Iterable[str] = ()):
        self.output_dir, self.overwrite, self.kind = output_dir, overwrite, kind
        self._reads = (list(folders), list(inputs))
        # TensorFlow cannot write some stores (s3://): the output is then staged here and uploaded
        self._stand_in = object_store.local_stand_in(output_dir, beam_args)
        staged_folder.check_not_input(output_dir, *self._reads)
        if overwrite:
            self._check_replaceable(output_dir)  # again at publish time: something else may appear there meanwhile
        elif os.path.lexists(output_dir) if files.is_local(output_dir) else files.exists(output_dir):
            raise staged_folder.output_exists(output_dir)  # a dangling link too: publishing would be refused at the end

    def _check_replaceable(self, output_dir: str) -> None:
        staged_folder.check_not_input(output_dir, *self._reads)
        check_replaceable(output_dir, self.kind)

    @contextmanager
    def staging(self, claimed: str | None = None) -> Iterator[str]:
        """Yields the staging folder to write, published once the body succeeded; released either way. `claimed`:
        a claim of the output's staging name this process took already (`skewless run`'s, to parse ahead in)."""
        claimed = claimed or claim(self._stand_in or self.output_dir)
        try:
            staged = os.path.join(claimed, STAGED)
            yield staged
            interrupt_request.stop_if_requested()  # a Ctrl-C a C extension swallowed publishes nothing either
            if self._stand_in:
                clear_remote_output(self.output_dir, self.overwrite, self.kind)
                object_store.upload(staged, self.output_dir)
            elif files.is_local(self.output_dir):
                staged_folder.publish(staged, self.output_dir, claimed,
                                      self._check_replaceable if self.overwrite else None)
            else:
                publish(staged, self.output_dir, claimed, self.overwrite, self.kind)
        finally:
            if files.is_local(claimed):
                staged_folder.release(claimed)
            else:
                files.remove_tree(claimed)


def check_replaceable(output_dir: str, kind: str) -> None:
    """Refuses, in one line naming it, anything at `output_dir` that `--overwrite` must not delete: only a
    previous output of the command's `kind` (its run.json reads as that kind's summary, of a layout this skewless
    reads, `output_summary`) or an empty folder may be replaced. A folder merely holding something named
    run.json (a folder, someone's JSON, a newer skewless's run) is not one, nor another command's output."""
    if not files.is_local(output_dir):
        if files.exists(output_dir):
            marker = FileSystems.join(output_dir, RUN_FILE)
            if not FileSystems.exists(marker):
                raise OutputError(f"{output_dir}: holds files but no {RUN_FILE}, so it is not a skewless run; "
                                  f"{_only(kind)} (delete it yourself if it should go)")
            _check_previous_output(output_dir, files.read_bytes(marker), marker, kind)
        return
    if not os.path.lexists(output_dir):
        return
    if not os.path.isdir(output_dir) or os.path.islink(output_dir):
        raise OutputError(f"{output_dir}: is a file, not a skewless run; {_only(kind)} or an empty folder "
                          "(delete it yourself if it should go)")
    entries = sorted(os.listdir(output_dir))
    if not entries:
        return
    if RUN_FILE not in entries:
        shown = ", ".join(entries[:3]) + (", ..." if len(entries) > 3 else "")
        raise OutputError(f"{output_dir}: a folder that is not a skewless run (no {RUN_FILE}; holds {shown}); "
                          f"{_only(kind)} or an empty folder")
    marker = os.path.join(output_dir, RUN_FILE)
    if os.path.islink(marker) or not os.path.isfile(marker):
        what = "a link" if os.path.islink(marker) else "a folder" if os.path.isdir(marker) else "not a file"
        raise OutputError(f"{output_dir}: its {RUN_FILE} is {what}, so it is not a skewless run; {_only(kind)} "
                          "or an empty folder (delete it yourself if it should go)")
    try:
        with open(marker, "rb") as handle:
            summary = handle.read()
    except OSError as error:
        raise OutputError(f"{marker}: cannot read ({error.strerror}), so {output_dir} is not known to be a skewless "
                          f"run; {_only(kind)}") from None
    _check_previous_output(output_dir, summary, marker, kind)
    added = _added_files(output_dir, kind)
    if added:
        shown = ", ".join(added[:3]) + (", ..." if len(added) > 3 else "")
        raise OutputError(f"{output_dir}: holds {shown}, which {KINDS[kind]} did not write; --overwrite replaces only "
                          "a previous output as it was written (move those out, or delete it yourself)")


# What a published output holds: by name at its top, and in its folders of files of one kind, by name pattern (the
# run directory's names, skewless/run_directory.py; the run files of each output format, `_format_run_files`); a
# tf.Transform graph's and the statistics' own layouts inside
_WRITTEN_TOP = {
    "run": {RUN_FILE, CONFIG_FILE, REPORT_FILE, DATA_DIR, GRAPH_DIR, STATISTICS_DIR, QUARANTINE_DIR,
            KERAS_PREPROCESSOR_FILE, KERAS_PREPROCESSOR_CHECK_FILE},
    "applied": {RUN_FILE, CONFIG_FILE, REPORT_FILE, DATA_DIR, GRAPH_DIR, STATISTICS_DIR, QUARANTINE_DIR},
    "predictions": {RUN_FILE, QUARANTINE_DIR},
}
_WRITTEN_INSIDE = {DATA_DIR: SHARD_GLOB, QUARANTINE_DIR: QUARANTINE_GLOB}


def _format_run_files() -> set[str]:
    """The files beside the shards that any output format writes into a run and an applied run (`run_files`)."""
    return {name for format_name in OUTPUT_FORMATS for name in output_format(format_name).run_files}


def _added_files(output_dir: str, kind: str) -> list[str]:
    """Entries of a previous output of `kind` that it would not have written (a user's NOTES.txt, checkpoints/), by
    path relative to it."""
    written = _WRITTEN_TOP[kind] | (_format_run_files() if kind != "predictions" else set())
    added = []
    for name in sorted(os.listdir(output_dir)):
        path = os.path.join(output_dir, name)
        if name not in written and not (kind == "predictions" and fnmatch.fnmatch(name, PREDICTIONS_GLOB)):
            added.append(name + "/" * os.path.isdir(path))
        elif name in _WRITTEN_INSIDE and os.path.isdir(path):
            pattern = _WRITTEN_INSIDE[name]
            added += [f"{name}/{inner}" for inner in sorted(os.listdir(path))
                      if not (fnmatch.fnmatch(inner, pattern) and os.path.isfile(os.path.join(path, inner)))]
    return added


def _only(kind: str) -> str:
    return f"--overwrite here replaces only {KINDS[kind]}"


def _check_previous_output(output_dir: str, summary: bytes, marker: str, kind: str) -> None:
    try:
        found = output_summary(summary, marker)
    except InputError as error:
        raise OutputError(f"{output_dir}: not a skewless run that --overwrite may replace: {error}; delete it "
                          "yourself if it should go") from None
    found_kind = ("predictions" if isinstance(found, PredictionSummary) else "applied" if found.applied is not None
                  else "run")
    if found_kind != kind:
        raise OutputError(f"{output_dir}: holds {KINDS[found_kind]}; {_only(kind)} (write elsewhere, or delete it "
                          "yourself if it should go)")


def claim(output_dir: str) -> str:
    """Makes ``<output>.staging`` this run's; returns it (the run is written in its ``run/``)."""
    if files.is_local(output_dir):
        return staged_folder.claim(output_dir)
    claimed = staging_name(output_dir)
    files.remove_tree(claimed)  # left by an earlier run: on an object store, nothing tells a live one apart
    return claimed


def publish(staging: str, output_dir: str, claimed: str, overwrite: bool, kind: str) -> None:
    """Moves the finished run in `staging` to `output_dir` on an object store (`staged_folder.publish` on a local
    disk); with `overwrite`, replaces a previous output of `kind` there.

    On a refusal the caller removes the claim, and the staged run with it.
    """
    clear_remote_output(output_dir, overwrite, kind)
    sources = files.files_under(staging)
    marker = FileSystems.join(staging, RUN_FILE)
    # two renames, not one: a store may rename one list's files in any order
    for batch in ([path for path in sources if path != marker], [marker]):
        FileSystems.rename(batch, [FileSystems.join(output_dir, path[len(staging):].lstrip("/")) for path in batch])
    files.remove_tree(staging)


def clear_remote_output(output_dir: str, overwrite: bool, kind: str) -> None:
    """Before a run is published to an object store: refuses what must not be replaced, then deletes the
    old run, its run.json first (the new files follow, their run.json last)."""
    # an object store cannot create a name only if it is absent: this check and the copy after it can race
    if overwrite:
        check_replaceable(output_dir, kind)
    elif files.exists(output_dir):
        raise OutputExistsError(f"{output_dir}: output directory exists (another run may have published it while "
                                "this one ran; pass --overwrite to replace it)")
    old_marker = FileSystems.join(output_dir, RUN_FILE)
    if FileSystems.exists(old_marker):
        FileSystems.delete([old_marker])
    files.remove_tree(output_dir)


def clean(output_dir: str) -> list[str]:
    """Removes what runs of `output_dir` that are gone left beside it (`staged_folder.clean`: only what a skewless
    run made); on an object store, ``<output>.staging`` whatever it holds (nothing there tells a live run's claim
    apart, see `claim`). `output_dir` itself is never touched. Returns what was removed."""
    if files.is_local(output_dir):
        return staged_folder.clean(output_dir)
    claimed = staging_name(output_dir)
    if not files.files_under(claimed):
        return []
    files.remove_tree(claimed)
    return [claimed]
