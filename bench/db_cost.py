"""What one message costs the PostgreSQL server: round trips, transactions, rows, WAL and server CPU.

    python -m bench.db_cost --database postgresql://… [--chats N] [--messages M] [--memories P]
        [--embedding none|local|openai] [--warmup W] [--top 15] [--json]

N chats × M messages go through the real gateway path (``Runtime``, the process loop, the assistant, the
PostgreSQL store, the model stub over HTTP at zero latency), as in ``bench.gateway_throughput`` (whose
seeding, config and bench channel this reuses): memory on, every owner preloaded with P memories. Around
the timed window the server's own counters are read:

* ``pg_stat_database`` of the scratch database: transactions (``xact_commit`` + ``xact_rollback``), rows
  inserted / updated / deleted (written, triggers' rows included) and fetched (read);
* ``pg_stat_statements`` (when the server preloads it: ``shared_preload_libraries=pg_stat_statements``):
  top-level statements executed — each one a round trip, ``BEGIN`` and ``COMMIT`` included — and the
  rows they returned, with the statements that ran most per message;
* ``pg_stat_wal`` / ``pg_current_wal_lsn()``: WAL bytes and records written (the whole server);
* the server's CPU: user + system time of the postmaster and its children from ``/proc/<pid>/stat`` in
  10 ms ticks (``server_cpu_ms_per_msg``), and exactly, the nanoseconds the scheduler ran each one from
  ``/proc/<pid>/schedstat`` (``server_cpu_exact_ms_per_msg``, ``backend_cpu_exact_ms_per_msg``: the client
  backends alone, ``server_cpu_exact_ms_by_process``; ``bench/server_cpu.py``) — only when the server runs
  on this machine; its exited children's time is in the postmaster's ``cutime``, in ticks either way;
  beside it what the statements' execution took (``statement_exec_ms_per_msg``) and, with
  ``pg_stat_statements.track_planning`` on, their planning (``statement_plan_ms_per_msg``; per busy
  statement ``plans_per_call``: a prepared statement is planned 5 times with its parameters on each
  pooled connection before a generic plan may be kept, so a short window after a cold start plans much
  more than a warm gateway — ``--warmup`` answers W messages first, default 4).

WAL and CPU are the whole server's: run it on a server nothing else uses meanwhile.

The reply path apart from background work (``bench/db_cost_paths.py`` says how each statement is told):
``reply_path_statements_per_msg``, ``reply_path_round_trips_per_msg``, ``reply_path_commits_per_msg``,
``reply_path_statement_ms_per_msg``, ``background_statements_per_msg``,
``background_statement_ms_per_msg``, ``statements_by_family``; and ``write_transactions_per_msg``, the
transaction ids the whole server assigned in the window (every write transaction, either side).

Per message: ``statements``, ``transactions``, ``rows_written``, ``rows_read``, ``wal_bytes``,
``server_cpu_ms``, and from the last, how many messages one PostgreSQL core sustains
(``msgs_per_s_per_core`` = 1000 / ``server_cpu_ms_per_msg``; ``msgs_per_s_per_core_exact`` from the
exact figure). The numbers feed docs/scale-out.md ("Scale on
paper"); rerun after a change to the message path and compare. Without ``--database`` the bench refuses
(SQLite has no server to measure). Start a scratch server for it with localservers/postgres_cluster.py,
with ``-c shared_preload_libraries=pg_stat_statements`` for the statement counts.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from bench.database_option import add_database_option, scratch_memory
from bench.db_cost_paths import SPLIT_KEYS, split
from bench.db_cost_report import print_report
from bench.embedding_option import add_embedding_args
from bench.gateway_throughput import WARMUP_MESSAGES, BenchChannel
from bench.report import emit_json
from bench.server_cpu import cpu_by_pid, parent, run_ns_by_pid, tree_cpu_s
from bench.stub_process import stub_server
from bench.throughput_data import (
    _FIRING,
    CHANNEL,
    make_owners,
    messages_for,
    seed_store,
    write_config,
    write_workspace,
)
from bench.throughput_embedding import Embedding, wait_until_embedder_ready
from channels.base import InboundMessage
from gateway.app import Runtime
from gateway.config import load_config

DEFAULT_CHATS = 10
DEFAULT_MESSAGES = 20
DEFAULT_MEMORIES = 200
# A backend sends its pending statistics (pg_stat_database's counters) when it goes idle, but at most once
# a second: one that sent them less than a second ago waits 10 s of idleness (PostgreSQL's cumulative
# statistics, PGSTAT_IDLE_INTERVAL). Wait that long, quiet, before reading them, so every statement of the
# warm-up is in the first reading and every one of the window in the second. (pg_stat_statements, the
# WAL position and /proc are current at once.)
STATS_SETTLE_S = 11.0
CHAT_LOCK_QUERY = "SELECT pg_advisory_xact_lock("  # a chat's lock, as pg_stat_statements shows it
# The scratch database's own tables (``_analyze``).
_TABLES = "SELECT relname FROM pg_class WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace"


@dataclass(slots=True)
class Snapshot:
    """The server's counters at one moment."""

    database: dict[str, int]
    statements: dict[str, tuple[int, int, float]] | None  # query -> (calls, rows, total ms)
    wal_bytes: int
    wal_records: int | None
    cpu_s: float | None
    # pid -> (what the process is, user + system seconds): the living children of the postmaster, and
    # the postmaster itself (pid 0: its own time and its reaped children's, "exited")
    cpu_by_pid: dict[int, tuple[str, float]] = field(default_factory=dict)
    # pid -> (what the process is, nanoseconds run: /proc/<pid>/schedstat, exact), pid 0 as above
    run_ns_by_pid: dict[int, tuple[str, int]] = field(default_factory=dict)
    # the summed planning and execution ms of the database's top-level statements (pg_stat_statements;
    # planning only with pg_stat_statements.track_planning on, else 0)
    plan_ms: float | None = None
    exec_ms: float | None = None
    # query -> (plans, total planning ms): how often each was planned (``track_planning`` on; else 0s)
    plans: dict[str, tuple[int, float]] = field(default_factory=dict)
    # the next transaction id to be assigned (``pg_current_snapshot``'s xmax): its rise counts the write
    # transactions of the whole server (a read-only transaction gets no id)
    next_xid: int | None = None


@dataclass(slots=True)
class Probe:
    """A connection to the server's admin database that reads the counters of one scratch database."""

    url: str
    database: str
    conn: Any = None
    postmaster: int | None = None
    statements: bool = False
    notes: list[str] = field(default_factory=list)

    def open(self) -> None:
        """Connect; find the postmaster (the parent of this connection's backend) and pg_stat_statements."""
        import psycopg

        self.conn = psycopg.connect(self.url, autocommit=True)
        backend = int(self.conn.execute("SELECT pg_backend_pid()").fetchone()[0])
        self.postmaster = parent(backend)
        if self.postmaster is None:
            self.notes.append("the server is not on this machine: no server CPU")
        preload = str(self.conn.execute("SHOW shared_preload_libraries").fetchone()[0])
        if "pg_stat_statements" not in preload:
            self.notes.append(
                "no statement counts: start the server with -c shared_preload_libraries=pg_stat_statements"
            )
            return
        try:
            self.conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
            self.statements = True
        except psycopg.Error as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            self.notes.append(f"no statement counts: {first}")

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()

    def snapshot(self) -> Snapshot:
        """The counters now (call after ``STATS_SETTLE_S`` of quiet)."""
        self.conn.execute("SELECT pg_stat_clear_snapshot()")
        row = self.conn.execute(
            "SELECT xact_commit, xact_rollback, tup_inserted, tup_updated, tup_deleted, tup_fetched, "
            "tup_returned FROM pg_stat_database WHERE datname = %s",
            (self.database,),
        ).fetchone()
        names = (
            "xact_commit",
            "xact_rollback",
            "tup_inserted",
            "tup_updated",
            "tup_deleted",
            "tup_fetched",
            "tup_returned",
        )
        database = {n: int(v or 0) for n, v in zip(names, row or (0,) * len(names), strict=True)}
        wal = self.conn.execute("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')").fetchone()
        records = self.conn.execute("SELECT wal_records FROM pg_stat_wal").fetchone()
        xid = self.conn.execute("SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint").fetchone()
        statements, plan_ms, exec_ms = None, None, None
        plans: dict[str, tuple[int, float]] = {}
        if self.statements:
            # Summed by text: one text can have several entries (the chat lock sent alone, with server-side
            # parameters, and with its statement in one simple query); a dict of them kept only one.
            found = self.conn.execute(
                "SELECT s.query, SUM(s.calls), SUM(s.rows), SUM(s.total_exec_time), SUM(s.plans), "
                "SUM(s.total_plan_time) FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid "
                "WHERE d.datname = %s AND s.toplevel GROUP BY s.query",
                (self.database,),
            ).fetchall()
            statements = {str(q): (int(c), int(r), float(t)) for q, c, r, t, _, _ in found}
            plans = {str(q): (int(n or 0), float(pt or 0.0)) for q, _, _, _, n, pt in found}
            plan, run = self.conn.execute(
                "SELECT COALESCE(SUM(s.total_plan_time), 0), COALESCE(SUM(s.total_exec_time), 0) "
                "FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid "
                "WHERE d.datname = %s AND s.toplevel",
                (self.database,),
            ).fetchone()
            tracked = str(self.conn.execute("SHOW pg_stat_statements.track_planning").fetchone()[0]) == "on"
            plan_ms, exec_ms = (float(plan) if tracked else None), float(run)
        return Snapshot(
            database,
            statements,
            int(wal[0]),
            int(records[0]) if records else None,
            tree_cpu_s(self.postmaster) if self.postmaster else None,
            cpu_by_pid(self.postmaster) if self.postmaster else {},
            run_ns_by_pid(self.postmaster) if self.postmaster else {},
            plan_ms,
            exec_ms,
            plans,
            int(xid[0]),
        )


def cpu_by_kind(before: Snapshot, after: Snapshot, messages: int) -> dict[str, float] | None:
    """Server CPU ms per message by kind of process (a process that ended meanwhile is in "exited")."""
    if not after.cpu_by_pid:
        return None
    kinds: dict[str, float] = {}
    for pid, (kind, seconds) in after.cpu_by_pid.items():
        was = before.cpu_by_pid.get(pid)
        delta = seconds - (was[1] if was is not None else 0.0)
        kinds[kind] = kinds.get(kind, 0.0) + delta * 1000.0 / messages
    return dict(sorted(kinds.items(), key=lambda kv: -kv[1]))


def exact_cpu_by_kind(before: Snapshot, after: Snapshot, messages: int) -> dict[str, float] | None:
    """``cpu_by_kind`` from the scheduler's nanoseconds (``bench/server_cpu.py``): exact for processes
    alive at the end (one born meanwhile counts from 0), in ticks for those that ended."""
    if not after.run_ns_by_pid:
        return None
    kinds: dict[str, float] = {}
    for pid, (kind, ns) in after.run_ns_by_pid.items():
        was = before.run_ns_by_pid.get(pid)
        delta = ns - (was[1] if was is not None else 0)
        kinds[kind] = kinds.get(kind, 0.0) + delta / 1e6 / messages
    return dict(sorted(kinds.items(), key=lambda kv: -kv[1]))


def _planned(before: Snapshot, after: Snapshot, query: str, calls: int) -> dict[str, float]:
    """How often a statement was planned per run in the window, and its mean planning ms (a prepared
    statement on a generic plan is not planned again: ``plans_per_call`` near 0)."""
    n1, t1 = after.plans.get(query, (0, 0.0))
    n0, t0 = before.plans.get(query, (0, 0.0))
    return {"plans_per_call": (n1 - n0) / calls, "plan_ms_per_call": (t1 - t0) / calls}


def _kind(query: str) -> str:
    word = re.match(r"\s*(\w+)", query)
    return word.group(1).upper() if word else "?"


def per_message(before: Snapshot, after: Snapshot, messages: int, top: int) -> dict[str, Any]:
    """The differences, per message."""
    d = {k: after.database[k] - before.database[k] for k in after.database}
    out: dict[str, Any] = {
        "transactions_per_msg": (d["xact_commit"] + d["xact_rollback"]) / messages,
        "rows_inserted_per_msg": d["tup_inserted"] / messages,
        "rows_updated_per_msg": d["tup_updated"] / messages,
        "rows_deleted_per_msg": d["tup_deleted"] / messages,
        "rows_written_per_msg": (d["tup_inserted"] + d["tup_updated"] + d["tup_deleted"]) / messages,
        "rows_read_per_msg": d["tup_fetched"] / messages,
        "rows_scanned_per_msg": d["tup_returned"] / messages,
        "wal_bytes_per_msg": (after.wal_bytes - before.wal_bytes) / messages,
        "wal_records_per_msg": (
            (after.wal_records - before.wal_records) / messages
            if after.wal_records is not None and before.wal_records is not None
            else None
        ),
        "statements_per_msg": None,
        "round_trips_per_msg": None,
        "rows_returned_per_msg": None,
        "statement_kinds": None,
        "top_statements": None,
        "server_cpu_ms_per_msg": None,
        "msgs_per_s_per_core": None,
        "write_transactions_per_msg": (
            (after.next_xid - before.next_xid) / messages
            if after.next_xid is not None and before.next_xid is not None
            else None
        ),
        **dict.fromkeys(SPLIT_KEYS),
    }
    if after.cpu_s is not None and before.cpu_s is not None:
        cpu_ms = (after.cpu_s - before.cpu_s) * 1000.0 / messages
        out["server_cpu_ms_per_msg"] = cpu_ms
        out["msgs_per_s_per_core"] = 1000.0 / cpu_ms if cpu_ms > 0 else None
    out["server_cpu_ms_by_process"] = cpu_by_kind(before, after, messages)
    exact = exact_cpu_by_kind(before, after, messages)
    out["server_cpu_exact_ms_by_process"] = exact
    out["server_cpu_exact_ms_per_msg"] = sum(exact.values()) if exact else None
    out["backend_cpu_exact_ms_per_msg"] = exact.get("backend", 0.0) if exact else None
    for key, was, now in (
        ("statement_exec_ms_per_msg", before.exec_ms, after.exec_ms),
        ("statement_plan_ms_per_msg", before.plan_ms, after.plan_ms),  # track_planning on only
    ):
        out[key] = (now - was) / messages if now is not None and was is not None else None
    exact_ms = out["server_cpu_exact_ms_per_msg"]
    out["msgs_per_s_per_core_exact"] = 1000.0 / exact_ms if exact_ms else None
    if after.statements is not None and before.statements is not None:
        ran: dict[str, tuple[int, int, float]] = {}
        for query, (calls, rows, ms) in after.statements.items():
            c0, r0, t0 = before.statements.get(query, (0, 0, 0.0))
            if calls > c0:
                ran[query] = (calls - c0, rows - r0, ms - t0)
        kinds: dict[str, float] = {}
        for query, (calls, _, _) in ran.items():
            kinds[_kind(query)] = kinds.get(_kind(query), 0.0) + calls / messages
        out["statements_per_msg"] = sum(c for c, _, _ in ran.values()) / messages
        # The chat lock goes with its statement in one simple query (memory/store/postgres/database.py):
        # counted as a statement above, it is no round trip of its own.
        locks = sum(c for q, (c, _, _) in ran.items() if q.startswith(CHAT_LOCK_QUERY))
        out["round_trips_per_msg"] = (sum(c for c, _, _ in ran.values()) - locks) / messages
        out["rows_returned_per_msg"] = (
            sum(r for q, (_, r, _) in ran.items() if _kind(q) == "SELECT") / messages
        )
        out["statement_kinds"] = dict(sorted(kinds.items(), key=lambda kv: -kv[1]))
        planned = {q: after.plans.get(q, (0, 0.0))[1] - before.plans.get(q, (0, 0.0))[1] for q in ran}
        out.update(split(ran, planned, messages))
        busiest = sorted(ran.items(), key=lambda kv: -kv[1][0])[:top]
        out["top_statements"] = [
            {
                "query": " ".join(q.split())[:160],
                "per_msg": c / messages,
                "mean_ms": ms / c,
                **_planned(before, after, q, c),
            }
            for q, (c, _, ms) in busiest
        ]
    return out


async def run(
    database_url: str,
    admin_url: str,
    base_url: str,
    chats: int,
    messages: int,
    per_owner: int,
    embedding: Embedding,
    top: int,
    warmup: int = WARMUP_MESSAGES,
    analyze: bool = True,
) -> dict[str, Any]:
    """Seed, open, warm up; read the counters; deliver chats × messages at once, answer them all; read
    the counters again. ``analyze``: the seeded tables get their planner statistics before the gateway
    opens (see ``_analyze``)."""
    probe = Probe(admin_url, urlsplit(database_url).path.lstrip("/"))
    probe.open()
    with tempfile.TemporaryDirectory(prefix="tierclaw-dbcost-") as tmp:
        owners = make_owners(chats)
        config = load_config(
            write_config(Path(tmp), base_url, memory=True, embedding=embedding, database_url=database_url),
            env=embedding.env(),
        )
        write_workspace(config.workspace_path())
        settings = config.memory.embedding.settings()
        embed = settings if settings.provider != "none" else None
        preload = await seed_store(config.memory_target(), owners, per_owner, embed, embedding.vector_cache)
        await _fold_seeded_terms(config.memory_target())
        if analyze:
            await _analyze(database_url)
        channel = BenchChannel()
        runtime = await Runtime.open(config, [channel])
        try:
            await runtime.start(schedule=False)
            if runtime.engine.embedder is not None:
                await wait_until_embedder_ready(runtime)
            for i in range(warmup):  # in chats warm0… (as many as the window's, at least the default's)
                o = owners[i % chats]
                text = o.fill(_FIRING[i % len(_FIRING)])
                chat = f"warm{i % max(chats, WARMUP_MESSAGES)}"
                await runtime.loop.deliver(InboundMessage(CHANNEL, chat, o.sender_id, text, f"warm{i}"))
            await runtime.loop.drain()
            channel.reset()
            inbound = [
                InboundMessage(CHANNEL, o.chat_id, o.sender_id, texts[j], f"{o.chat_id}:{j}")
                for j in range(messages)
                for o, texts in [(o, messages_for(o, messages)) for o in owners]
            ]
            await asyncio.sleep(STATS_SETTLE_S)
            before = probe.snapshot()
            cpu0, started = time.process_time(), time.perf_counter()
            for m in inbound:
                await runtime.loop.deliver(m)
            await runtime.loop.drain()
            wall = time.perf_counter() - started
            client_cpu = time.process_time() - cpu0
            at_end = probe.snapshot()  # statements, WAL and CPU now: nothing after the window counts
            await asyncio.sleep(STATS_SETTLE_S)
            after = replace(probe.snapshot(), statements=at_end.statements, wal_bytes=at_end.wal_bytes)
            after = replace(
                after,
                next_xid=at_end.next_xid,
                wal_records=at_end.wal_records,
                cpu_s=at_end.cpu_s,
                cpu_by_pid=at_end.cpu_by_pid,
                run_ns_by_pid=at_end.run_ns_by_pid,
                plan_ms=at_end.plan_ms,
                exec_ms=at_end.exec_ms,
                plans=at_end.plans,
            )
            if len(channel.sent_at) != len(inbound):
                raise RuntimeError(f"{len(channel.sent_at)} replies for {len(inbound)} messages")
        finally:
            await runtime.close()
            probe.close()
    n = len(inbound)
    result = per_message(before, after, n, top)
    result.update(
        {
            "store": "postgresql",
            "messages": n,
            "chats": chats,
            "messages_per_chat": messages,
            "memories": preload.memories,
            "embedding": embedding.provider,
            "warmup_messages": warmup,
            "analyzed": analyze,
            "wall_s": round(wall, 3),
            "msgs_per_s": n / wall if wall else None,
            "client_cpu_ms_per_msg": client_cpu * 1000.0 / n,
            "pg_stat_statements": probe.statements,
            "notes": probe.notes,
        }
    )
    return result


async def _fold_seeded_terms(target: str) -> None:
    """Fold the term deltas the seeding's burst of writes left (schema 20): a running gateway's later writes
    and reads fold them, so the window must not pay that once-only fold. A store before schema 20 has
    nothing to fold."""
    from memory.engine import MemoryEngine

    engine = await MemoryEngine.open(target)
    try:
        fold = getattr(engine.store.search, "fold_terms", None)
        if fold is not None:
            await fold()
    finally:
        await engine.close()


async def _analyze(database_url: str) -> None:
    """``ANALYZE`` of the tables holding rows: the planner statistics a home's tables have once autovacuum
    saw them. Without, the window measured when autovacuum reached the seeded ``memories`` (docs/scale-out.md,
    "The buffer's running count": the candidates' generic plans walked the owner's whole partition until
    then). An empty table is left as autovacuum leaves it (it analyses a table after 50 changed rows):
    analysed empty, the inbox and the turns got generic plans that scanned them sequentially, by primary
    key too, as the window filled them (docs/scale-out.md, "Tried and not kept", 2026-12-01)."""
    import psycopg
    from psycopg import sql

    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as conn:
        tables = await (await conn.execute(_TABLES)).fetchall()
        for (name,) in tables:
            table = sql.Identifier(name)
            held = await (
                await conn.execute(sql.SQL("SELECT EXISTS (SELECT 1 FROM {})").format(table))
            ).fetchone()
            if held is not None and held[0]:
                await conn.execute(sql.SQL("ANALYZE {}").format(table))


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(prog="python -m bench.db_cost", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--chats", type=int, default=DEFAULT_CHATS, help=f"chats/owners (default {DEFAULT_CHATS})"
    )
    parser.add_argument(
        "--messages",
        type=int,
        default=DEFAULT_MESSAGES,
        help=f"messages per chat (default {DEFAULT_MESSAGES})",
    )
    parser.add_argument(
        "--memories",
        type=int,
        default=DEFAULT_MEMORIES,
        help=f"Tier 2 memories seeded per owner (default {DEFAULT_MEMORIES})",
    )
    parser.add_argument(
        "--warmup",
        type=int,
        default=WARMUP_MESSAGES,
        help=f"messages answered before the window (default {WARMUP_MESSAGES}); a few hundred warm every "
        "pooled connection's prepared statements and plans first, so the window shows the steady state",
    )
    parser.add_argument(
        "--no-analyze",
        dest="analyze",
        action="store_false",
        help="leave the seeded tables to autovacuum (the bench before 2026-11-29; JSON ``analyzed``)",
    )
    parser.add_argument("--top", type=int, default=15, help="statements listed, busiest first (default 15)")
    parser.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    add_embedding_args(parser)
    parser.set_defaults(embedding="none", embedding_base_url=None)
    add_database_option(parser)
    args = parser.parse_args(argv)
    if not args.database:
        parser.error("--database postgresql://… is required: the bench reads a PostgreSQL server's counters")
    if args.chats < 1 or args.messages < 1 or args.memories < 0 or args.top < 0 or args.warmup < 0:
        parser.error("--chats and --messages must be at least 1, --memories, --top and --warmup at least 0")
    embedding = Embedding(
        provider=args.embedding,
        model=args.embedding_model,
        base_url=args.embedding_base_url,
        dimensions=args.embedding_dimensions,
    )
    with stub_server("process") as base_url, scratch_memory(args.database) as target:
        result = asyncio.run(
            run(
                target,
                args.database,
                base_url,
                args.chats,
                args.messages,
                args.memories,
                embedding,
                args.top,
                args.warmup,
                args.analyze,
            )
        )
    print_report(result)
    if args.json:
        emit_json(result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
