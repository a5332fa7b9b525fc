"""The sample SQL database: a SQLite file built from the committed seed script.

``data/db/seed.sql`` is the source of truth (reviewable text, never a binary in git). The file
is rebuilt only when the script changes: the script's sha256 is kept in the table
``_toolrag_seed``, and a new build goes to a temporary file that replaces the old one in one
rename, so a reader never sees a half-built database.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import tempfile
from pathlib import Path

from toolrag.errors import InputError

SEED_TABLE = "_toolrag_seed"


def seed_sha(seed: Path) -> str:
    return hashlib.sha256(seed.read_bytes()).hexdigest()


def built_sha(db: Path) -> str | None:
    """The seed sha256 the database at ``db`` was built from, or None."""
    if not db.is_file():
        return None
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            row = conn.execute(f"SELECT sha256 FROM {SEED_TABLE}").fetchone()
    except sqlite3.Error:
        return None
    return str(row[0]) if row else None


def build_sqlite(seed: Path, db: Path, force: bool = False) -> bool:
    """Build ``db`` from the SQL script ``seed`` unless it is already current.

    Returns True when it built. Raises :class:`InputError` for a missing or broken script
    (the old database, if any, is left as it was).
    """
    if not seed.is_file():
        raise InputError(
            f"The SQL seed script {seed} does not exist.",
            hint="Point TOOLRAG_DATA_DIR at a folder with db/seed.sql.",
        )
    sha = seed_sha(seed)
    if not force and built_sha(db) == sha:
        return False
    db.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=".build-", suffix=".sqlite", dir=db.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        conn = sqlite3.connect(tmp)
        try:
            conn.execute("PRAGMA foreign_keys = ON")
            conn.executescript(seed.read_text(encoding="utf-8-sig"))
            problems = conn.execute("PRAGMA foreign_key_check").fetchall()
            if problems:
                raise InputError(
                    f"The seed script {seed} breaks {len(problems)} foreign keys "
                    f"(first: {problems[0]}).",
                    hint="Fix the rows that point at missing parents.",
                )
            conn.execute(f"CREATE TABLE {SEED_TABLE} (sha256 TEXT NOT NULL)")
            conn.execute(f"INSERT INTO {SEED_TABLE} VALUES (?)", (sha,))
            conn.commit()
        except sqlite3.Error as exc:
            raise InputError(
                f"The seed script {seed} does not run: {exc}.", hint="Fix the SQL and re-run."
            ) from exc
        finally:
            conn.close()
        tmp.replace(db)
    finally:
        tmp.unlink(missing_ok=True)
    return True
