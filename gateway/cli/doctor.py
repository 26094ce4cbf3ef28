"""``tierclaw doctor [--json]``: one command that checks the setup, one ✔/✘ line per check with the fix.

The checks (``doctor_checks.py`` local, ``doctor_remote.py`` over the network) run in this order: the
config (valid; where each shown value came from), the memory database, the model, the memory model, the
embedder, then each enabled channel's credentials. An invalid config stops there (nothing else can be
read). Exit 0 when every check passed, 1 when any failed. Nothing secret is printed. Everything is
imported when the command runs, so ``tierclaw --help`` never loads openai, telegram or lark.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gateway.cli.doctor_checks import Check
    from gateway.config import Config


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``doctor``."""
    parser = subparsers.add_parser(
        "doctor",
        help="check the setup: config, database, models, embedder, channel credentials",
        description="Check the setup, one line per check with what to fix; exit 1 if any check fails. "
        "Asks the model, the embedder and each enabled channel once (no retries).",
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run every check, print them, exit 0 (all ✔) or 1 (any ✘)."""
    checks = asyncio.run(collect(args.config))
    if args.json:
        ok = all(check.ok for check in checks)
        print(json.dumps({"ok": ok, "checks": [c.as_json() for c in checks]}, ensure_ascii=False, indent=2))
    else:
        print(render(checks))
    return 0 if all(check.ok for check in checks) else 1


async def collect(config_arg: str | None) -> list[Check]:
    """Every check, in order; only the config check when the config is invalid."""
    from gateway.cli.doctor_checks import check_config, check_database, check_ffmpeg

    config_check, config = check_config(config_arg)
    if config is None:
        return [config_check]
    checks = [config_check, check_database(config)]
    if config.media.transcription.convert_to_wav:  # the one back-end setting that needs ffmpeg
        checks.append(check_ffmpeg())
    checks.extend(await remote_checks(config))
    return checks


async def remote_checks(config: Config) -> list[Check]:
    """The model, the memory model, the embedder, the enabled channels (one after the other: a slow
    server delays only its own line)."""
    from gateway.cli import doctor_remote as remote

    checks = [await remote.check_model("model", config.provider, config.agent.model, "agent.model")]
    checks.append(await remote.check_memory_model(config))
    checks.append(await remote.check_embedder(config))
    if config.channels.telegram.enabled:
        checks.extend(await remote.check_telegram(config))
    if config.channels.feishu.enabled:
        checks.append(await remote.check_feishu(config))
        if checks[-1].ok:  # the app is let in: may it stream replies as cards?
            from gateway.cli.doctor_cards import check_feishu_cards

            checks.append(await check_feishu_cards(config))
    return checks


def render(checks: list[Check]) -> str:
    """``✔ name: detail`` or ``✘ name: detail — fix: …``, the config's origins indented below it."""
    lines = []
    for check in checks:
        mark = "✔" if check.ok else "✘"
        fix = f" — fix: {check.fix}" if check.fix and not check.ok else ""
        lines.append(f"{mark} {check.name}: {check.detail}{fix}")
        lines.extend(f"    {note}" for note in check.notes)
    failed = sum(not check.ok for check in checks)
    lines.append(f"{failed} problem(s) found" if failed else "everything checked is working")
    return "\n".join(lines)
