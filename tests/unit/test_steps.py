"""Splitting a multi-step request into its steps (:mod:`toolrag.retrieval.steps`)."""

from __future__ import annotations

from toolrag.retrieval.steps import split_steps, sub_queries


def test_sub_queries() -> None:
    assert sub_queries("convert the report to PDF and then email it to my boss") == [
        "convert the report to PDF",
        "email it to my boss",
    ]
    assert sub_queries("weather in Paris") == []


def test_a_question_after_a_comma_is_a_step_when_the_text_before_asks_too() -> None:
    assert sub_queries(
        "How long does the slab cure, when is the pour planned, and what does the pump cost?"
    ) == ["How long does the slab cure", "when is the pour planned", "what does the pump cost?"]
    # context before the comma asks nothing: one question
    assert sub_queries("In the supplier's latest bid, what is the price of the glass?") == []
    assert sub_queries("Between June and December 2025, which drawings were revised?") == []
    assert sub_queries("Fetch the user with ID 7890, who has a special request") == []
    # a clause under four words stays with the question before it
    assert sub_queries("What is the price of the glass, and why?") == []
    # "and by how many days?" asks a detail of the question before it: one question
    assert sub_queries("Did the roof framing finish early or late, and by how many days?") == []
    assert (
        sub_queries(
            "Which crew poured the slab at the east site, and in which month was it poured?"
        )
        == []
    )


def test_sub_queries_of_a_request_written_in_marked_sentences() -> None:
    # Each sentence opened by a sequence word is a step; the sentences after it that carry its
    # details stay with it, and a bare "and" inside a step joins its details.
    assert sub_queries(
        "Find the area of a rectangle with length 7 and breadth 3. Also, calculate the area of "
        "a circle with radius 5."
    ) == ["Find the area of a rectangle with length 7 and breadth 3",
          "calculate the area of a circle with radius 5"]  # fmt: skip
    assert sub_queries(
        '"First, solve a quadratic equation where a is 5, b is 6, and c is 1. After that, '
        "convert an RGB color to hex. The values are Red: 255, Green: 160, and Blue: 0. "
        "Finally, reverse the string 'Hello'.\""
    ) == [
        "solve a quadratic equation where a is 5, b is 6, and c is 1",
        "convert an RGB color to hex. The values are Red: 255, Green: 160, and Blue: 0",
        "reverse the string 'Hello'",
    ]
    assert sub_queries("What is the weather in Paris? Also, what time is it in Tokyo?") == [
        "What is the weather in Paris?",
        "what time is it in Tokyo?",
    ]
    # sentences without sequence words are one request (context, then the ask)
    assert sub_queries("Mr. Smith flies to Paris on Monday. What will the weather be there?") == []
    assert sub_queries("Next week I fly to Paris for a meeting. What will the weather be?") == []


def test_split_steps_says_whether_the_request_marks_its_steps() -> None:
    # sequence words mark the steps; a bare "and" between two clauses splits without marking
    assert split_steps("Find the weather in Paris. Then, book a table for two in Lyon.")[1]
    parts, marked = split_steps("book a table for two in Lyon and send the invoice to my boss")
    assert parts == ["book a table for two in Lyon", "send the invoice to my boss"]
    assert not marked
    assert split_steps("weather in Paris") == ([], False)
