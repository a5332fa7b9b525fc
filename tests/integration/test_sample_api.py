"""The sample field API over real HTTP on 127.0.0.1: it agrees with domain.yaml and the SQL
seed, filters work, unknown ids give helpful 404s, writes are idempotent, and the committed
OpenAPI document is the app's own."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from toolrag.sample.field_api import create_app, running_server, serve

from ..conftest import DATA, REPO

DOMAIN = yaml.safe_load((DATA / "domain.yaml").read_text())


@pytest.fixture(scope="module")
def api() -> Iterator[httpx.Client]:
    with running_server(DATA) as base, httpx.Client(base_url=base, timeout=5) as client:
        yield client


def get(api: httpx.Client, path: str, **params: Any) -> Any:
    response = api.get(path, params=params)
    assert response.status_code == 200, response.text
    return response.json()


def test_projects_and_site_status_agree_with_the_domain(api: httpx.Client) -> None:
    projects = get(api, "/projects")
    assert {p["code"]: p["name"] for p in projects} == {
        p["code"]: p["name"] for p in DOMAIN["projects"]
    }
    assert [p["code"] for p in get(api, "/projects", status="closeout")] == ["GRB-104"]
    for p in DOMAIN["projects"]:
        status = get(api, f"/projects/{p['code']}/site-status")
        assert status["superintendent"] == p["superintendent"]
        # no crew on site exactly while a project is in preconstruction (GRB-111 mobilized)
        assert (status["crew_count"] == 0) == (p["status"] == "preconstruction"), p["code"]


def test_rfis_agree_with_domain_and_database(api: httpx.Client, construction_sqlite: Path) -> None:
    rfis = {r["number"]: r for r in get(api, "/rfis")}
    assert {r["number"]: r["status"] for r in DOMAIN["rfis"]} == {
        n: r["status"] for n, r in rfis.items()
    }
    with sqlite3.connect(construction_sqlite) as conn:
        db = dict(conn.execute("SELECT rfi_number, status FROM rfis").fetchall())
    assert db == {n: r["status"] for n, r in rfis.items()}
    one = get(api, "/rfis/RFI-101-014")
    assert one["days_open"] == 7 and one["answer_date"] == "2025-09-04"
    still_open = get(api, "/rfis", project="GRB-101", status="open")
    assert [r["number"] for r in still_open] == ["RFI-101-015"]
    assert still_open[0]["days_open"] == (dt.date(2025, 12, 15) - dt.date(2025, 10, 9)).days


def test_inspections_and_weather_filters(api: httpx.Client) -> None:
    failed = get(api, "/inspections", result="failed")
    assert failed and all(i["result"] == "failed" for i in failed)
    starts = {p["code"]: p["start"] for p in DOMAIN["projects"]}
    for i in get(api, "/inspections"):
        assert dt.date.fromisoformat(i["date"]) >= starts[i["project"]]
    window = get(api, "/inspections", project="GRB-107", since="2025-11-01", until="2025-11-30")
    assert [i["id"] for i in window] == ["INSP-107-02", "INSP-107-03"]
    delays = get(api, "/weather-delays", project="GRB-107")
    assert delays["total_days_lost"] == sum(r["days_lost"] for r in delays["records"]) == 6


def test_errors_are_helpful(api: httpx.Client) -> None:
    missing = api.get("/projects/GRB-999/site-status")
    assert missing.status_code == 404
    assert "Known projects: GRB-101 (Riverside Medical Office Building)" in missing.json()["detail"]
    by_name = get(api, "/projects/Summit Ridge Hotel/site-status")
    assert by_name["project"] == "GRB-107"
    assert get(api, "/inspections", project="pinecrest")[0]["project"] == "GRB-109"
    assert api.get("/inspections", params={"project": "GRB"}).status_code == 404  # ambiguous
    assert api.get("/inspections/INSP-000").status_code == 404
    assert api.get("/inspections", params={"since": "last week"}).status_code == 422
    assert api.get("/inspections", params={"result": "maybe"}).status_code == 422


def test_note_is_idempotent_by_key(api: httpx.Client) -> None:
    body = {"note": "Bonding corrected at MRI room.", "author": "Tom Baxter"}
    url = "/inspections/INSP-101-02/notes"
    first = api.post(url, json=body, headers={"Idempotency-Key": "k-1"}).json()
    again = api.post(url, json=body, headers={"Idempotency-Key": "k-1"}).json()
    other = api.post(url, json=body, headers={"Idempotency-Key": "k-2"}).json()
    assert first == again and other["id"] == first["id"] + 1
    assert api.post(url, json={"note": "", "author": "x"}).status_code == 422


def test_committed_openapi_document_is_current() -> None:
    committed = json.loads((REPO / "toolspecs" / "construction_api.openapi.json").read_text())
    assert committed == json.loads(json.dumps(create_app(DATA).openapi())), (
        "Run scripts/export_openapi.py"
    )


def test_serve_refuses_non_loopback_hosts() -> None:
    with pytest.raises(ValueError, match=r"127\.0\.0\.1 only"):
        serve(DATA, host="0.0.0.0")
