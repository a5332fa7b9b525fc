"""The agent stage: the run loop over the retrieved, guarded tools, its Answer and trace, and
the routed agent (the router decides first)."""
