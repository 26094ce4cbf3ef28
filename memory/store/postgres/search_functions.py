"""Retrieval's reads on PostgreSQL as functions whose plans are made once per connection (schema 26;
issue 38, "server CPU per message halved"; docs/scale-out.md, "Retrieval planned once (stop 54)").

A message whose gate fires reads the owner's best keyword candidates (bm25 over the GIN index's matches),
the term counts bm25 needs and, when it names a project, that project's memories. Sent as plain prepared
statements, PostgreSQL planned them at nearly every run: the candidates' text changed with the number of
terms and tiers (one prepared statement per shape and connection, each planned 5 times before a generic
plan may be kept), and the term counts' ``= ANY(array)`` kept the planner's generic estimate above its
custom one, so it never kept a generic plan. Planning one such statement cost 0.2–0.5 ms of server CPU,
more than running it (0.1–0.4 ms), ~0.45 ms a message of ``bench.db_cost``'s ~1.2 ms of planning.

Each read is a PL/pgSQL function with a fixed signature (terms, their idf and the tiers as arrays) and
``SET plan_cache_mode = force_generic_plan``: PL/pgSQL caches its query's plan per connection, and the
setting (in force only while the function runs) makes that the generic plan from the first call — one
planning per connection, not one per call. The plans were checked against the custom ones (EXPLAIN over
the bench's logged calls): the candidates' generic plan is the ``BitmapAnd`` of the owner's index and the
GIN index the custom plans mostly chose, which does not depend on how common the terms are; the term
counts' is the primary keys' index scans; the project's the partition index on (owner, tier, project).

bm25 is computed as the joins of ``fulltext.bm25_join`` did before, term by term in the query's order
(``SUM … ORDER BY`` over the terms' positions: the same float operations in the same order as
``fulltext.bm25``), so the server cuts at the same rows; Python scores the returned rows again as
before. The statements whose generic plan would depend on a date range (``written_between``, the
newest-first matches) stay plain statements. SQLite has no planner cache to spare: nothing there
(``SQLITE`` is empty).
"""

from __future__ import annotations

_CANDIDATE_TYPES = (
    "id BIGINT, owner TEXT, tier INTEGER, project TEXT, topic TEXT, category TEXT, content TEXT, "
    "importance DOUBLE PRECISION, created_at TEXT, last_accessed TEXT, search_text TEXT"
)
_CANDIDATE_COLUMNS = (
    "m.id, m.owner, m.tier, m.project, m.topic, m.category, m.content, m.importance, m.created_at, "
    "m.last_accessed, m.search_text"
)

POSTGRES = f"""
CREATE FUNCTION tierclaw_best_memories(
    p_query TSQUERY, p_owner TEXT, p_tiers INTEGER[], p_after TEXT, p_before TEXT,
    p_terms TEXT[], p_idf DOUBLE PRECISION[], p_k1 DOUBLE PRECISION, p_k1_b DOUBLE PRECISION,
    p_b DOUBLE PRECISION, p_average DOUBLE PRECISION, p_k1_plus DOUBLE PRECISION, p_limit INTEGER)
    RETURNS TABLE ({_CANDIDATE_TYPES})
    LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY SELECT {_CANDIDATE_COLUMNS}
    FROM memories m
    CROSS JOIN LATERAL (SELECT string_to_array(m.search_text, ' ') AS toks,
        p_k1 * (p_k1_b + p_b * m.search_len / p_average) AS norm OFFSET 0) x
    CROSS JOIN LATERAL (
        SELECT SUM(CASE WHEN w.f > 0 THEN w.idf * (w.f * p_k1_plus) / (w.f + x.norm)
                   ELSE CAST(0 AS DOUBLE PRECISION) END ORDER BY w.i) AS score
        FROM (SELECT u.i, u.idf, cardinality(array_positions(x.toks, u.term)) AS f
              FROM unnest(p_terms, p_idf) WITH ORDINALITY AS u(term, idf, i)) w) s
    WHERE m.search_tsv @@ p_query AND m.owner = p_owner AND m.is_archived = 0 AND m.tier = ANY(p_tiers)
        AND (p_after IS NULL OR m.created_at >= p_after) AND (p_before IS NULL OR m.created_at < p_before)
    ORDER BY s.score DESC, m.id LIMIT p_limit;
END $$;
CREATE FUNCTION tierclaw_term_docs(p_terms TEXT[])
    RETURNS TABLE (term TEXT, docs BIGINT, summed BIGINT)
    LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY SELECT t.term, SUM(t.docs), COUNT(*) FROM (
        SELECT a.term, a.docs FROM memory_terms a WHERE a.term = ANY(p_terms)
        UNION ALL SELECT d.term, d.docs FROM memory_term_deltas d WHERE d.term = ANY(p_terms)) AS t
    GROUP BY t.term;
END $$;
CREATE FUNCTION tierclaw_project_memories(p_owner TEXT, p_tiers INTEGER[], p_project TEXT, p_limit INTEGER)
    RETURNS TABLE ({_CANDIDATE_TYPES})
    LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY SELECT {_CANDIDATE_COLUMNS} FROM memories m
    WHERE m.owner = p_owner AND m.tier = ANY(p_tiers) AND m.project = p_project AND m.is_archived = 0
    ORDER BY m.importance DESC, m.id DESC LIMIT p_limit;
END $$;
"""
SQLITE = ""

# The calls (``?`` placeholders, ``memory/store/sql.py``): one text each, whatever the terms and tiers.
BEST_MEMORIES = "SELECT * FROM tierclaw_best_memories(CAST(? AS tsquery), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
TERM_DOCS = "SELECT * FROM tierclaw_term_docs(?)"
PROJECT_MEMORIES = "SELECT * FROM tierclaw_project_memories(?, ?, ?, ?)"
