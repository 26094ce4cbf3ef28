"""``python -m bench.reminders``: reminders that arrive (issue 36, item 6).

Parsing (``phrasings.py``): every phrasing of ``bench/data/reminder_phrasings.json`` (English and Chinese,
kinds: absolute, relative, recurring, with and without a date, colloquial, invalid), each read at its fixed
"now" in its zone and graded against what was written down before the parser existed. Delivery
(``delivery.py``): 1,000 reminders due over 60 s on 3 gateway processes on PostgreSQL (``--database auto``:
a throwaway cluster, as ``bench.replicas``), one SIGKILLed and restarted mid-way; then the same on SQLite
with one gateway (``--sqlite``, on by default). One JSON line with ``--json``: ``parsed`` (share right per
language), ``delivered``, ``twice``, ``lost``, ``late_s`` {p50, p95}, ``failed_reported`` — the PostgreSQL
trial's — plus ``sqlite`` (the same keys for the SQLite trial) and the details listed in bench/README.md.
"""
