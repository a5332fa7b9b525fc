#!/usr/bin/env python3
"""Draw the sample blueprint sheets listed in data/blueprints/sheets.yaml.

Each sheet becomes a 1700x1100 greyscale PNG with a plausible drawing (grid lines and bubbles,
rooms, dimension strings, a north arrow, discipline-specific symbols), a GENERAL NOTES box and a
boxed TITLE BLOCK at the bottom right. The title block holds exactly nine lines, each "LABEL: value"
after the company name, in Pillow's built-in scalable font, so that OCR can read them back
(see scripts/check_blueprint_ocr.py).

Deterministic: every random choice comes from a generator seeded with a SHA-256 of the file name,
and only Pillow's bundled font is used (no system font files).

    python3 scripts/draw_blueprints.py [--sheets FILE] [--out DIR] [--only GRB-101_A-101.png ...]

Needs Pillow >= 10.1 (for ImageFont.load_default(size=...)) and PyYAML.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import math
import random
import sys
from pathlib import Path

import yaml
from PIL import Image, ImageDraw, ImageFont

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SHEETS = REPO_ROOT / "data" / "blueprints" / "sheets.yaml"
DEFAULT_OUT = REPO_ROOT / "data" / "blueprints"

COMPANY = "GRANITE RIDGE BUILDERS"

# ---- page layout (pixels) ----
W, H = 1700, 1100
EDGE = 20  # outer margin of the sheet border
GAP = 16  # gap between the drawing area and the boxes below it

TB_FONT_SIZE = 32  # cap height 23 px with Pillow's bundled font
TB_PAD_X = 30
TB_PAD_Y = 26
TB_PITCH = 42  # baseline-to-baseline distance of title block lines
TB_LINES = 9
TB_W = 920
TB_H = TB_PAD_Y * 2 + (TB_LINES - 1) * TB_PITCH + TB_FONT_SIZE + 8

BLACK, WHITE = 0, 255
GRID_GREY = 150
LIGHT = 200


def title_block_rect(width: int = W, height: int = H) -> tuple[int, int, int, int]:
    """(x0, y0, x1, y1) of the boxed title block, border included."""
    x1, y1 = width - EDGE, height - EDGE
    return x1 - TB_W, y1 - TB_H, x1, y1


TB_X0, TB_Y0, TB_X1, TB_Y1 = title_block_rect()
DRAW_AREA = (EDGE, EDGE, W - EDGE, TB_Y0 - GAP)
NOTES_AREA = (EDGE, TB_Y0, TB_X0 - GAP, TB_Y1)


# ---------------------------------------------------------------- fonts
_FONTS: dict[int, ImageFont.FreeTypeFont] = {}


def font(size: int) -> ImageFont.FreeTypeFont:
    if size not in _FONTS:
        f = ImageFont.load_default(size=size)
        if not isinstance(f, ImageFont.FreeTypeFont):
            sys.exit(
                "Pillow's load_default(size=...) did not return a scalable font; "
                "Pillow >= 10.1 with FreeType support is required"
            )
        _FONTS[size] = f
    return _FONTS[size]


def text_w(s: str, size: int) -> float:
    return font(size).getlength(s)


# ---------------------------------------------------------------- title block lines
def title_block_lines(sheet: dict) -> list[str]:
    """The exact text of the title block, one entry per line (all upper case)."""
    return [
        COMPANY,
        f"PROJECT: {sheet['project_name']}".upper(),
        f"PROJECT NO: {sheet['project']}".upper(),
        f"SHEET NO: {sheet['sheet_number']}".upper(),
        f"DISCIPLINE: {sheet['discipline']}".upper(),
        f"TITLE: {sheet['title']}".upper(),
        f"REVISION: {sheet['revision']}",
        f"REVISION DATE: {sheet['revision_date']}",
        f"DRAWN BY: {sheet['drawn_by']}".upper(),
    ]


# ---------------------------------------------------------------- vocabulary
ROOMS = {
    "GRB-101": [
        "WAITING",
        "RECEPTION",
        "EXAM 1",
        "EXAM 2",
        "EXAM 3",
        "MRI SUITE",
        "X-RAY",
        "NURSE STATION",
        "STAFF LOUNGE",
        "LAB",
        "RESTROOM",
        "STORAGE",
        "CT SCAN",
        "OFFICE",
    ],
    "GRB-102": [
        "CLASSROOM A",
        "CLASSROOM B",
        "CLASSROOM C",
        "CLASSROOM D",
        "KINDERGARTEN",
        "STAFF WORK",
        "RESTROOM",
        "STORAGE",
        "SPECIAL ED",
        "COUNSELOR",
        "CUSTODIAL",
    ],
    "GRB-103": [
        "UNIT 201",
        "UNIT 202",
        "UNIT 203",
        "UNIT 204",
        "UNIT 205",
        "LOBBY",
        "TRASH",
        "BIKE STORAGE",
        "ELEV",
        "STAIR 1",
        "STAIR 2",
        "LEASING",
        "MAIL",
    ],
    "GRB-104": [
        "APPARATUS BAY 1",
        "APPARATUS BAY 2",
        "APPARATUS BAY 3",
        "TURNOUT GEAR",
        "DAY ROOM",
        "KITCHEN",
        "BUNK ROOM",
        "HOSE TOWER",
        "WORKSHOP",
        "DECON",
        "WATCH ROOM",
    ],
    "GRB-105": [
        "WAREHOUSE",
        "SHIPPING",
        "RECEIVING",
        "OFFICE",
        "BREAK ROOM",
        "BATTERY CHARGING",
        "DOCK OFFICE",
        "RESTROOM",
        "FIRE RISER",
        "ELEC",
    ],
    "GRB-106": [
        "READING ROOM",
        "STACKS",
        "CHILDRENS",
        "COMPUTER LAB",
        "STAFF WORK",
        "MEETING ROOM",
        "CIRCULATION",
        "QUIET STUDY",
        "RESTROOM",
        "ARCHIVE",
    ],
    "GRB-107": [
        "GUEST ROOM 601",
        "GUEST ROOM 602",
        "GUEST ROOM 603",
        "GUEST ROOM 604",
        "POOL DECK",
        "LOBBY",
        "RESTAURANT",
        "KITCHEN",
        "FITNESS",
        "LAUNDRY",
        "ELEV LOBBY",
        "BAR",
    ],
    "GRB-108": [
        "TERMINAL",
        "TICKETING",
        "WAITING",
        "RESTROOM",
        "BUS BAY 1",
        "BUS BAY 2",
        "DRIVER LOUNGE",
        "PLATFORM",
        "SECURITY",
        "BIKE ROOM",
    ],
    "GRB-109": [
        "RESIDENT 101",
        "RESIDENT 102",
        "RESIDENT 103",
        "DINING",
        "ACTIVITY",
        "NURSE STATION",
        "MEDICATION",
        "COURTYARD",
        "LAUNDRY",
        "SPA",
        "SALON",
    ],
    "GRB-110": [
        "NATATORIUM",
        "LAP POOL",
        "LEISURE POOL",
        "LOCKER ROOM",
        "FILTER ROOM",
        "CHEMICAL STORAGE",
        "LIFEGUARD",
        "LOBBY",
        "PARTY ROOM",
        "FAMILY CHANGING",
    ],
    "GRB-111": [
        "OPEN OFFICE",
        "CONFERENCE",
        "CORE",
        "ELEV LOBBY",
        "STAIR 1",
        "TENANT SPACE",
        "LOBBY",
        "MAIL",
        "SECURITY",
        "LOADING",
    ],
    "GRB-112": [
        "BLOWER ROOM",
        "ELECTRICAL ROOM",
        "CONTROL ROOM",
        "STORAGE",
        "WORKSHOP",
        "RESTROOM",
        "MCC ROOM",
        "LAB",
    ],
}
DEFAULT_ROOMS = ["OFFICE", "STORAGE", "RESTROOM", "MECH", "ELEC", "CORRIDOR"]
BEAMS = ["W18X35", "W21X44", "W16X26", "W24X55", "W14X22", "W12X19"]
STREETS = {  # from the project addresses in data/domain.yaml
    "GRB-101": "RIVER ROAD",
    "GRB-102": "OAK HOLLOW LANE",
    "GRB-103": "MARINE DRIVE",
    "GRB-104": "STATION WAY",
    "GRB-105": "INDUSTRIAL PARKWAY",
    "GRB-106": "LAKESHORE AVENUE",
    "GRB-107": "SUMMIT RIDGE ROAD",
    "GRB-108": "DEPOT STREET",
    "GRB-109": "PINECREST BOULEVARD",
    "GRB-110": "PARK LOOP",
    "GRB-111": "FOUNDRY STREET",
    "GRB-112": "TREATMENT PLANT ROAD",
}


# ---------------------------------------------------------------- drawing helpers
def seed_for(name: str) -> int:
    return int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:8], "big")


def dashed_line(d: ImageDraw.ImageDraw, p0, p1, dash=14, gap=6, fill=GRID_GREY, width=1, dot=False):
    (x0, y0), (x1, y1) = p0, p1
    length = math.hypot(x1 - x0, y1 - y0)
    if length == 0:
        return
    ux, uy = (x1 - x0) / length, (y1 - y0) / length
    t = 0.0
    while t < length:
        e = min(t + dash, length)
        d.line([(x0 + ux * t, y0 + uy * t), (x0 + ux * e, y0 + uy * e)], fill=fill, width=width)
        t = e + gap
        if dot and t < length:  # centre line: dash, dot, dash
            d.point((x0 + ux * (t + 1), y0 + uy * (t + 1)), fill=fill)
            t += gap + 2


def centered_text(d, cx, cy, s, size, fill=BLACK, bg=None, pad=3):
    f = font(size)
    left, t, r, b = d.textbbox((0, 0), s, font=f)
    x, y = cx - (r - left) / 2 - left, cy - (b - t) / 2 - t
    if bg is not None:
        d.rectangle([x + left - pad, y + t - pad, x + r + pad, y + b + pad], fill=bg)
    d.text((x, y), s, font=f, fill=fill)


def room_label(d, box, name, number, size=15):
    """Room name (wrapped to the room width) and number, on a white patch, centred in box."""
    x0, y0, x1, y1 = box
    avail = (x1 - x0) - 12
    words, lines = name.split(), []
    for wd in words:
        if lines and text_w(lines[-1] + " " + wd, size) <= avail:
            lines[-1] += " " + wd
        else:
            lines.append(wd)
    while size > 10 and any(text_w(s, size) > avail for s in lines):
        size -= 1
    if number:
        lines.append(str(number))
    lh = size + 5
    cy = (y0 + y1) / 2 - (len(lines) - 1) * lh / 2
    for i, s in enumerate(lines):
        centered_text(
            d,
            (x0 + x1) / 2,
            cy + i * lh,
            s,
            size if i < len(lines) - 1 or not number else size - 2,
            bg=WHITE,
            pad=2,
        )


def grid_bubble(d, cx, cy, label, r=17):
    d.ellipse([cx - r, cy - r, cx + r, cy + r], outline=BLACK, width=2, fill=WHITE)
    centered_text(d, cx, cy, label, 17)


def feet(ft: int) -> str:
    return f"{ft}'-0\""


def dim_horizontal(d, xs, y, labels, ext_to=None):
    d.line([(xs[0] - 8, y), (xs[-1] + 8, y)], fill=BLACK, width=1)
    for x in xs:
        d.line([(x - 5, y + 5), (x + 5, y - 5)], fill=BLACK, width=2)
        if ext_to is not None:
            d.line([(x, y - 8), (x, ext_to)], fill=LIGHT, width=1)
    for xa, xb, lab in zip(xs, xs[1:], labels, strict=False):
        centered_text(d, (xa + xb) / 2, y - 11, lab, 13)


def dim_vertical(d, ys, x, labels):
    d.line([(x, ys[0] - 8), (x, ys[-1] + 8)], fill=BLACK, width=1)
    for y in ys:
        d.line([(x - 5, y + 5), (x + 5, y - 5)], fill=BLACK, width=2)
    for ya, yb, lab in zip(ys, ys[1:], labels, strict=False):
        f = font(13)
        d.text((x + 8, (ya + yb) / 2 - 8), lab, font=f, fill=BLACK)


def north_arrow(d, cx, cy, r=30, rot=0.0):
    d.ellipse([cx - r, cy - r, cx + r, cy + r], outline=BLACK, width=2)

    def pt(a, rr):
        a = math.radians(a + rot)
        return cx + rr * math.sin(a), cy - rr * math.cos(a)

    d.polygon([pt(0, r - 3), pt(140, r * 0.6), pt(180, r * 0.15)], fill=BLACK)
    d.polygon([pt(0, r - 3), pt(220, r * 0.6), pt(180, r * 0.15)], outline=BLACK, fill=WHITE)
    nx, ny = pt(0, r + 14)
    centered_text(d, nx, ny, "N", 18)


def hatch(d, box, step=12, fill=LIGHT):
    x0, y0, x1, y1 = box
    for k in range(int(x0 - (y1 - y0)), int(x1), step):
        # line from (k, y1) to (k + (y1-y0), y0), clipped to the box
        ax, ay, bx, by = k, y1, k + (y1 - y0), y0
        if ax < x0:
            ay -= x0 - ax
            ax = x0
        if bx > x1:
            by += bx - x1
            bx = x1
        d.line([(ax, ay), (bx, by)], fill=fill, width=1)


# ---------------------------------------------------------------- plan geometry
class Plan:
    def __init__(self, rng: random.Random, big_bays: bool):
        choices = [30, 32, 36, 40, 42] if big_bays else [20, 22, 24, 26, 28, 30]
        nx = rng.randint(5, 8)
        ny = rng.randint(3, 5)
        self.bx = [rng.choice(choices) for _ in range(nx - 1)]
        self.by = [rng.choice(choices) for _ in range(ny - 1)]
        x0, x1 = 118, 1450
        y0, y1 = 132, 528
        sx = (x1 - x0) / sum(self.bx)
        sy = (y1 - y0) / sum(self.by)
        self.xs = [x0]
        for b in self.bx:
            self.xs.append(self.xs[-1] + b * sx)
        self.ys = [y0]
        for b in self.by:
            self.ys.append(self.ys[-1] + b * sy)
        self.xs = [round(v) for v in self.xs]
        self.ys = [round(v) for v in self.ys]
        self.col_labels = [str(i + 1) for i in range(nx)]
        self.row_labels = [chr(ord("A") + i) for i in range(ny)]

    @property
    def box(self):
        return self.xs[0], self.ys[0], self.xs[-1], self.ys[-1]


def draw_grid(d, plan: Plan):
    top, left = 54, 52
    bottom = plan.ys[-1] + 22
    right = plan.xs[-1] + 24
    for x, lab in zip(plan.xs, plan.col_labels, strict=False):
        dashed_line(d, (x, top + 17), (x, bottom), dot=True)
        grid_bubble(d, x, top, lab)
    for y, lab in zip(plan.ys, plan.row_labels, strict=False):
        dashed_line(d, (left + 17, y), (right, y), dot=True)
        grid_bubble(d, left, y, lab)
    dim_horizontal(d, plan.xs, 100, [feet(b) for b in plan.bx])
    dim_vertical(d, plan.ys, plan.xs[-1] + 48, [feet(b) for b in plan.by])
    # overall dimension
    ybot = plan.ys[-1] + 40
    dim_horizontal(d, [plan.xs[0], plan.xs[-1]], ybot, [feet(sum(plan.bx))])


def layout_rooms(rng: random.Random, plan: Plan, names: list[str]):
    """Split the building into rooms either side of a corridor. Returns (rooms, corridor)."""
    xs, ys = plan.xs, plan.ys
    ny = len(ys)
    r = rng.randint(1, ny - 2) if ny > 2 else 1
    half = 18
    corridor = (xs[0], ys[r] - half, xs[-1], ys[r] + half)
    bands = [(ys[0], ys[r] - half), (ys[r] + half, ys[-1])]
    rooms = []
    pool = names[:]
    rng.shuffle(pool)
    counter = 100 + rng.randint(0, 2) * 100
    for yb0, yb1 in bands:
        i = 0
        while i < len(xs) - 1:
            span = rng.choice([1, 1, 2, 2, 3])
            j = min(i + span, len(xs) - 1)
            counter += 1
            name = pool.pop() if pool else rng.choice(DEFAULT_ROOMS)
            rooms.append(((xs[i], yb0, xs[j], yb1), name, counter))
            i = j
    return rooms, corridor


def draw_rooms(d, rng, rooms, corridor, plan: Plan, walls=BLACK, wall_w=2, label=True, doors=True):
    for box, _, _ in rooms:
        d.rectangle(box, outline=walls, width=wall_w)
    x0, y0, x1, y1 = plan.box
    d.rectangle([x0, y0, x1, y1], outline=walls, width=wall_w + 2)
    if doors:
        cy0, cy1 = corridor[1], corridor[3]
        for (bx0, by0, bx1, by1), _, _ in rooms:
            if bx1 - bx0 < 70:
                continue
            dx = rng.uniform(bx0 + 14, bx1 - 48)
            wall_y = by1 if abs(by1 - cy0) < 2 else by0
            if abs(wall_y - cy0) > 2 and abs(wall_y - cy1) > 2:
                continue
            d.rectangle([dx, wall_y - 2, dx + 30, wall_y + 2], fill=WHITE)
            inward = -1 if wall_y == by1 else 1
            d.line([(dx, wall_y), (dx, wall_y + inward * 30)], fill=walls, width=2)
            box = [dx - 30, wall_y - 30, dx + 30, wall_y + 30]
            start, end = (270, 360) if inward < 0 else (0, 90)
            d.arc(box, start, end, fill=GRID_GREY, width=1)
    if label:
        for box, name, num in rooms:
            room_label(d, box, name, num)
        cx = (corridor[0] + corridor[2]) / 2
        centered_text(d, cx, (corridor[1] + corridor[3]) / 2, "CORRIDOR", 13, bg=WHITE, pad=1)


# ---------------------------------------------------------------- discipline overlays
def overlay_structural(d, rng, plan: Plan):
    xs, ys = plan.xs, plan.ys
    for y in ys:
        for a, b in itertools.pairwise(xs):
            d.line([(a, y), (b, y)], fill=BLACK, width=3)
    for x in xs:
        for a, b in itertools.pairwise(ys):
            d.line([(x, a), (x, b)], fill=BLACK, width=2)
    # infill beams
    for a, b in itertools.pairwise(xs):
        n = rng.randint(1, 3)
        for k in range(1, n + 1):
            x = a + (b - a) * k / (n + 1)
            for ya, yb in itertools.pairwise(ys):
                d.line([(x, ya), (x, yb)], fill=GRID_GREY, width=1)
    for x in xs:
        for y in ys:
            fs = 16 if rng.random() < 0.8 else 22
            dashed_line(d, (x - fs, y - fs), (x + fs, y - fs), dash=5, gap=4, fill=BLACK)
            dashed_line(d, (x - fs, y + fs), (x + fs, y + fs), dash=5, gap=4, fill=BLACK)
            d.rectangle([x - 6, y - 6, x + 6, y + 6], fill=BLACK)
    for a, b in itertools.pairwise(xs):
        y = ys[rng.randint(0, len(ys) - 1)]
        centered_text(d, (a + b) / 2, y - 12, rng.choice(BEAMS), 13, bg=WHITE, pad=1)
    for i, (a, b) in enumerate(itertools.pairwise(ys)):
        x, y = (xs[0] + xs[1]) / 2, (a + b) / 2
        centered_text(d, x, y, f"SLAB TYPE S{i + 1}", 14, bg=WHITE)
    # footing marks
    for _ in range(min(4, len(xs))):
        x = xs[rng.randint(0, len(xs) - 1)]
        y = ys[rng.randint(0, len(ys) - 1)]
        centered_text(d, x + 34, y + 30, f"F{rng.randint(1, 6)}", 13, bg=WHITE, pad=1)


def overlay_mechanical(d, rng, rooms, corridor):
    cx0, cy0, cx1, cy1 = corridor
    ym = (cy0 + cy1) / 2
    d.rectangle([cx0 + 30, ym - 9, cx1 - 30, ym + 9], outline=BLACK, width=2)
    for (bx0, by0, bx1, by1), _, _ in rooms:
        x = (bx0 + bx1) / 2 + rng.uniform(-20, 20)
        up = by1 <= cy0 + 1
        yr = (by0 + by1) / 2 + (52 if up else -52)
        ya = ym - 9 if up else ym + 9
        d.line([(x - 5, ya), (x - 5, yr)], fill=BLACK, width=1)
        d.line([(x + 5, ya), (x + 5, yr)], fill=BLACK, width=1)
        s = 11
        yd = yr + (-s if up else s)
        d.rectangle([x - s, yd - s, x + s, yd + s], outline=BLACK, width=1)
        d.line([(x - s, yd - s), (x + s, yd + s)], fill=BLACK)
        d.line([(x - s, yd + s), (x + s, yd - s)], fill=BLACK)
    centered_text(
        d,
        cx0 + 120,
        cy0 - 10,
        f"{rng.choice([20, 24, 30])}X{rng.choice([12, 14, 16])} SA",
        13,
        bg=WHITE,
        pad=1,
    )


def overlay_electrical(d, rng, rooms, corridor):
    for (bx0, by0, bx1, by1), _, _ in rooms:
        nx = max(1, int((bx1 - bx0) // 110))
        ny = max(1, int((by1 - by0) // 90))
        for i in range(nx):
            for j in range(ny):
                x = bx0 + (bx1 - bx0) * (i + 0.5) / nx
                y = by0 + (by1 - by0) * (j + 0.5) / ny
                if abs(y - (by0 + by1) / 2) < 22:
                    y += 30 if j >= ny / 2 else -30
                d.rectangle([x - 14, y - 7, x + 14, y + 7], outline=BLACK, width=1)
                d.line([(x - 14, y - 7), (x + 14, y + 7)], fill=BLACK)
        # receptacles on the walls
        for _ in range(2):
            x = rng.uniform(bx0 + 12, bx1 - 12)
            d.ellipse([x - 5, by0 + 3, x + 5, by0 + 13], outline=BLACK)
            d.line([(x - 2, by0 + 5), (x - 2, by0 + 11)], fill=BLACK)
            d.line([(x + 2, by0 + 5), (x + 2, by0 + 11)], fill=BLACK)
    _cx0, cy0, cx1, cy1 = corridor
    d.rectangle([cx1 - 70, cy0 + 8, cx1 - 20, cy1 - 8], fill=BLACK)
    centered_text(
        d, cx1 - 140, (cy0 + cy1) / 2, f"PANEL L{rng.randint(1, 4)}A", 13, bg=WHITE, pad=1
    )


def overlay_plumbing(d, rng, rooms, corridor):
    cx0, cy0, cx1, cy1 = corridor
    for off, lab in ((-8, "CW"), (0, "HW"), (8, "SAN")):
        y = (cy0 + cy1) / 2 + off
        if lab == "SAN":
            dashed_line(d, (cx0 + 20, y), (cx1 - 20, y), dash=10, gap=5, fill=BLACK, width=2)
        else:
            d.line([(cx0 + 20, y), (cx1 - 20, y)], fill=BLACK, width=1)
    for (bx0, by0, bx1, by1), _, _ in rooms:
        if rng.random() < 0.45:
            continue
        x = bx0 + 20
        for k in range(rng.randint(1, 3)):
            xx = x + k * 30
            if xx > bx1 - 15:
                break
            yy = by0 + 20 if by1 <= cy0 + 1 else by1 - 20
            d.ellipse([xx - 9, yy - 11, xx + 9, yy + 11], outline=BLACK, width=1)
            d.rectangle(
                [
                    xx - 9,
                    yy - 15 if yy < cy0 else yy + 11,
                    xx + 9,
                    yy - 11 if yy < cy0 else yy + 15,
                ],
                outline=BLACK,
            )
        fd_x = (bx0 + bx1) / 2 + 40
        fd_y = (by0 + by1) / 2 + 30
        d.ellipse([fd_x - 6, fd_y - 6, fd_x + 6, fd_y + 6], outline=BLACK, width=2)
        d.text((fd_x + 9, fd_y - 7), "FD", font=font(12), fill=BLACK)


def overlay_fire(d, rng, rooms, corridor, plan: Plan):
    x0, y0, x1, y1 = plan.box
    main_y = (corridor[1] + corridor[3]) / 2
    d.line([(x0 + 10, main_y), (x1 - 10, main_y)], fill=BLACK, width=3)
    step = rng.choice([56, 64, 72])
    x = x0 + step / 2
    while x < x1:
        d.line([(x, y0 + 10), (x, y1 - 10)], fill=GRID_GREY, width=1)
        y = y0 + step / 2
        while y < y1:
            if abs(y - main_y) > 14:
                d.ellipse([x - 5, y - 5, x + 5, y + 5], outline=BLACK, width=1, fill=WHITE)
                d.line([(x - 4, y - 4), (x + 4, y + 4)], fill=BLACK)
            y += step
        x += step
    centered_text(d, x0 + 160, main_y - 16, f"{rng.choice([4, 6])} INCH MAIN", 13, bg=WHITE, pad=1)


# ---------------------------------------------------------------- special views
def draw_site(d, rng, sheet):
    ax0, ay0, ax1, ay1 = DRAW_AREA
    street = STREETS.get(sheet["project"], "MAIN STREET")
    # street along the bottom of the drawing area
    sy0, sy1 = ay1 - 110, ay1 - 62
    d.line([(ax0 + 30, sy0), (ax1 - 180, sy0)], fill=BLACK, width=2)
    d.line([(ax0 + 30, sy1), (ax1 - 180, sy1)], fill=BLACK, width=2)
    dashed_line(
        d,
        (ax0 + 30, (sy0 + sy1) / 2),
        (ax1 - 180, (sy0 + sy1) / 2),
        dash=20,
        gap=12,
        fill=GRID_GREY,
    )
    centered_text(d, (ax0 + ax1) / 2 - 80, (sy0 + sy1) / 2, street, 17, bg=WHITE, pad=4)
    # property line
    px0, py0, px1, py1 = ax0 + 70, ay0 + 40, ax1 - 230, sy0 - 18
    for a, b in (
        ((px0, py0), (px1, py0)),
        ((px1, py0), (px1, py1)),
        ((px1, py1), (px0, py1)),
        ((px0, py1), (px0, py0)),
    ):
        dashed_line(d, a, b, dash=26, gap=6, fill=BLACK, width=2, dot=True)
    # contours
    base = rng.randint(96, 140)
    for k in range(7):
        pts = []
        phase = rng.uniform(0, 6.28)
        for i in range(0, 61):
            x = px0 + (px1 - px0) * i / 60
            y = py0 + 30 + k * (py1 - py0 - 60) / 6 + 14 * math.sin(phase + i / 9)
            pts.append((x, y))
        d.line(pts, fill=GRID_GREY, width=1)
        lx, ly = pts[8 + 6 * k]
        centered_text(d, lx, ly, str(base - k * 2), 12, bg=WHITE, pad=1)
    if sheet["project"] == "GRB-112":
        # clarifiers and yard piping
        centres = []
        for i in range(3):
            cx = px0 + 200 + i * 330
            cy = (py0 + py1) / 2 - 10
            r = 105
            d.ellipse([cx - r, cy - r, cx + r, cy + r], outline=BLACK, width=3, fill=WHITE)
            d.ellipse([cx - 20, cy - 20, cx + 20, cy + 20], outline=BLACK, width=2)
            centered_text(d, cx, cy + 50, f"CLARIFIER {i + 1}", 15, bg=WHITE)
            centres.append((cx, cy))
        bx = px1 - 190
        d.rectangle([bx, py0 + 40, bx + 150, py0 + 190], outline=BLACK, width=3)
        hatch(d, (bx + 2, py0 + 42, bx + 148, py0 + 188))
        centered_text(d, bx + 75, py0 + 115, "BLOWER BLDG", 15, bg=WHITE)
        for cx, cy in centres:
            d.line(
                [(cx, cy - 105), (cx, py0 + 22), (bx + 75, py0 + 22), (bx + 75, py0 + 40)],
                fill=BLACK,
                width=2,
            )
        d.line(
            [(centres[0][0] - 105, centres[0][1]), (px0 + 10, centres[0][1])], fill=BLACK, width=3
        )
        centered_text(d, px0 + 50, centres[0][1] - 14, "24 IN DI", 12, bg=WHITE, pad=1)
        return
    # building footprint, parking, storm drainage
    bw, bh = rng.randint(420, 560), rng.randint(170, 230)
    bx0 = px0 + rng.randint(60, 160)
    by0 = py0 + rng.randint(40, 70)
    d.rectangle([bx0, by0, bx0 + bw, by0 + bh], outline=BLACK, width=4, fill=WHITE)
    hatch(d, (bx0 + 3, by0 + 3, bx0 + bw - 3, by0 + bh - 3))
    existing = "EXISTING" in sheet["title"].upper()
    centered_text(
        d,
        bx0 + bw / 2,
        by0 + bh / 2 - 12,
        "EXISTING BUILDING" if existing else "PROPOSED BUILDING",
        16,
        bg=WHITE,
    )
    centered_text(d, bx0 + bw / 2, by0 + bh / 2 + 14, f"FF EL {base + 2}.50", 14, bg=WHITE)
    lot_x0 = bx0 + bw + 70
    lot_y0 = by0
    stalls = rng.randint(8, 12)
    for row in range(2):
        y = lot_y0 + row * 120
        for s in range(stalls + 1):
            x = lot_x0 + s * 34
            if x > px1 - 20:
                break
            d.line([(x, y), (x, y + 60)], fill=BLACK, width=1)
        d.line(
            [
                (lot_x0, y + (60 if row == 0 else 0)),
                (min(lot_x0 + stalls * 34, px1 - 20), y + (60 if row == 0 else 0)),
            ],
            fill=BLACK,
            width=1,
        )
    centered_text(d, lot_x0 + 150, lot_y0 + 90, f"PARKING ({stalls * 2} STALLS)", 13, bg=WHITE)
    cbs = []
    for i in range(4):
        x = px0 + 60 + i * (px1 - px0 - 120) / 3
        y = py1 - 40 - (i % 2) * 30
        d.rectangle([x - 8, y - 8, x + 8, y + 8], outline=BLACK, width=2)
        d.line([(x - 8, y - 8), (x + 8, y + 8)], fill=BLACK)
        d.text((x + 11, y - 24), f"CB-{i + 1}", font=font(12), fill=BLACK)
        cbs.append((x, y))
    d.line(cbs, fill=BLACK, width=2)
    centered_text(
        d,
        (cbs[1][0] + cbs[2][0]) / 2,
        (cbs[1][1] + cbs[2][1]) / 2 + 14,
        f"{rng.choice([12, 15, 18])} IN SD",
        12,
        bg=WHITE,
        pad=1,
    )
    dashed_line(d, (px0 + 10, sy0 - 8), (px1 - 10, sy0 - 8), dash=8, gap=5, fill=BLACK)
    centered_text(d, px1 - 70, sy0 - 8, "EX SS", 12, bg=WHITE, pad=2)


def draw_elevation(d, rng, sheet):
    ax0, ay0, ax1, ay1 = DRAW_AREA
    ground = ay1 - 120
    top = ay0 + 150
    x = ax0 + 90
    n = rng.randint(8, 10)
    pw = (ax1 - ax0 - 300) / n
    d.line([(ax0 + 40, ground), (ax0 + 110 + (ax1 - ax0 - 300), ground)], fill=BLACK, width=3)
    for i in range(n):
        d.rectangle([x, top, x + pw, ground], outline=BLACK, width=2)
        if i % 3 != 1:
            dw = pw * 0.55
            d.rectangle(
                [x + (pw - dw) / 2, ground - 130, x + (pw + dw) / 2, ground], outline=BLACK, width=2
            )
            for k in range(4):
                yy = ground - 130 + 26 * (k + 1)
                d.line([(x + (pw - dw) / 2, yy), (x + (pw + dw) / 2, yy)], fill=LIGHT)
            for k in range(3):
                ex = x + 10 + k * (pw - 20) / 2
                d.rectangle([ex - 3, top + 40, ex + 3, top + 46], fill=BLACK)
        centered_text(d, x + pw / 2, top + 100, f"P{i + 1}", 16, bg=WHITE)
        grid_bubble(d, x, top - 60, str(i + 1))
        dashed_line(d, (x, top - 43), (x, top), dot=True)
        x += pw
    grid_bubble(d, x, top - 60, str(n + 1))
    dashed_line(d, (x, top - 43), (x, top), dot=True)
    d.text((x + 20, top - 8), "T.O. PANEL EL 36'-0\"", font=font(13), fill=BLACK)
    d.text((x + 20, ground - 8), "FIN FLR EL 0'-0\"", font=font(13), fill=BLACK)


def draw_riser(d, rng, sheet):
    ax0, ay0, ax1, ay1 = DRAW_AREA
    levels = 5
    y_top, y_bot = ay0 + 60, ay1 - 100
    for i in range(levels + 1):
        y = y_bot - i * (y_bot - y_top) / levels
        dashed_line(d, (ax0 + 80, y), (ax1 - 220, y), dash=30, gap=8, fill=GRID_GREY, dot=True)
        lab = "ROOF" if i == levels else f"LEVEL {i + 1}"
        d.text((ax1 - 200, y - 9), lab, font=font(15), fill=BLACK)
    for k in range(4):
        x = ax0 + 220 + k * 300
        d.line([(x, y_top + 10), (x, y_bot + 30)], fill=BLACK, width=3)
        centered_text(d, x, y_bot + 48, f"RD-{k + 1}", 14, bg=WHITE)
        for i in range(1, levels):
            y = y_bot - i * (y_bot - y_top) / levels
            d.line([(x - 90, y - 18), (x, y + 6)], fill=BLACK, width=2)
            d.rectangle([x - 104, y - 26, x - 88, y - 12], outline=BLACK, width=2)
            d.line([(x + 40, y - 30), (x, y - 4)], fill=BLACK, width=1)
            d.text((x + 44, y - 40), "OF", font=font(12), fill=BLACK)
        centered_text(d, x + 60, (y_top + y_bot) / 2, '3" DRAIN', 12, bg=WHITE, pad=1)


def draw_details(d, rng, sheet):
    ax0, ay0, ax1, ay1 = DRAW_AREA
    n = 3
    w = (ax1 - ax0 - 80) / n
    for i in range(n):
        x0 = ax0 + 30 + i * (w + 10)
        y0, y1 = ay0 + 30, ay1 - 110
        d.rectangle([x0, y0, x0 + w - 20, y1], outline=GRID_GREY, width=1)
        # a section through a balcony slab edge: slab, membrane, topping, railing post
        sx0, sx1 = x0 + 40, x0 + w - 60
        sy = y0 + 260 + rng.randint(-20, 20)
        d.rectangle([sx0, sy, sx1, sy + 50], outline=BLACK, width=2)
        hatch(d, (sx0 + 2, sy + 2, sx1 - 2, sy + 48), step=9)
        d.line([(sx0, sy - 6), (sx1, sy - 6), (sx1, sy + 60)], fill=BLACK, width=3)
        d.rectangle([sx0, sy - 26, sx1 - 40, sy - 8], outline=BLACK)
        d.line([(sx0 - 20, y0 + 40), (sx0 - 20, sy + 120)], fill=BLACK, width=4)
        d.line(
            [(sx0 - 20, sy - 6), (sx0 - 20 + 30, sy - 6), (sx0 - 20 + 30, sy - 50)],
            fill=BLACK,
            width=2,
        )
        d.rectangle([sx1 - 110, y0 + 60, sx1 - 96, sy - 26], outline=BLACK, width=2)
        for k, lab in enumerate(["WATERPROOF MEMBRANE", "MORTAR BED", "CONC SLAB"]):
            ly = sy - 60 - k * 26 + 150 * (k == 2)
            d.line(
                [(sx0 + 40 + k * 30, ly + 8), (sx0 + 70 + k * 30, sy - 6 + 20 * (k == 2))],
                fill=BLACK,
            )
            d.text((sx0 + 74 + k * 30, ly), lab, font=font(12), fill=BLACK)
        cy = y1 + 28
        grid_bubble(d, x0 + 30, cy, str(i + 1), r=18)
        d.text(
            (x0 + 56, cy - 10),
            ["SLAB EDGE", "DOOR THRESHOLD", "DRAIN BODY"][i] + " DETAIL",
            font=font(17),
            fill=BLACK,
        )


# ---------------------------------------------------------------- sheet assembly
def draw_notes(d, sheet):
    x0, y0, x1, y1 = NOTES_AREA
    d.rectangle([x0, y0, x1, y1], outline=BLACK, width=3)
    d.text((x0 + 20, y0 + 16), "GENERAL NOTES", font=font(22), fill=BLACK)
    d.line(
        [(x0 + 20, y0 + 46), (x0 + 20 + text_w("GENERAL NOTES", 22), y0 + 46)], fill=BLACK, width=2
    )
    y = y0 + 64
    size = 19
    avail = x1 - x0 - 80
    notes = list(sheet.get("notes") or [])
    notes.append("DO NOT SCALE DRAWINGS")
    notes.append("VERIFY ALL DIMENSIONS IN FIELD")
    for i, note in enumerate(notes, 1):
        lines, cur = [], ""
        for wd in note.split():
            if cur and text_w(cur + " " + wd, size) > avail:
                lines.append(cur)
                cur = wd
            else:
                cur = (cur + " " + wd).strip()
        lines.append(cur)
        d.text((x0 + 22, y), f"{i}.", font=font(size), fill=BLACK)
        for ln in lines:
            d.text((x0 + 52, y), ln, font=font(size), fill=BLACK)
            y += size + 9
        y += 6
    # scale bar along the bottom of the notes box
    by = y1 - 40
    bx = x0 + 22
    for k in range(4):
        d.rectangle(
            [bx + k * 50, by, bx + (k + 1) * 50, by + 10],
            outline=BLACK,
            fill=BLACK if k % 2 == 0 else WHITE,
        )
    for k in range(5):
        centered_text(d, bx + k * 50, by + 22, str(k * 8), 12)
    d.text((bx + 215, by + 2), "FEET", font=font(12), fill=BLACK)


def draw_title_block(d, sheet):
    x0, y0, x1, y1 = TB_X0, TB_Y0, TB_X1, TB_Y1
    d.rectangle([x0, y0, x1, y1], outline=BLACK, width=3, fill=WHITE)
    f = font(TB_FONT_SIZE)
    for i, line in enumerate(title_block_lines(sheet)):
        if not line.isascii():
            raise ValueError(f"{sheet['file']}: non-ASCII title block line {line!r}")
        if f.getlength(line) > TB_W - 2 * TB_PAD_X:
            raise ValueError(f"{sheet['file']}: title block line too long: {line!r}")
        d.text((x0 + TB_PAD_X, y0 + TB_PAD_Y + i * TB_PITCH), line, font=f, fill=BLACK)


def draw_caption(d, sheet):
    ax0, _ay0, _ax1, ay1 = DRAW_AREA
    cy = ay1 - 30
    grid_bubble(d, ax0 + 44, cy, "1", r=18)
    d.text((ax0 + 72, cy - 13), sheet["title"], font=font(22), fill=BLACK)
    tw = text_w(sheet["title"], 22)
    d.line([(ax0 + 72, cy + 14), (ax0 + 72 + tw, cy + 14)], fill=BLACK, width=2)
    scale = "1/16 IN = 1 FT" if sheet["discipline"] != "Civil" else "1 IN = 40 FT"
    d.text((ax0 + 90 + tw, cy - 6), f"SCALE {scale}", font=font(13), fill=BLACK)


def draw_sheet(sheet: dict) -> Image.Image:
    rng = random.Random(seed_for(sheet["file"]))
    img = Image.new("L", (W, H), WHITE)
    d = ImageDraw.Draw(img)
    d.rectangle([8, 8, W - 9, H - 9], outline=BLACK, width=2)
    ax0, ay0, ax1, ay1 = DRAW_AREA
    d.rectangle([ax0, ay0, ax1, ay1], outline=BLACK, width=3)

    title = sheet["title"].upper()
    disc = sheet["discipline"]
    if disc == "Civil":
        draw_site(d, rng, sheet)
    elif "ELEVATION" in title:
        draw_elevation(d, rng, sheet)
    elif "RISER" in title:
        draw_riser(d, rng, sheet)
    elif "DETAILS" in title and "PLAN" not in title:
        draw_details(d, rng, sheet)
    else:
        big = sheet["project"] in ("GRB-105", "GRB-108", "GRB-111") or disc == "Structural"
        plan = Plan(rng, big_bays=big)
        draw_grid(d, plan)
        names = ROOMS.get(sheet["project"], DEFAULT_ROOMS)
        rooms, corridor = layout_rooms(rng, plan, names)
        if disc == "Structural":
            overlay_structural(d, rng, plan)
        elif disc == "Architectural":
            draw_rooms(d, rng, rooms, corridor, plan)
        else:
            # background trades: walls light, rooms named, trade symbols on top
            draw_rooms(
                d, rng, rooms, corridor, plan, walls=GRID_GREY, wall_w=1, label=False, doors=False
            )
            if disc == "Mechanical":
                overlay_mechanical(d, rng, rooms, corridor)
            elif disc == "Electrical":
                overlay_electrical(d, rng, rooms, corridor)
            elif disc == "Plumbing":
                overlay_plumbing(d, rng, rooms, corridor)
            elif disc == "Fire Protection":
                overlay_fire(d, rng, rooms, corridor, plan)
            for box, name, num in rooms:
                room_label(d, box, name, num, size=14)
    north_arrow(d, ax1 - 70, ay0 + 70, rot=rng.choice([0, 0, 15, -20, 30]))
    draw_caption(d, sheet)
    draw_notes(d, sheet)
    draw_title_block(d, sheet)
    return img


def save_png(img: Image.Image, path: Path) -> None:
    # 16 grey levels keep the anti-aliasing and make the PNG small; no timestamps are written.
    img = img.point(lambda v: min(255, round(v / 17) * 17))
    img.save(path, format="PNG", optimize=True)


def load_sheets(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        sheets = yaml.safe_load(fh)
    if not isinstance(sheets, list):
        raise SystemExit(f"{path}: expected a list of sheets")
    return sheets


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sheets", type=Path, default=DEFAULT_SHEETS, help="sheet register (YAML)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder for the PNGs")
    ap.add_argument("--only", nargs="*", default=None, help="draw only these file names")
    args = ap.parse_args(argv)
    sheets = load_sheets(args.sheets)
    args.out.mkdir(parents=True, exist_ok=True)
    n = 0
    for sheet in sheets:
        if args.only and sheet["file"] not in args.only:
            continue
        img = draw_sheet(sheet)
        out = args.out / sheet["file"]
        save_png(img, out)
        n += 1
        print(f"{out}  {out.stat().st_size / 1024:.0f} KB")
    print(f"drew {n} sheet(s) into {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
