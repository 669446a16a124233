"""The staging folder of a run: claimed before the pipeline starts, published when everything succeeded.

A run writes only into ``<output>.staging/run/``. Its fixed name keeps the temp paths, which
tf.Transform bakes into the graph's table names, the same on every run of an output.

On a local disk (a path without a scheme) the claim is exclusive and the publish atomic, both by
rename: the output path holds a whole run or nothing at every moment, and a second live run of the
same output is refused. An object store (gs://, s3://) has no atomic rename and no way to create a name
only if it is absent, so there a claim clears what an earlier run left (a concurrent run of the same
output is not detected) and publishing copies the run file by file, run.json last: a run directory is
complete when its run.json exists; a replaced output loses its run.json first, then its files.
"""

from __future__ import annotations

import os
import shutil
import uuid

from apache_beam.io.filesystems import FileSystems

from skewless.errors import OutputExistsError
from skewless.pipelines import files

STAGING_SUFFIX = ".staging"
OWNER_FILE = "owner"
RUN_FILE = "run.json"  # written last: a run directory with it is complete


def claim(output_dir: str) -> str:
    """Makes ``<output>.staging`` this run's; returns it (the run is written in its ``run/``)."""
    if files.is_local(output_dir):
        return _claim_local(output_dir)
    claimed = _staging_name(output_dir)
    files.remove_tree(claimed)  # left by an earlier run: on an object store, nothing tells a live one apart
    return claimed


def publish(staging: str, output_dir: str, claimed: str) -> None:
    """Moves the finished run in `staging` to `output_dir`, replacing an old output there."""
    if files.is_local(output_dir):
        _publish_local(staging, output_dir, claimed)
        return
    old_marker = FileSystems.join(output_dir, RUN_FILE)
    if FileSystems.exists(old_marker):
        FileSystems.delete([old_marker])
    files.remove_tree(output_dir)
    sources = files.files_under(staging)
    marker = FileSystems.join(staging, RUN_FILE)
    # two renames, not one: a store may rename one list's files in any order
    for batch in ([path for path in sources if path != marker], [marker]):
        FileSystems.rename(batch, [FileSystems.join(output_dir, path[len(staging):].lstrip("/")) for path in batch])
    files.remove_tree(staging)


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
    os.makedirs(os.path.join(candidate, "run"))
    with open(os.path.join(candidate, OWNER_FILE), "w") as handle:
        handle.write(str(os.getpid()))
    for attempt in range(2):
        try:
            os.rename(candidate, claim)
            return claim
        except OSError:
            owner = _owner(claim)
            if attempt or (owner is not None and _process_alive(owner)):
                shutil.rmtree(candidate, ignore_errors=True)
                raise OutputExistsError(
                    f"{output_dir}: another skewless run (pid {owner}) is writing this output; if none is, delete {claim}"
                )
            shutil.rmtree(claim, ignore_errors=True)  # left by a killed run
    return claim


def _owner(claim: str) -> int | None:
    try:
        with open(os.path.join(claim, OWNER_FILE)) as handle:
            return int(handle.read())
    except (OSError, ValueError):
        return None


def _publish_local(staging: str, output_dir: str, claim: str) -> None:
    """Moves the finished run into place: the output path holds a whole run or nothing at every moment.

    An old output is renamed into the claim (deleted with it) just before, never deleted in place.
    """
    os.makedirs(os.path.dirname(os.path.abspath(output_dir)), exist_ok=True)
    if os.path.exists(output_dir):
        os.rename(output_dir, os.path.join(claim, "replaced"))
    os.rename(staging, output_dir)


def _remove_stale_candidates(output_dir: str) -> None:
    """Deletes ``<output>.staging-<pid>-<token>`` directories whose process is gone (killed while claiming)."""
    parent, name = os.path.split(os.path.abspath(output_dir))
    prefix = name + STAGING_SUFFIX + "-"
    if not os.path.isdir(parent):
        return
    for entry in os.listdir(parent):
        if entry.startswith(prefix):
            pid = entry[len(prefix) :].split("-", 1)[0]
            if not pid.isdigit() or not _process_alive(int(pid)):
                shutil.rmtree(os.path.join(parent, entry), ignore_errors=True)


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
