"""Retrieval and gate benchmarks for tierclaw memory (data converters live in bench.datasets)."""
