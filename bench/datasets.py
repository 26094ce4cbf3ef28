"""Convert the public data in ../shared/data into the generic benchmark format (see bench.dataset_format).

Usage (from the project root)::

    python -m bench.datasets locomo ../shared/data/locomo/locomo10.json -o FILE.json
    python -m bench.datasets locomo ../shared/data/locomo/locomo10.json --first-person -o FILE.json
    python -m bench.datasets madial ../shared/data/madial --lang zh -o FILE.json
    python -m bench.datasets gate ../shared/data -o FILE.jsonl

The data is never copied into the repository: converters read it where it lives and write wherever ``-o``
points. A missing input is reported in one line on stderr with exit code 1, because benchmarks run on
machines without the shared data and a traceback there would look like a bug.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Sequence
from typing import Any

from bench.dataset_format import write_dataset, write_jsonl
from bench.dataset_readers import MADIAL_LANGS, convert_locomo, convert_madial
from bench.dataset_readers import clean_turn as clean_turn
from bench.dataset_readers import madial_query_text as madial_query_text
from bench.dataset_readers import parse_datetime as parse_datetime
from bench.dataset_readers import split_dia_ids as split_dia_ids
from bench.first_person import convert_locomo_first_person
from bench.inputs import MissingInputError as MissingInputError
from bench.inputs import note as note
from bench.inputs import require_input as require_input

# ------------------------------------------------------------------------------------------------- CLI


def dataset_summary(data: dict[str, Any]) -> str:
    """One line: owners, memories, queries, dropped."""
    owners = data["owners"]
    memories = sum(len(owner["memories"]) for owner in owners)
    queries = sum(len(owner["queries"]) for owner in owners)
    return (
        f"{data['name']}: {len(owners)} owners, {memories} memories, {queries} queries "
        f"({data.get('dropped_no_evidence', 0)} dropped)"
    )


def _run_locomo(args: argparse.Namespace) -> None:
    """locomo subcommand."""
    if args.first_person and args.turns:
        raise SystemExit("choose --first-person or --turns, not both")
    if args.turns:
        from bench.locomo_turns import convert_locomo_turns

        data = convert_locomo_turns(args.path)
    else:
        data = convert_locomo_first_person(args.path) if args.first_person else convert_locomo(args.path)
    note(f"dropped {data['dropped_no_evidence']} queries with no evidence observation")
    write_dataset(args.output, data)
    note(dataset_summary(data))


def _run_madial(args: argparse.Namespace) -> None:
    """madial subcommand."""
    data = convert_madial(args.path, args.lang)
    note(f"dropped {data['dropped_no_evidence']} queries with no relevant memory of their user")
    write_dataset(args.output, data)
    note(dataset_summary(data))


def _run_gate(args: argparse.Namespace) -> None:
    """gate subcommand."""
    from bench.gate_set import build_gate  # it reads the LoCoMo and MADial converters of this module

    rows = build_gate(args.path)
    write_jsonl(args.output, rows)
    counts = Counter(row["source"] for row in rows)
    positives = sum(row["needs_memory"] for row in rows)
    note("gate sources: " + ", ".join(f"{source}={count}" for source, count in counts.items()))
    note(f"gate: {len(rows)} lines ({positives} need memory, {len(rows) - positives} do not)")


def build_parser() -> argparse.ArgumentParser:
    """The argparse CLI (one subcommand per converter)."""
    parser = argparse.ArgumentParser(prog="python -m bench.datasets", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    locomo = commands.add_parser("locomo", help="LoCoMo locomo10.json -> retrieval dataset")
    locomo.add_argument("path", help="path to locomo10.json")
    locomo.add_argument(
        "--first-person",
        action="store_true",
        help="one owner per speaker; questions and memories in the speaker's own voice (I/me/my)",
    )
    locomo.add_argument(
        "--turns",
        action="store_true",
        help="the dialogue turns as the corpus, the evidence turns as relevant (conversation_search's task)",
    )
    locomo.set_defaults(run=_run_locomo)
    madial = commands.add_parser("madial", help="MADial-Bench folder -> retrieval dataset")
    madial.add_argument("path", help="folder holding MADial-Bench-<lang>-{memory,dialogue}.json")
    madial.add_argument("--lang", choices=MADIAL_LANGS, required=True)
    madial.set_defaults(run=_run_madial)
    gate = commands.add_parser("gate", help="data root -> gate set (needs memory or not), JSON lines")
    gate.add_argument("path", help="the shared data folder (../shared/data)")
    gate.set_defaults(run=_run_gate)
    for command in (locomo, madial, gate):
        command.add_argument("-o", "--output", required=True, help="output file (parent dirs are created)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (1 with a one-line message when an input is missing)."""
    args = build_parser().parse_args(argv)
    try:
        args.run(args)
    except MissingInputError as exc:
        note(str(exc))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
