"""Tool cards: one description of a tool, whatever it came from, with their lint, the tool
names a text mentions, OpenAPI operations and the LLM-written example requests."""
