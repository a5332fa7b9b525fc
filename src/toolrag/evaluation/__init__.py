"""Evaluation helpers shared by the CLI, the demo and the benchmarks."""
