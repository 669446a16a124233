"""The staging folder of a run: claimed before the pipeline starts, published when everything succeeded.

A run writes only into ``<output>.staging/run/``. Its fixed name keeps the temp paths, which
tf.Transform bakes into the graph's table names, the same on every run of an output.

On a local disk (a path without a scheme) the claim is exclusive and the publish atomic, both by rename:
the output path holds a whole run or nothing at every moment, and a second live run of the same output
is refused. Without `--overwrite` the publishing rename itself refuses an existing output
(`renameat2(RENAME_NOREPLACE)`), so a run published by another process while this one ran is never
replaced; with it, only a previous output of skewless (a folder whose run.json reads as one of skewless's
summaries, of a layout this skewless reads) or an empty folder is replaced (`check_replaceable`, both
before the pipeline and at publish time). An object store (gs://, s3://) has
no atomic rename and no way to create a name only if it is absent, so there a claim clears what an
earlier run left (a concurrent run of the same output is not detected) and publishing copies the run
file by file, run.json last: a run directory is complete when its run.json exists; a replaced output
loses its run.json first, then its files.
"""

from __future__ import annotations

import ctypes
import errno
import os
import shutil
import uuid
from contextlib import contextmanager
from typing import Iterator

from apache_beam.io.filesystems import FileSystems

from skewless.errors import InputError, OutputError, OutputExistsError, output_exists
from skewless.pipelines.output import files, object_store
from skewless.run_directory import RUN_FILE
from skewless.run_summary import output_summary

STAGING_SUFFIX = ".staging"
OWNER_FILE = "owner"


class StagedOutput:
    """The output of a job (a run, an applied run, predictions): checked before any work starts, written in a
    claimed staging folder, published whole when the work succeeded, and the staging folder removed either way.

    ``StagedOutput(output_dir, overwrite, beam_args)`` refuses an existing output (or, with `overwrite`, one
    that is not a previous run) in one line; ``with output.staging() as folder:`` yields the folder to write.
    """

    def __init__(self, output_dir: str, overwrite: bool, beam_args: list[str]):
        self.output_dir, self.overwrite = output_dir, overwrite
        # TensorFlow cannot write some stores (s3://): the output is then staged here and uploaded
        self._stand_in = object_store.local_stand_in(output_dir, beam_args)
        if overwrite:
            check_replaceable(output_dir)  # again at publish time: something else may appear there meanwhile
        elif files.exists(output_dir):
            raise output_exists(output_dir)

    @contextmanager
    def staging(self) -> Iterator[str]:
        claimed = claim(self._stand_in or self.output_dir)
        try:
            staged = os.path.join(claimed, "run")
            yield staged
            if self._stand_in:
                clear_remote_output(self.output_dir, self.overwrite)
                object_store.upload(staged, self.output_dir)
            else:
                publish(staged, self.output_dir, claimed, self.overwrite)
        finally:
            files.remove_tree(claimed)


def check_replaceable(output_dir: str) -> None:
    """Refuses, in one line naming it, anything at `output_dir` that `--overwrite` must not delete: only a
    previous output of skewless (its run.json reads as a run or prediction summary of a layout this skewless
    reads, `output_summary`) or an empty folder may be replaced. A folder merely holding something named
    run.json (a folder, someone's JSON, a newer skewless's run) is not one."""
    if not files.is_local(output_dir):
        if files.exists(output_dir):
            marker = FileSystems.join(output_dir, RUN_FILE)
            if not FileSystems.exists(marker):
                raise OutputError(f"{output_dir}: holds files but no {RUN_FILE}, so it is not a skewless run; "
                                  f"{_ONLY_RUNS} (delete it yourself if it should go)")
            _check_previous_output(output_dir, files.read_bytes(marker), marker)
        return
    if not os.path.lexists(output_dir):
        return
    if not os.path.isdir(output_dir) or os.path.islink(output_dir):
        raise OutputError(f"{output_dir}: is a file, not a skewless run; {_ONLY_RUNS} or an empty folder "
                          "(delete it yourself if it should go)")
    entries = sorted(os.listdir(output_dir))
    if not entries:
        return
    if RUN_FILE not in entries:
        shown = ", ".join(entries[:3]) + (", ..." if len(entries) > 3 else "")
        raise OutputError(f"{output_dir}: a folder that is not a skewless run (no {RUN_FILE}; holds {shown}); "
                          f"{_ONLY_RUNS} or an empty folder")
    marker = os.path.join(output_dir, RUN_FILE)
    if os.path.islink(marker) or not os.path.isfile(marker):
        kind = "a link" if os.path.islink(marker) else "a folder" if os.path.isdir(marker) else "not a file"
        raise OutputError(f"{output_dir}: its {RUN_FILE} is {kind}, so it is not a skewless run; {_ONLY_RUNS} "
                          "or an empty folder (delete it yourself if it should go)")
    try:
        with open(marker, "rb") as handle:
            summary = handle.read()
    except OSError as error:
        raise OutputError(f"{marker}: cannot read ({error.strerror}), so {output_dir} is not known to be a skewless "
                          f"run; {_ONLY_RUNS}") from None
    _check_previous_output(output_dir, summary, marker)


_ONLY_RUNS = "--overwrite replaces only a previous output of skewless"


def _check_previous_output(output_dir: str, summary: bytes, marker: str) -> None:
    try:
        output_summary(summary, marker)
    except InputError as error:
        raise OutputError(f"{output_dir}: not a skewless run that --overwrite may replace: {error}; delete it "
                          "yourself if it should go") from None


def claim(output_dir: str) -> str:
    """Makes ``<output>.staging`` this run's; returns it (the run is written in its ``run/``)."""
    if files.is_local(output_dir):
        return _claim_local(output_dir)
    claimed = _staging_name(output_dir)
    files.remove_tree(claimed)  # left by an earlier run: on an object store, nothing tells a live one apart
    return claimed


def publish(staging: str, output_dir: str, claimed: str, overwrite: bool) -> None:
    """Moves the finished run in `staging` to `output_dir`; with `overwrite`, replaces a previous run there.

    On a refusal the caller removes the claim, and the staged run with it.
    """
    if files.is_local(output_dir):
        _publish_local(staging, output_dir, claimed, overwrite)
        return
    clear_remote_output(output_dir, overwrite)
    sources = files.files_under(staging)
    marker = FileSystems.join(staging, RUN_FILE)
    # two renames, not one: a store may rename one list's files in any order
    for batch in ([path for path in sources if path != marker], [marker]):
        FileSystems.rename(batch, [FileSystems.join(output_dir, path[len(staging):].lstrip("/")) for path in batch])
    files.remove_tree(staging)


def clear_remote_output(output_dir: str, overwrite: bool) -> None:
    """Before a run is published to an object store: refuses what must not be replaced, then deletes the
    old run, its run.json first (the new files follow, their run.json last)."""
    # an object store cannot create a name only if it is absent: this check and the copy after it can race
    if overwrite:
        check_replaceable(output_dir)
    elif files.exists(output_dir):
        raise _exists(output_dir)
    old_marker = FileSystems.join(output_dir, RUN_FILE)
    if FileSystems.exists(old_marker):
        FileSystems.delete([old_marker])
    files.remove_tree(output_dir)


def _staging_name(output_dir: str) -> str:
    return f"{output_dir.rstrip('/')}{STAGING_SUFFIX}"


def _claim_local(output_dir: str) -> str:
    """The claim on a local disk: ``<output>.staging`` holds an ``owner`` file (our pid), the run being
    written (``run/``, tf.Transform's temp dir inside) and, briefly, a replaced output. It is taken over
    from a killed run (its owner gone) and refused while another live run owns it.
    """
    claim = _staging_name(output_dir)
    _remove_stale_candidates(output_dir)
    # built under a name of our own, then renamed: the rename fails while another run's claim exists
    candidate = f"{claim}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        os.makedirs(os.path.join(candidate, "run"))
    except OSError as error:
        raise _unwritable(output_dir, error) from None
    with open(os.path.join(candidate, OWNER_FILE), "w") as handle:
        handle.write(str(os.getpid()))
    for attempt in range(2):
        try:
            os.rename(candidate, claim)
            return claim
        except OSError:
            owner = _owner(claim)
            if attempt or owner is None or _process_alive(owner):
                shutil.rmtree(candidate, ignore_errors=True)
                raise _claimed(output_dir, claim, owner) from None
            shutil.rmtree(claim, ignore_errors=True)  # left by a killed run
    return claim


def _claimed(output_dir: str, claim: str, owner: int | None) -> OutputExistsError:
    """Why the staging name is taken, and the way out: `skewless clean OUTPUT` (`clean`)."""
    if owner is not None and _process_alive(owner):
        return OutputExistsError(f"{output_dir}: another skewless run (pid {owner}) is writing this output; once it "
                                 f"has ended, `skewless clean {output_dir}` removes what it left")
    what = ("a link" if os.path.islink(claim) else "a folder without a run's owner file" if os.path.isdir(claim)
            else "a file")
    return OutputExistsError(f"{claim}: {what} is where this run must stage its output, and no running skewless "
                             f"owns it; `skewless clean {output_dir}` removes it")


def clean(output_dir: str) -> list[str]:
    """Removes what runs of `output_dir` left beside it: ``<output>.staging`` whatever it holds (a file, a
    folder), unless a live run owns it, and the claim candidates of runs that are gone. `output_dir` itself is
    never touched. Returns what was removed."""
    claim = _staging_name(output_dir)
    if not files.is_local(output_dir):
        if not files.files_under(claim):
            return []
        files.remove_tree(claim)  # on an object store nothing tells a live run's claim apart (see `claim`)
        return [claim]
    removed = _remove_stale_candidates(output_dir)
    if os.path.lexists(claim):
        owner = _owner(claim)
        if owner is not None and _process_alive(owner):
            raise OutputExistsError(f"{claim}: a running skewless (pid {owner}) is writing {output_dir}; stop it "
                                    "first (its staging folder goes when it ends)")
        if os.path.isdir(claim) and not os.path.islink(claim):
            shutil.rmtree(claim)
        else:
            os.remove(claim)
        removed.append(claim)
    return removed


def _unwritable(output_dir: str, error: OSError) -> OutputError:
    """The output cannot be created: names its first parent that is not a folder, else the OS's reason."""
    parent = os.path.dirname(os.path.abspath(output_dir))
    while parent != os.path.dirname(parent) and not os.path.lexists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        return OutputError(f"{output_dir}: cannot be created: {parent} is a file, not a folder")
    return OutputError(f"{output_dir}: cannot be created in {parent} ({error.strerror})")


def _owner(claim: str) -> int | None:
    try:
        with open(os.path.join(claim, OWNER_FILE)) as handle:
            return int(handle.read())
    except (OSError, ValueError):
        return None


def _exists(output_dir: str) -> OutputExistsError:
    return OutputExistsError(f"{output_dir}: output directory exists (another run may have published it while "
                             "this one ran; pass --overwrite to replace it)")


def _publish_local(staging: str, output_dir: str, claim: str, overwrite: bool) -> None:
    """Moves the finished run into place: the output path holds a whole run or nothing at every moment.

    With `overwrite`, an old output is renamed into the claim (deleted with it) just before, never
    deleted in place. The final rename never replaces: whatever appeared meanwhile stays.
    """
    try:
        os.makedirs(os.path.dirname(os.path.abspath(output_dir)), exist_ok=True)
    except OSError as error:
        raise _unwritable(output_dir, error) from None
    if overwrite and os.path.lexists(output_dir):
        check_replaceable(output_dir)
        os.rename(output_dir, os.path.join(claim, "replaced"))
    try:
        _rename_no_replace(staging, output_dir)
    except FileExistsError:
        raise _exists(output_dir) from None


def _rename_no_replace(source: str, destination: str) -> None:
    """Renames `source` to `destination`, atomically refusing (FileExistsError) when `destination` exists."""
    try:
        _renameat2_noreplace(source, destination)
        return
    except OSError as error:
        if error.errno not in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
            raise
    # No renameat2 (not Linux, an old kernel, a filesystem without the flag): reserve the name with
    # mkdir, which fails atomically when it exists, then rename onto that empty folder (POSIX renames
    # a directory onto an empty one). If someone filled the reservation meanwhile, the rename fails.
    os.mkdir(destination)
    try:
        os.rename(source, destination)
    except OSError as error:
        try:
            os.rmdir(destination)  # only while still empty: never deletes what another process put there
        except OSError:
            pass
        if error.errno in (errno.ENOTEMPTY, errno.EEXIST):
            raise FileExistsError(errno.EEXIST, "exists", destination) from None
        raise


_AT_FDCWD = -100
_RENAME_NOREPLACE = 1


def _renameat2_noreplace(source: str, destination: str) -> None:
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        raise OSError(errno.ENOSYS, "renameat2 is not available") from None
    result = renameat2(_AT_FDCWD, os.fsencode(source), _AT_FDCWD, os.fsencode(destination), _RENAME_NOREPLACE)
    if result != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), destination)


def _remove_stale_candidates(output_dir: str) -> list[str]:
    """Deletes ``<output>.staging-<pid>-<token>`` directories whose process is gone (killed while claiming);
    returns them."""
    parent, name = os.path.split(os.path.abspath(output_dir))
    prefix = name + STAGING_SUFFIX + "-"
    if not os.path.isdir(parent):
        return []
    removed = []
    for entry in sorted(os.listdir(parent)):
        if entry.startswith(prefix):
            pid = entry[len(prefix) :].split("-", 1)[0]
            if not pid.isdigit() or not _process_alive(int(pid)):
                shutil.rmtree(os.path.join(parent, entry), ignore_errors=True)
                removed.append(os.path.join(parent, entry))
    return removed


def _process_alive(pid: int) -> bool:
    if pid == os.getpid():
        return False  # a staging dir named with our own pid is from an earlier process that had this pid
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
