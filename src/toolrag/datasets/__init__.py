"""Public data sets converted for toolrag's tests and benchmarks (nothing written here)."""
