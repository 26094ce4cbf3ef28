"""``tierclaw chat`` (the terminal channel) and ``tierclaw gateway`` (the long-running service).

Both load the configuration, print a one-line error and exit 2 when it is invalid, and run the same
``Runtime``. ``chat`` ends at end of input (or ``/quit``) after the pending replies are printed (exit
0): it then saves memories — the pending turns are extracted, for at most ``memory.extraction.exitFlush``
— and what is not done stays buffered for the next run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from channels.base import Channel, ChannelError
from gateway.log_setup import ready_line
from memory.text.wording import plural

if TYPE_CHECKING:  # the runtime, the config and the models load when a command runs, not for --help
    from gateway.app import Runtime
    from gateway.config import Config
    from gateway.dashboard.server import RunningDashboard


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``chat`` and ``gateway``."""
    chat = subparsers.add_parser(
        "chat",
        help="talk to the assistant in this terminal (reads lines from standard input)",
        description="Talk to the assistant in the terminal, memory included. Lines can be piped in: "
        "printf 'hello\\n/memory\\n' | tierclaw chat. /help lists the commands.",
    )
    chat.set_defaults(func=run_chat)
    service = subparsers.add_parser(
        "gateway",
        help="run the assistant for the chat channels enabled in the config (Telegram, Feishu)",
    )
    service.set_defaults(func=run_gateway)


def run_configured(args: argparse.Namespace, main: Callable[[Config], Coroutine[Any, Any, int]]) -> int:
    """Load the config, run ``main(config)`` in a fresh event loop (uvloop's when installed:
    gateway/event_loop.py); a bad config or database is exit 2."""
    from gateway.config import ConfigError, load_config
    from gateway.event_loop import run
    from memory.store.errors import MemoryDatabaseError

    try:
        return run(main(load_config(args.config)))
    except (ConfigError, MemoryDatabaseError) as exc:
        print(f"tierclaw: {exc}", file=sys.stderr)
        return 2


def run_chat(args: argparse.Namespace) -> int:
    """Entry point of ``tierclaw chat``."""
    return run_configured(args, _chat)


async def _chat(config: Config) -> int:
    from channels.console import ConsoleChannel
    from gateway.app import Runtime
    from gateway.process_lock import gateway_running

    console = ConsoleChannel()
    if console.interactive:
        console = ConsoleChannel(history_path=_private_history(config))
    runtime = await Runtime.open(config, [console])
    console.on_cancel = runtime.loop.cancel  # Ctrl-C while a reply is being made stops it
    try:
        if runtime.models.notice:  # once, at the start (and by /status), never in every reply
            print(runtime.models.notice, file=sys.stderr)
        if console.interactive:
            print(
                f"tierclaw chat · model {runtime.models.chat.label} · memory {runtime.engine.path}\n"
                "Type a message (Esc Enter for a new line), /help for commands, Ctrl-C to cancel a "
                "reply, /quit or Ctrl-D to leave.",
                file=sys.stderr,
            )
        # Beside a running gateway (gateway/process_lock.py) the scheduled jobs are the gateway's to run.
        await runtime.start(schedule=not gateway_running(config.db_path()), freeze_heap=True)
        await console.finished.wait()
        await runtime.loop.drain()
        await _save_memories(runtime)
    finally:
        await runtime.close()
    return 0


def _private_history(config: Config) -> Path | None:
    """The terminal's input history file, readable by its owner alone; None (history for this session
    only) when it cannot be made."""
    from memory.files.private import private_dir, private_file

    path = config.chat_history_path()
    try:
        private_dir(path.parent)
        private_file(path)
    except OSError as exc:
        print(f"tierclaw: input history is not kept ({path}: {exc.strerror or exc})", file=sys.stderr)
        return None
    return path


NOTHING_KEPT = (
    "nothing said this session to keep as a memory (tierclaw memory search --turns finds what was said)"
)


async def _save_memories(runtime: Runtime) -> None:
    """Extract what the session left buffered before exiting, then say what this conversation kept as
    memories — all of it, also what was kept along the way (the offline stand-in's statements, ``/new``,
    ``/memory``) — on stderr: replies stay clean. Nothing said, nothing printed."""
    extraction = runtime.assistant.extraction
    if extraction is None:
        return
    left = 0
    if await extraction.buffer.pending_turns():
        print("saving memories…", file=sys.stderr, flush=True)
        _, left = await runtime.save_memories(runtime.config.memory.extraction.exit_flush)
    elif not extraction.kept:
        return
    parts = [f"kept {plural(extraction.kept, 'memory')} this session"] if extraction.kept else []
    if left:
        verb = "is" if left == 1 else "are"
        parts.append(f"{plural(left, 'message')} {verb} still buffered and will be saved at the next start")
    if not parts:
        parts.append(NOTHING_KEPT)
    line = "; ".join(parts)
    print(line, file=sys.stderr)


def enabled_channels(config: Config) -> list[Channel]:
    """The chat platform channels the config enables, built from their config sections."""
    channels: list[Channel] = []
    tg = config.channels.telegram
    if tg.enabled:
        from channels.telegram.channel import TelegramChannel, TelegramSettings  # imports PTB only when used

        channels.append(
            TelegramChannel(
                TelegramSettings(
                    token=tg.token.get_secret_value(),
                    allow_from=tuple(tg.allow_from),
                    base_url=tg.base_url,
                    mode=tg.mode,
                    group_policy=tg.group_policy,
                    timeout_seconds=tg.timeout_seconds,
                    webhook_url=tg.webhook.url,
                    webhook_listen=tg.webhook.listen,
                    webhook_port=tg.webhook.port,
                    webhook_path=tg.webhook.path,
                    webhook_secret=tg.webhook.secret_token.get_secret_value(),
                    stream_every=tg.stream_every,
                    draft_every=tg.draft_every,
                )
            )
        )
    fs = config.channels.feishu
    if fs.enabled:
        from channels.feishu.channel import FeishuChannel, FeishuSettings  # imports lark-oapi only when used

        channels.append(
            FeishuChannel(
                FeishuSettings(
                    app_id=fs.app_id,
                    app_secret=fs.app_secret.get_secret_value(),
                    allow_from=tuple(fs.allow_from),
                    verification_token=fs.verification_token.get_secret_value(),
                    encrypt_key=fs.encrypt_key.get_secret_value(),
                    domain=fs.domain_url(),
                    mode=fs.mode,
                    timeout_seconds=fs.timeout_seconds,
                    callback_listen=fs.callback.listen,
                    callback_port=fs.callback.port,
                    callback_path=fs.callback.path,
                    stream_cards=fs.stream_cards,
                    stream_every=fs.stream_every,
                )
            )
        )
    if not channels:
        from gateway.config import ConfigError

        raise ConfigError(
            "no chat channel is enabled: set channels.telegram.enabled or channels.feishu.enabled "
            "(with their credentials), or use `tierclaw chat` to talk in the terminal"
        )
    return channels


DRAIN_SECONDS = 30.0  # at shutdown: time to answer what was already taken in


def stop_signal() -> asyncio.Event:
    """An event set by SIGINT or SIGTERM (a service's stop, Ctrl-C in its terminal)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    return stop


def run_gateway(args: argparse.Namespace) -> int:
    """Entry point of ``tierclaw gateway``: run until SIGINT/SIGTERM."""
    return run_configured(args, _serve)


async def _serve(config: Config) -> int:
    """One gateway per SQLite file (gateway/process_lock.py): a second one is refused with one line.
    On PostgreSQL (``memory.databaseUrl``) no lock is taken: several gateways share the database and
    coordinate in it — job claims, the Telegram poller's lock, inbox leases (docs/scale-out.md)."""
    from gateway.process_lock import GatewayAlreadyRunning, hold_gateway_lock

    if config.memory.database_url:
        return await _serve_locked(config)
    try:
        lock = hold_gateway_lock(config.db_path())
    except GatewayAlreadyRunning as exc:
        print(f"tierclaw: {exc}", file=sys.stderr)
        return 2
    with lock:
        return await _serve_locked(config)


async def _serve_locked(config: Config) -> int:
    from gateway.app import Runtime
    from gateway.ops_http import start_operations
    from memory.clock import set_offset

    if config.gateway.clock_offset:  # trials only: this replica's clock runs off (docs/scale-out.md)
        set_offset(config.gateway.clock_offset)

    page_settings = config.dashboard
    if page_settings.enabled:
        from gateway.dashboard.access import DashboardAccessError, check_bind

        try:
            check_bind(page_settings.host, page_settings.port, page_settings.allow_remote)
        except DashboardAccessError as exc:
            print(f"tierclaw: {exc}", file=sys.stderr)
            return 2
    runtime = await Runtime.open(config, enabled_channels(config))
    stop = stop_signal()
    try:
        ops = await start_operations(runtime)  # replica id in log lines; /healthz /readyz /metrics
    except OSError as exc:
        await runtime.close()
        print(f"tierclaw: cannot listen on gateway.http.port: {exc.strerror or exc}", file=sys.stderr)
        return 2
    try:
        if runtime.models.notice:
            print(runtime.models.notice, file=sys.stderr)
        await runtime.start(freeze_heap=True)
        page = await start_page(runtime) if page_settings.enabled else None
        ops.ready()
    except ChannelError as exc:
        await ops.stop()
        await runtime.close()
        print(f"tierclaw: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        await ops.stop()
        await runtime.close()
        print(f"tierclaw: cannot listen for the memory page: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except BaseException:
        await ops.stop()
        await runtime.close()
        raise
    ready_line(ready_parts(runtime, page.url.split("?")[0] if page is not None else None))
    await stop.wait()
    ops.stopping()
    if page is not None:
        await page.stop()
    await runtime.shutdown(DRAIN_SECONDS)
    await ops.stop()
    return 0


def ready_parts(runtime: Runtime, page_url: str | None) -> list[str]:
    """One entry per thing started, for the ready line: each channel as it names itself (bot name and
    mode, never a token), the model, the memory database, the memory page's address (no token)."""
    from channels.base import NamesItself
    from gateway.log_setup import home_relative

    parts = [c.ready_label if isinstance(c, NamesItself) else c.name for c in runtime.channels]
    parts.append(f"model {runtime.models.chat.label}")
    if runtime.config.memory.database_url:  # engine.path is the URL with its password masked
        parts.append(f"memory postgresql {runtime.engine.path}")
    else:
        parts.append(f"memory sqlite {home_relative(runtime.engine.path)}")
    if page_url is not None:
        parts.append(f"page {page_url}")
    return parts


async def start_page(runtime: Runtime) -> RunningDashboard:
    """The memory page beside the gateway (``dashboard.enabled``). Its address is printed without the
    token: a service's output often ends up in a log file, the token file stays private."""
    from gateway.dashboard.access import TOKEN_FILE
    from gateway.dashboard.server import start_for

    settings = runtime.config.dashboard
    page = await start_for(
        runtime,
        host=settings.host,
        port=settings.port,
        allow_remote=settings.allow_remote,
        with_replies=True,
    )
    where = (
        f"the token in {runtime.config.db_path().parent / TOKEN_FILE}"
        if runtime.config.memory_on_file()
        else "the token kept in the database"
    )
    print(
        f"memory page: {page.url.split('?')[0]} (open it with ?token=<{where}>, "
        "or run `tierclaw dashboard` for a ready link)",
        file=sys.stderr,
    )
    return page
