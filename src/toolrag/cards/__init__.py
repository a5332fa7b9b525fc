"""Tool cards: one description of a tool, whatever it came from, with their lint, the tool
names a text mentions, OpenAPI operations and the LLM-written example requests."""

from toolrag.cards.card import (
    ToolCard,
    card_from_dict,
    cards_from_openapi,
    cards_from_tools,
    load_tool_list,
    load_yaml_cards,
    split_name,
)
from toolrag.cards.lint import LintFinding, lint_cards
from toolrag.cards.names import NameFinder
from toolrag.cards.openapi import Operation, load_document, operations, snake
from toolrag.cards.synthetic import SyntheticQueries

__all__ = [
    "LintFinding",
    "NameFinder",
    "Operation",
    "SyntheticQueries",
    "ToolCard",
    "card_from_dict",
    "cards_from_openapi",
    "cards_from_tools",
    "lint_cards",
    "load_document",
    "load_tool_list",
    "load_yaml_cards",
    "operations",
    "snake",
    "split_name",
]
