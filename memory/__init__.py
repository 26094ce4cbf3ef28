"""tierclaw's tiered long-term memory: SQLite engine, Chinese-correct retrieval, file fallback.

Nothing in this package imports ``gateway``: the gateway wires memory in, never the other way round.
"""
