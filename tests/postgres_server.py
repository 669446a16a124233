"""A PostgreSQL server of a test's own: initdb and pg_ctl into a fresh folder, on a free port, trusting every
login (any password is taken, so tests may put one in a URL). Skipped where Debian's server binaries are absent.

`server()` is the server of a `with` block (tests/end_to_end/test_sql_sources.py's module fixture); `shared_url()`
starts one server the first time a test asks and stops it when the test process ends (data-driven cases, which
get no fixtures: tests/hostile/cases_secrets_and_warm.py).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest

# Debian's server binaries, of whichever major version the machine has (15 here; a newer image may bring another)
PG_BIN = max(Path("/usr/lib/postgresql").glob("*/bin"), key=lambda path: int(path.parent.name),
             default=Path("/usr/lib/postgresql/15/bin"))
_shared: list[str] = []


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def server():
    """A running server for the block: its URL (user postgres, no password); stopped and removed after."""
    if not (PG_BIN / "initdb").exists():
        pytest.skip(f"PostgreSQL's server binaries are not in {PG_BIN} (apt-get install postgresql)")
    as_user = []
    folder = Path(tempfile.mkdtemp(prefix="skewless-pg-"))  # not under pytest's tmp: its root-only parents
    if os.geteuid() == 0:  # initdb refuses to run as root: run the server as the package's postgres user
        try:
            user = pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root and there is no postgres user to run the server as")
        os.chown(folder, user.pw_uid, user.pw_gid)
        as_user = ["runuser", "-u", "postgres", "--"]
    data, port = folder / "data", _free_port()
    try:
        subprocess.run([*as_user, str(PG_BIN / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres"],
                       check=True, capture_output=True)
        options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1"
        subprocess.run([*as_user, str(PG_BIN / "pg_ctl"), "-D", str(data), "-o", options, "-l",
                        str(folder / "log"), "-w", "start"], check=True, capture_output=True)
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([*as_user, str(PG_BIN / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
                       capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)


def shared_url() -> str:
    """The URL of the process's shared server, started on the first call."""
    if not _shared:
        stack = contextlib.ExitStack()
        _shared.append(stack.enter_context(server()))
        atexit.register(stack.close)
    return _shared[0]
