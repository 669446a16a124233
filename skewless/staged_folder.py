"""A folder written under a claimed staging name beside its final path and published whole by rename, on a local
disk: a run's, an applied run's, predictions' (pipelines/output/staging.py) and an export's (layers/export.py).

``OUTPUT.staging`` is claimed by renaming a folder of this process's own, ``OUTPUT.staging-PID-TOKEN``, onto
it: the rename fails while another run's claim exists. Each holds an ``owner`` record: the process (pid, its
start time and the boot it started in, so a pid that another process took since is no owner), a random token
(also in the claim folder's name) and the identity (device, inode) of the folder it was written in. Only a folder
whose record matches it is skewless's: a folder merely named like one (``out.staging-backup``, a copy of a
claim) is never removed, by a run or by `skewless clean`. The claiming process also holds its owner file locked
(`flock`) while it holds the claim: a claim whose lock is held is live whatever its pid says here, as for a run in
another PID namespace (a container sharing the volume), whose pid means another process, or none, on this side.

Publishing swaps the staged folder with a replaced output in one rename (``RENAME_EXCHANGE``) where the kernel
has it, so the output path holds the old output or the new one, whole, at every moment; the old one then goes
with the claim. Without the exchange the old output is renamed into the claim first.

Only the standard library: the serving path (`skewless export`) stages its SavedModel here without Beam.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import json
import os
import re
import secrets
import shutil
import threading
from typing import Callable, Iterable

from skewless.errors import OutputError, OutputExistsError
from skewless.run_directory import RUN_FILE

STAGING_SUFFIX = ".staging"
OWNER_FILE = "owner"
STAGED = "run"  # the folder inside a claim that becomes the output
_RECORD_KIND = "skewless staging claim"
_NAME_MAX = 255  # bytes of a file name on Linux's and macOS's file systems
_PID_MAX = 4194304  # the largest process ID Linux gives (/proc/sys/kernel/pid_max's ceiling)
_TOKEN_BYTES = 8  # of a claim's random token, written in hex
# the tokens of the claims this process holds (a record naming this process is live only while listed here)
_LIVE_TOKENS: set[str] = set()
_LIVE_LOCK = threading.Lock()
# token -> the descriptor of its claim's owner file, which this process holds locked while it holds the claim
_LOCKED: dict[str, int] = {}


def staging_name(output_dir: str) -> str:
    """``OUTPUT.staging``; an output must have a name of its own (not the root folder), short enough for its claim
    candidate's name (``OUTPUT.staging-PID-TOKEN``) to fit a file name."""
    trimmed = output_dir.rstrip("/")
    name = os.path.basename(trimmed)
    if not name:
        raise OutputError(f"{output_dir or '/'}: the root folder cannot be an output (name a folder inside it)")
    longest = _NAME_MAX - len(f"{STAGING_SUFFIX}-{_PID_MAX}-") - 2 * _TOKEN_BYTES
    if len(os.fsencode(name)) > longest:
        raise OutputError(f"{output_dir}: the output's name is {len(os.fsencode(name))} bytes long; at most "
                          f"{longest} (it is written beside itself as {name[:12]}....staging-PID-TOKEN first, and a "
                          f"file name has at most {_NAME_MAX} bytes)")
    return trimmed + STAGING_SUFFIX


# ------------------------------------------------------------------------------------------- who owns a claim

def _boot_id() -> str | None:
    try:
        with open("/proc/sys/kernel/random/boot_id") as handle:
            return handle.read().strip()
    except OSError:
        return None


def process_status(pid: int) -> tuple[str, int] | None:
    """Process `pid`'s state letter ("Z": ended, not yet waited for) and when it started (clock ticks since boot):
    /proc/PID/stat fields 3 and 22; None when there is no such process or no /proc."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return None
    # field 2, the command name, is in parentheses and may hold spaces and parentheses itself
    fields = stat[stat.rindex(b")") + 2:].split()
    return fields[0].decode(), int(fields[19])


def _start_time(pid: int) -> int | None:
    status = process_status(pid)
    return status[1] if status is not None else None


def _owner_record(folder: str, token: str) -> dict:
    identity = os.stat(folder)
    return {"kind": _RECORD_KIND, "pid": os.getpid(), "started": _start_time(os.getpid()), "boot": _boot_id(),
            "token": token, "folder": [identity.st_dev, identity.st_ino]}


def read_owner(folder: str, token: str | None = None) -> dict | None:
    """The owner record of `folder` when skewless wrote it there: a record of the right form whose folder identity
    is `folder`'s own (a copied or moved-in folder is not), with `token` when given; else None."""
    if os.path.islink(folder) or not os.path.isdir(folder):
        return None
    try:
        with open(os.path.join(folder, OWNER_FILE), "rb") as handle:
            record = json.loads(handle.read(4096))
        identity = os.stat(folder)
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("kind") != _RECORD_KIND:
        return None
    if record.get("folder") != [identity.st_dev, identity.st_ino] or not isinstance(record.get("pid"), int):
        return None
    if not isinstance(record.get("token"), str) or (token is not None and record["token"] != token):
        return None
    record["path"] = folder
    return record


def owner_alive(record: dict) -> bool:
    """Whether the process that wrote `record` still runs: its owner file locked (`_lock_held`: a run in another PID
    namespace too), or the same pid, started at the same time, in this boot (a record of an older skewless, a
    filesystem whose locks cannot be told)."""
    pid = record["pid"]
    if pid == os.getpid() and record.get("started") == _start_time(pid):
        with _LIVE_LOCK:
            return record["token"] in _LIVE_TOKENS  # this process: a claim it still holds (a notebook's other run)
    if "path" in record and _lock_held(record["path"]):
        return True
    started = _start_time(pid)
    if started is not None:
        return started == record.get("started") and _boot_id() == record.get("boot")
    if record.get("started") is not None and os.path.isdir("/proc"):
        return False  # /proc is there and has no such process
    try:  # no /proc (not Linux): the pid is all there is to go by
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _lock_held(folder: str) -> bool | None:
    """Whether a process holds `folder`'s owner file locked (a live claim, in any PID namespace of this kernel), or
    None where that cannot be told (no such file, a filesystem without locks)."""
    try:
        descriptor = os.open(os.path.join(folder, OWNER_FILE), os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return None
    finally:
        os.close(descriptor)  # and with it the lock just taken, if it was free
    return False


def _hold_lock(folder: str, token: str) -> None:
    """Locks `folder`'s owner file for as long as this process holds the claim (`release` unlocks it)."""
    descriptor = os.open(os.path.join(folder, OWNER_FILE), os.O_RDONLY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(descriptor)
        return  # a filesystem without locks: the pid tells, as for an older record
    with _LIVE_LOCK:
        _LOCKED[token] = descriptor


def _unlock(token: str) -> None:
    with _LIVE_LOCK:
        descriptor = _LOCKED.pop(token, None)
    if descriptor is not None:
        os.close(descriptor)


# ---------------------------------------------------------------------------------------------------- claiming

def claim(output_dir: str) -> str:
    """Makes ``<output>.staging`` this process's; returns it (the output is written in its ``run/``). A claim
    left by a process that is gone is taken over; one of a live process, or anything skewless did not make, is
    refused in one line. `release` gives it up."""
    claimed = staging_name(output_dir)
    remove_stale_candidates(output_dir)
    token = secrets.token_hex(_TOKEN_BYTES)
    candidate = f"{claimed}-{os.getpid()}-{token}"
    try:
        os.makedirs(candidate)  # and the output's parent folders
        with _LIVE_LOCK:
            _LIVE_TOKENS.add(token)
        # written aside, then renamed: a process killed meanwhile leaves no half record
        with open(os.path.join(candidate, OWNER_FILE + ".tmp"), "w") as handle:
            handle.write(json.dumps(_owner_record(candidate, token)))
        os.rename(os.path.join(candidate, OWNER_FILE + ".tmp"), os.path.join(candidate, OWNER_FILE))
        _hold_lock(candidate, token)
        os.mkdir(os.path.join(candidate, STAGED))
    except OSError as error:
        _forget(candidate, token)
        raise unwritable(output_dir, error) from None
    for attempt in range(2):
        try:
            rename_no_replace(candidate, claimed)
            return claimed
        except OSError:
            record = read_owner(claimed)
            if attempt or record is None or owner_alive(record):
                _forget(candidate, token)
                raise _claimed(output_dir, claimed, record) from None
            shutil.rmtree(claimed, ignore_errors=True)  # left by a killed run
    return claimed


def release(claimed: str) -> None:
    """Removes this process's claim and what is in it (the staged output, a replaced one)."""
    record = read_owner(claimed)
    shutil.rmtree(claimed, ignore_errors=True)
    if record is not None:
        with _LIVE_LOCK:
            _LIVE_TOKENS.discard(record["token"])
        _unlock(record["token"])


def _forget(candidate: str, token: str) -> None:
    shutil.rmtree(candidate, ignore_errors=True)
    with _LIVE_LOCK:
        _LIVE_TOKENS.discard(token)
    _unlock(token)


def _what(path: str) -> str:
    return ("a link" if os.path.islink(path) else "a folder that no skewless run made (no owner record of one)"
            if os.path.isdir(path) else "a file")


def _claimed(output_dir: str, claimed: str, record: dict | None) -> OutputExistsError:
    """Why the staging name is taken, and the way out."""
    if record is not None and owner_alive(record):
        return OutputExistsError(f"{output_dir}: another skewless run (pid {record['pid']}) is writing this output; "
                                 f"once it has ended, `skewless clean {output_dir}` removes what it left")
    return OutputExistsError(f"{claimed}: {_what(claimed)} is where this output must be staged; skewless removes only "
                             "what a skewless run made: move or delete it yourself")


_CANDIDATE = re.compile(r"(\d+)-([0-9a-f]{16})")


def remove_stale_candidates(output_dir: str) -> list[str]:
    """Deletes the claim candidates (``<output>.staging-PID-TOKEN``) of processes that are gone (killed while
    claiming), each proven by its owner record (the token of its name, its own folder); returns them. Anything
    else named ``<output>.staging-...`` is someone's and stays."""
    parent, name = os.path.split(os.path.abspath(output_dir))
    prefix = name + STAGING_SUFFIX + "-"
    if not os.path.isdir(parent):
        return []
    removed = []
    for entry in sorted(os.listdir(parent)):
        matched = _CANDIDATE.fullmatch(entry[len(prefix):]) if entry.startswith(prefix) else None
        if matched is None:
            continue
        path = os.path.join(parent, entry)
        record = read_owner(path, token=matched.group(2))
        if record is not None and record["pid"] == int(matched.group(1)) and not owner_alive(record):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def clean(output_dir: str) -> list[str]:
    """Removes what runs of `output_dir` that are gone left beside it: their claim and claim candidates, each
    proven skewless's by its owner record. `output_dir` itself is never touched; a claim of a live run, or
    anything under the claim's name that skewless did not make, is refused in one line. Returns what was
    removed."""
    claimed = staging_name(output_dir)
    removed = remove_stale_candidates(output_dir)
    if os.path.lexists(claimed):
        record = read_owner(claimed)
        if record is None:
            raise OutputError(f"{claimed}: {_what(claimed)}; `skewless clean` removes only what a skewless run left: "
                              "move or delete it yourself")
        if owner_alive(record):
            raise OutputExistsError(f"{claimed}: a running skewless (pid {record['pid']}) is writing {output_dir}; "
                                    "stop it first (its staging folder goes when it ends)")
        shutil.rmtree(claimed)
        removed.append(claimed)
    return removed


# -------------------------------------------------------------------------------------------------- publishing

def publish(staged: str, output_dir: str, claimed: str, check_replaceable: Callable[[str], None] | None) -> None:
    """Moves the finished output in `staged` to `output_dir`. With `check_replaceable` (--overwrite), what is at
    `output_dir` is checked by it (it raises when that may not be replaced) and swapped out into the claim,
    removed with it; without it, an existing `output_dir` is refused. Whatever appeared meanwhile stays."""
    try:
        os.makedirs(os.path.dirname(os.path.abspath(output_dir)), exist_ok=True)
    except OSError as error:
        raise unwritable(output_dir, error) from None
    if check_replaceable is not None and os.path.lexists(output_dir):
        check_replaceable(output_dir)
        try:
            _renameat2(staged, output_dir, _RENAME_EXCHANGE)
            return  # `staged` holds the old output now: it goes with the claim
        except OSError as error:
            if error.errno not in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
                raise
        os.rename(output_dir, os.path.join(claimed, "replaced"))
    try:
        rename_no_replace(staged, output_dir)
    except FileExistsError:
        raise OutputExistsError(f"{output_dir}: output directory exists (another run may have published it while "
                                "this one ran; pass --overwrite to replace it)") from None


def rename_no_replace(source: str, destination: str) -> None:
    """Renames `source` to `destination`, atomically refusing (FileExistsError) when `destination` exists."""
    try:
        _renameat2(source, destination, _RENAME_NOREPLACE)
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
_RENAME_EXCHANGE = 2


def _renameat2(source: str, destination: str, flags: int) -> None:
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        raise OSError(errno.ENOSYS, "renameat2 is not available") from None
    result = renameat2(_AT_FDCWD, os.fsencode(source), _AT_FDCWD, os.fsencode(destination), flags)
    if result != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), destination)


def unwritable(output_dir: str, error: OSError) -> OutputError:
    """The output cannot be created: names its first parent that is not a folder, else the OS's reason."""
    parent = os.path.dirname(os.path.abspath(output_dir))
    while parent != os.path.dirname(parent) and not os.path.lexists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        return OutputError(f"{output_dir}: cannot be created: {parent} is a file, not a folder")
    return OutputError(f"{output_dir}: cannot be created in {parent} ({error.strerror})")


# ----------------------------------------------------------------------------------- an output is not an input

def output_exists(output_dir: str) -> OutputExistsError:
    """The refusal of an existing output without --overwrite, naming --overwrite only where it could replace what
    is there (a previous output, an empty folder: pipelines/output/staging.check_replaceable judges it whole)."""
    only = "write the output elsewhere (--overwrite replaces only a previous output or an empty folder)"
    if "://" not in output_dir:
        if os.path.islink(output_dir) or not os.path.isdir(output_dir):  # --overwrite would refuse these too
            return OutputExistsError(f"{output_dir}: exists and is a file or a link, not a folder; {only}")
        try:
            foreign = bool(os.listdir(output_dir)) and not os.path.lexists(os.path.join(output_dir, RUN_FILE))
        except OSError:
            foreign = False  # unreadable: --overwrite's own check names why
        if foreign:
            return OutputExistsError(f"{output_dir}: a folder that is not a skewless output (no {RUN_FILE}); {only}")
    return OutputExistsError(f"{output_dir}: output directory exists (pass --overwrite to replace it)")


def check_not_input(output_dir: str, folders: Iterable[str] = (), files: Iterable[str] = ()) -> None:
    """Refuses an output that would replace or change what the command reads: one of the `folders` it reads
    (a run, an export), a folder inside one, or a folder holding one of them or of its input `files` (links
    followed); and, as `staging_name` does, the root folder and a name too long to stage the output beside."""
    if "://" in output_dir:
        return
    staging_name(output_dir)
    output = os.path.realpath(output_dir)
    for path, is_folder in [*((f, True) for f in folders), *((f, False) for f in files)]:
        if not path or "://" in path:
            continue
        read = os.path.realpath(path)
        if read == output:
            raise OutputError(f"{output_dir}: is what this command reads ({path}); write the output elsewhere")
        if _inside(read, output):
            raise OutputError(f"{output_dir}: holds {path}, which this command reads; write the output elsewhere")
        if is_folder and _inside(output, read):
            raise OutputError(f"{output_dir}: is inside {path}, which this command reads; write the output elsewhere")


def _inside(path: str, folder: str) -> bool:
    return path.startswith(folder.rstrip("/") + "/")
