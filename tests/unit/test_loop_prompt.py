"""What the prompt after a repeated call shows of that call's result."""

from __future__ import annotations

from toolrag.agent.loop import LOOP_DATA_CHARS, LOOP_ERROR_CHARS, shown_result


def test_data_is_shown_whole_up_to_its_bound_and_marked_where_cut() -> None:
    rows = ", ".join(f'{{"sheet": "S-{n:03d}"}}' for n in range(20))  # 20 rows, 398 chars
    assert shown_result(rows, found=True) == rows  # a 300-character cut would drop rows
    long = "x" * (LOOP_DATA_CHARS + 10)
    shown = shown_result(long, found=True)
    assert shown.startswith("x" * LOOP_DATA_CHARS) and shown.endswith("the result goes on]")


def test_an_error_is_shown_in_a_line() -> None:
    error = "e" * 1_000
    assert shown_result(error, found=False) == "e" * LOOP_ERROR_CHARS
