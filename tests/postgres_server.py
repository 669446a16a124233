"""A PostgreSQL server of its own for tests: initdb and pg_ctl into a fresh folder, on a free port (Debian's server
binaries; skipped where they are absent). tests/end_to_end/test_sql_sources.py's rows and the hostile cases of
issue 41 (tests/hostile/cases_output_safety.py) run against one."""

from __future__ import annotations

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


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class PostgresServer:
    """A started server: `url` reaches it as the superuser postgres (trust authentication); `stop()` ends it and
    removes its folder. Skips the test where the server binaries are absent."""

    def __init__(self):
        if not (PG_BIN / "initdb").exists():
            pytest.skip(f"PostgreSQL's server binaries are not in {PG_BIN} (apt-get install postgresql)")
        self._as_user = []
        self._folder = Path(tempfile.mkdtemp(prefix="skewless-pg-"))  # not under pytest's tmp: its root-only parents
        if os.geteuid() == 0:  # initdb refuses to run as root: run the server as the package's postgres user
            try:
                user = pwd.getpwnam("postgres")
            except KeyError:
                pytest.skip("running as root and there is no postgres user to run the server as")
            os.chown(self._folder, user.pw_uid, user.pw_gid)
            self._as_user = ["runuser", "-u", "postgres", "--"]
        self._data, port = self._folder / "data", _free_port()
        subprocess.run([*self._as_user, str(PG_BIN / "initdb"), "-D", str(self._data), "-A", "trust", "-U",
                        "postgres"], check=True, capture_output=True)
        options = f"-p {port} -k {self._folder} -c listen_addresses=127.0.0.1"
        subprocess.run([*self._as_user, str(PG_BIN / "pg_ctl"), "-D", str(self._data), "-o", options, "-l",
                        str(self._folder / "log"), "-w", "start"], check=True, capture_output=True)
        self.url = f"postgresql://postgres@127.0.0.1:{port}/postgres"

    def stop(self) -> None:
        subprocess.run([*self._as_user, str(PG_BIN / "pg_ctl"), "-D", str(self._data), "-m", "immediate", "stop"],
                       capture_output=True)
        shutil.rmtree(self._folder, ignore_errors=True)
