"""Models: the LLM factory (local llama.cpp, OpenAI, OpenAI-compatible, scripted), the bundled
local model and the embedding model."""
