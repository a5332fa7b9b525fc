"""Tool RAG: the ToolIndex that finds the few tools a question needs, its query handling
(translation, the adapter, steps, named tools, prerequisites) and the agent's retriever."""
