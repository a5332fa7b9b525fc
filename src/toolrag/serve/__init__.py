"""Serving the toolbox to other programs: the MCP server."""
