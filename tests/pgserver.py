"""A throwaway PostgreSQL server on 127.0.0.1 for the SQL-spec tests.

Uses the Debian server binaries (``/usr/lib/postgresql/<v>/bin``; ``scripts/test.sh`` installs
the ``postgresql`` package when they are missing). As root, the server runs as the ``postgres``
user, which PostgreSQL requires. ``TOOLRAG_TEST_PG_URL`` points the tests at an existing server
instead.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def server_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"))
    if found:
        return Path(found[-1]).parent
    which = shutil.which("pg_ctl")
    return Path(which).resolve().parent if which else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run(cmd: list[str], as_postgres: bool) -> None:
    if as_postgres:
        cmd = ["runuser", "-u", "postgres", "--", *cmd]
    subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=120)


@contextmanager
def postgres_server(workdir: Path) -> Iterator[str]:
    """Start a fresh cluster, yield ``postgresql+psycopg://toolrag@127.0.0.1:<port>``."""
    bindir = server_bin()
    if bindir is None:
        raise RuntimeError("PostgreSQL server binaries not found (install package postgresql)")
    as_root = os.geteuid() == 0
    data = workdir / "pgdata"
    data.mkdir(parents=True)
    if as_root:
        shutil.chown(workdir, "postgres")
        shutil.chown(data, "postgres")
    port = _free_port()
    _run(
        [str(bindir / "initdb"), "-D", str(data), "-U", "toolrag", "--auth=trust", "-E", "UTF8"],
        as_root,
    )
    opts = f"-h 127.0.0.1 -p {port} -k {data} -c fsync=off"
    _run(
        [
            str(bindir / "pg_ctl"),
            "-D",
            str(data),
            "-o",
            opts,
            "-w",
            "-l",
            str(data / "log"),
            "start",
        ],
        as_root,
    )
    try:
        yield f"postgresql+psycopg://toolrag@127.0.0.1:{port}/postgres"
    finally:
        _run([str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"], as_root)
