"""Content: loaders that read files into records, the LanceDB content indexes, and the tools
that search them."""
