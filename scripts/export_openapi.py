"""Write the field API's OpenAPI document to toolspecs/ (the REST tools are built from it).

.venv/bin/python scripts/export_openapi.py [--out toolspecs/construction_api.openapi.json]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from toolrag.sample.field_api import create_app

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", type=Path, default=ROOT / "toolspecs" / "construction_api.openapi.json"
    )
    args = parser.parse_args()
    doc = create_app(ROOT / "data").openapi()
    args.out.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out} ({len(doc['paths'])} paths)")


if __name__ == "__main__":
    main()
