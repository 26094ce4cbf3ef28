"""``bench.db_cost``'s printed report: the per-message table, the server processes, the busiest statements."""

from __future__ import annotations

import sys
from typing import Any

from bench.db_cost_paths import SPLIT_KEYS
from bench.report import table


def print_report(result: dict[str, Any]) -> None:
    """The per-message table, then the busiest statements."""
    print(
        f"{result['messages']} messages ({result['chats']} chats × {result['messages_per_chat']}), "
        f"{result['memories']} memories, embedding {result['embedding']}, {result['msgs_per_s']:.1f} msgs/s"
    )
    keys = (
        "statements_per_msg",
        "round_trips_per_msg",
        "transactions_per_msg",
        "write_transactions_per_msg",
        *(k for k in SPLIT_KEYS if k.endswith("_per_msg")),  # the reply path apart from background work
        "rows_written_per_msg",
        "rows_inserted_per_msg",
        "rows_updated_per_msg",
        "rows_deleted_per_msg",
        "rows_read_per_msg",
        "rows_returned_per_msg",
        "wal_bytes_per_msg",
        "wal_records_per_msg",
        "server_cpu_ms_per_msg",
        "server_cpu_exact_ms_per_msg",
        "backend_cpu_exact_ms_per_msg",
        "statement_exec_ms_per_msg",
        "statement_plan_ms_per_msg",
        "msgs_per_s_per_core",
        "client_cpu_ms_per_msg",
    )
    rows = [[k, "n/a" if result[k] is None else round(float(result[k]), 2)] for k in keys]
    print(table(["per message", "value"], rows))
    if result.get("server_cpu_exact_ms_by_process"):
        print(
            table(
                ["server process", "CPU ms per message (schedstat)"],
                [[k, round(v, 3)] for k, v in result["server_cpu_exact_ms_by_process"].items()],
            )
        )
    if result.get("statements_by_family"):
        print(
            table(
                ["statement family (reply path unless background)", "per message"],
                [[k, round(v, 3)] for k, v in result["statements_by_family"].items()],
            )
        )
    if result["statement_kinds"]:
        print(
            table(
                ["statement kind", "per message"],
                [[k, round(v, 2)] for k, v in result["statement_kinds"].items()],
            )
        )
    if result["top_statements"]:
        print(
            table(
                ["per message", "mean ms", "plans/run", "plan ms/run", "statement"],
                [
                    [
                        round(s["per_msg"], 2),
                        round(s["mean_ms"], 3),
                        round(s["plans_per_call"], 2),
                        round(s["plan_ms_per_call"], 3),
                        s["query"][:100],
                    ]
                    for s in result["top_statements"]
                ],
            )
        )
    for note in result["notes"]:
        print(f"note: {note}", file=sys.stderr)
