#!/usr/bin/env python3
"""OCR round-trip check of the blueprint PNGs against data/blueprints/sheets.yaml.

For every sheet it runs Tesseract (through pytesseract) on the title-block crop (bottom right)
and, unless --crop-only, on the whole image, parses the "LABEL: value" lines and compares
project no, sheet no, discipline, title, revision and revision date with the register.
Prints a table and exits 1 when any title-block crop (or, with --strict-whole, any whole-image
read) does not match exactly; exits 2 when tesseract is missing.

    python3 scripts/check_blueprint_ocr.py [--sheets FILE] [--dir DIR] [--psm 6] [--crop-only]

Needs the tesseract-ocr Debian package, pytesseract, Pillow and PyYAML.
"""

from __future__ import annotations

import os

# One thread per tesseract call: about 3x faster than its default OpenMP threading on small CPUs.
os.environ.setdefault("OMP_THREAD_LIMIT", "1")

import argparse
import re
import sys
import time
from pathlib import Path

import yaml
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))
from draw_blueprints import DEFAULT_OUT, DEFAULT_SHEETS, title_block_rect

try:
    import pytesseract
except ImportError:  # pragma: no cover
    sys.exit(
        "pytesseract is not installed: pip install pytesseract (and apt-get install tesseract-ocr)"
    )

# label in the image -> key in sheets.yaml
FIELDS = {
    "PROJECT NO": "project",
    "SHEET NO": "sheet_number",
    "DISCIPLINE": "discipline",
    "TITLE": "title",
    "REVISION": "revision",
    "REVISION DATE": "revision_date",
}
# A known label anywhere in a line (whole-image OCR may join a title-block line to text on its
# left), longest labels first so "REVISION DATE" wins over "REVISION" and "PROJECT NO" is not
# read as "PROJECT"; the value runs to the end of the line (the title block is the rightmost
# column of the sheet).
LABEL_RE = re.compile(
    r"(?<![A-Z])("
    + "|".join(sorted((re.escape(k) for k in FIELDS), key=len, reverse=True))
    + r")\s*[:;]\s*(.+?)\s*$"
)


def norm(v) -> str:
    return re.sub(r"\s+", " ", str(v)).strip().upper()


def parse_labels(text: str) -> dict[str, str]:
    """First value seen for each known label in OCR text ("LABEL: value" lines)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        m = LABEL_RE.search(norm(line))
        if m and m.group(1) not in out:
            out[m.group(1)] = norm(m.group(2))
    return out


def crop_title_block(img: Image.Image, margin: int = 6) -> Image.Image:
    x0, y0, x1, y1 = title_block_rect(*img.size)
    # just inside the border, so the box lines are not read as characters
    return img.crop((x0 + margin, y0 + margin, x1 - margin, y1 - margin))


def ocr(img: Image.Image, psm: int) -> tuple[str, float]:
    t0 = time.perf_counter()
    text = pytesseract.image_to_string(img, lang="eng", config=f"--psm {psm}")
    return text, time.perf_counter() - t0


def compare(sheet: dict, found: dict[str, str]) -> list[str]:
    bad = []
    for label, key in FIELDS.items():
        want = norm(sheet[key])
        got = found.get(label)
        if got != want:
            bad.append(f"{label}: want {want!r} got {got!r}")
    return bad


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sheets", type=Path, default=DEFAULT_SHEETS)
    ap.add_argument("--dir", type=Path, default=DEFAULT_OUT, help="folder with the PNGs")
    ap.add_argument(
        "--psm",
        type=int,
        default=6,
        help="tesseract page segmentation mode for the crop (6 = one uniform block of text)",
    )
    ap.add_argument(
        "--whole-psm",
        type=int,
        default=11,
        help="page segmentation mode for the whole image (11 = sparse text; 3 joins the notes "
        "and title-block columns into one line and misreads some values)",
    )
    ap.add_argument("--crop-only", action="store_true", help="skip the whole-image OCR")
    ap.add_argument("--strict-whole", action="store_true", help="whole-image mismatches also fail")
    ap.add_argument("-v", "--verbose", action="store_true", help="print mismatch details")
    args = ap.parse_args(argv)

    try:
        version = pytesseract.get_tesseract_version()
    except pytesseract.TesseractNotFoundError:
        print("tesseract is not installed (apt-get install tesseract-ocr)", file=sys.stderr)
        return 2

    with open(args.sheets, encoding="utf-8") as fh:
        sheets = yaml.safe_load(fh)
    print(
        f"tesseract {version}; crop --psm {args.psm}"
        + ("" if args.crop_only else f"; whole image --psm {args.whole_psm}")
    )
    hdr = f"{'FILE':<22} {'SHEET':<7} {'REV':>3} {'REV DATE':<10}  {'CROP':<6} {'s':>5}"
    if not args.crop_only:
        hdr += f"  {'WHOLE':<6} {'s':>5}"
    print(hdr)
    print("-" * len(hdr))
    crop_fail = whole_fail = 0
    t_crop = t_whole = 0.0
    details = []
    for sheet in sheets:
        path = args.dir / sheet["file"]
        if not path.exists():
            print(f"{sheet['file']:<22} MISSING")
            crop_fail += 1
            continue
        img = Image.open(path).convert("L")
        text, dt = ocr(crop_title_block(img), args.psm)
        t_crop += dt
        bad = compare(sheet, parse_labels(text))
        crop_fail += bool(bad)
        row = (
            f"{sheet['file']:<22} {sheet['sheet_number']:<7} {sheet['revision']:>3} "
            f"{sheet['revision_date']!s:<10}  {'OK' if not bad else 'FAIL':<6} {dt:5.2f}"
        )
        details += [f"{sheet['file']} crop {b}" for b in bad]
        if not args.crop_only:
            wtext, wdt = ocr(img, args.whole_psm)
            t_whole += wdt
            wbad = compare(sheet, parse_labels(wtext))
            whole_fail += bool(wbad)
            row += f"  {'OK' if not wbad else 'FAIL':<6} {wdt:5.2f}"
            details += [f"{sheet['file']} whole {b}" for b in wbad]
        print(row)
    n = len(sheets)
    print("-" * len(hdr))
    print(f"title-block crop: {n - crop_fail}/{n} exact, mean {t_crop / max(n, 1):.2f} s/image")
    if not args.crop_only:
        print(
            f"whole image:      {n - whole_fail}/{n} exact, mean {t_whole / max(n, 1):.2f} s/image"
        )
    if details and (args.verbose or crop_fail):
        print("\nmismatches:")
        for line in details:
            print("  " + line)
    failed = crop_fail or (args.strict_whole and whole_fail)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
