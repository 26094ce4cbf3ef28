"""Chat commands: /help, /new, /memory, /remember, /forget, /scratchpad, /status, /reminders, /timezone.

Commands are handled before the model is called and are not conversation: they are neither sent to the
model nor buffered for extraction. Memory ids shown by ``/memory`` are the numbers ``/forget`` takes,
stable across restarts and channels. Replies are in the person's language (``command_words.py``): the
command's own text decides ("/remember 我女儿叫小雨"), else their latest messages in the chat.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gateway.command_words import EN, HELP_TEXT, ZH
from gateway.reminders.book import ReminderBook
from gateway.reminders.commands import reminders_command, timezone_command
from memory.engine import MemoryEngine
from memory.files.file_memory import FileMemory
from memory.head.filing import file_category
from memory.pipeline.extraction import ExtractionService
from memory.records import GLOBAL_PROJECT, Fact, Memory
from memory.sessions import SessionStore
from memory.text.wording import is_chinese, plural, speaks_chinese

__all__ = ["HELP_TEXT", "PRIVATE_ONLY_REPLY", "CommandContext", "is_command", "run_command"]

# How many Tier 2 memories /memory lists after the core profile.
MEMORY_LIST_LIMIT = 15
# A /forget TEXT hit must contain at least this idf-weighted share of the words to be forgotten.
FORGET_MIN_MATCH = 0.6
MANUAL_IMPORTANCE = 0.8
# A memory number is ASCII digits ("²" and "٣" are digits to Python, not to SQLite), at most SQLite's
# largest integer.
_ASCII_NUMBER = re.compile(r"[0-9]+")
MAX_MEMORY_ID = 2**63 - 1


@dataclass(slots=True)
class CommandContext:
    """The parts commands act on. ``extraction`` is None when the tiered memory is disabled
    (``memory.enabled: false``)."""

    engine: MemoryEngine
    sessions: SessionStore
    extraction: ExtractionService | None
    file_memory: FileMemory | None
    flush_wait: float = 15.0  # how long /memory waits for pending turns to be extracted first
    model_label: str = ""  # the main model, for /status
    notice: str | None = None  # how to configure a real model, when the offline stand-in answers
    reminders: ReminderBook | None = None  # /reminders, /timezone (gateway/reminders/commands.py)


def is_command(text: str) -> bool:
    """True for ``/word ...`` messages (a Telegram ``/cmd@botname`` suffix is allowed)."""
    return text.startswith("/") and len(text) > 1 and not text[1].isspace()


# Commands whose answer shows someone's memories: in a group everyone would read it.
PRIVATE_COMMANDS = frozenset({"memory", "forget", "scratchpad", "reminders"})
PRIVATE_ONLY_REPLY = EN["private_only"]
# How many of the chat's latest messages tell which language the person writes.
LANGUAGE_MESSAGES = 6


async def run_command(
    ctx: CommandContext, owner: str, chat_key: str, text: str, *, in_group: bool = False
) -> str:
    """Execute one command and return the reply text (``in_group``: refuse the private ones)."""
    text = "".join(ch for ch in text if ch.isprintable() or ch in "\n\t")  # no NUL or escape echoed back
    word, _, rest = text.strip().partition(" ")
    name = word[1:].split("@", 1)[0].lower()
    rest = rest.strip()
    w = await _words(ctx, chat_key, rest)
    if in_group and name in PRIVATE_COMMANDS:
        return w["private_only"].format(name=name)
    if name in ("help", "start"):
        return w["help"]
    if name == "new":
        return await _new(ctx, owner, chat_key, w)
    if name == "memory":
        return await _memory(ctx, owner, w)
    if name == "remember":
        return await _remember(ctx, owner, rest, w)
    if name == "forget":
        return await _forget(ctx, owner, rest, w)
    if name == "status":
        return await _status(ctx, owner, w)
    if name == "scratchpad":
        return await _scratchpad(ctx, owner, rest, w)
    if name in ("reminders", "timezone"):
        if ctx.reminders is None:
            return w["reminders_off"]
        run = reminders_command if name == "reminders" else timezone_command
        return await run(ctx.reminders, owner, rest, "zh" if w is ZH else "en")
    return w["unknown"].format(name=name)


async def _words(ctx: CommandContext, chat_key: str, rest: str) -> dict[str, str]:
    """The wording table for the person: their command's text when it has words, else their latest
    messages in this chat (a failing read falls back to English rather than failing the command)."""
    if any(ch.isalpha() for ch in rest):
        return ZH if is_chinese(rest) else EN
    try:
        history = await ctx.sessions.history(chat_key, LANGUAGE_MESSAGES)
    except Exception:
        return EN
    return ZH if speaks_chinese(content for role, content in history if role == "user") else EN


def _count(w: dict[str, str], count: int, noun: str) -> str:
    """A count as the table's language writes it ("1 memory" / "3 memories"; Chinese: the number)."""
    return str(count) if w is ZH else plural(count, noun)


async def _new(ctx: CommandContext, owner: str, chat_key: str, w: dict[str, str]) -> str:
    if ctx.extraction is not None:
        # The old session's turns are already buffered: extract them now, in the background (this
        # reply does not wait for the memory model).
        ctx.extraction.flush_soon(owner)
    await ctx.sessions.new_session(chat_key)
    return w["new"]


def _describe(mem: Memory, w: dict[str, str]) -> str:
    where = "" if mem.project == GLOBAL_PROJECT else w["project"].format(project=mem.project)
    return f"[{mem.id}] {' '.join(mem.content.split())}{where}"


async def _memory(ctx: CommandContext, owner: str, w: dict[str, str]) -> str:
    if ctx.extraction is None:
        notes = ctx.file_memory.read_long_term().strip() if ctx.file_memory else ""
        return w["file_notes"].format(notes=notes) if notes else w["no_file_notes"]
    # What was just said should show up: extract the pending turns first (bounded; a slow memory
    # model finishes in the background and the note below says so).
    await ctx.extraction.flush_now(owner, ctx.flush_wait)
    profile = await ctx.engine.profile(owner)
    knowledge = await ctx.engine.top_memories(owner, MEMORY_LIST_LIMIT)
    waiting = await ctx.extraction.buffer.pending_tokens(owner)
    lines: list[str] = []
    if profile:
        lines.append(w["about_you"])
        lines.extend(_describe(m, w) for m in profile)
    if knowledge:
        lines.append(w["what_i_remember"] if not profile else "\n" + w["what_i_remember"])
        lines.extend(_describe(m, w) for m in knowledge)
    if not lines:
        lines.append(w["nothing_yet"])
    else:
        lines.append("\n" + w["forget_hint"])
    if waiting:
        lines.append(w["still_saving"])
    return "\n".join(lines)


async def _remember(ctx: CommandContext, owner: str, text: str, w: dict[str, str]) -> str:
    if not text:
        return w["remember_usage"]
    if ctx.extraction is None:
        if ctx.file_memory is None:
            return w["memory_disabled"]
        ctx.file_memory.append_long_term(f"- {text}")
        return w["noted_in_file"].format(text=text)
    try:
        # embed=False: the user is waiting; the backfill gives the row its vector moments later (the
        # head's filing embedded it already: a cache hit). Filed as extraction files it
        # (memory/head/filing.py).
        category = await file_category(text, ctx.engine.embedder)
        fact = Fact(content=text, source="manual", importance=MANUAL_IMPORTANCE, category=category)
        result = await ctx.engine.write(owner, fact, embed=False)
    except ValueError as exc:
        return w["could_not_remember"].format(error=exc)
    if result.action == "merged":
        return w["already_knew"].format(id=result.id)
    return w["remembered"].format(id=result.id, text=text)


async def _forget(ctx: CommandContext, owner: str, arg: str, w: dict[str, str]) -> str:
    if not arg:
        return w["forget_usage"]
    if ctx.extraction is None:
        return w["forget_needs_memory"]
    number = arg.lstrip("#[").rstrip("]")
    if _ASCII_NUMBER.fullmatch(number):
        memory_id = int(number)
        if memory_id > MAX_MEMORY_ID:  # beyond what SQLite stores: no such memory, never an overflow
            return w["no_such_memory"].format(number=number)
        mem = await ctx.engine.get(owner, memory_id)
        if mem is None or mem.is_archived:
            return w["no_such_memory"].format(number=memory_id)
        await ctx.engine.archive(owner, memory_id)
        return w["forgot"].format(id=memory_id, content=mem.content)
    hits = await ctx.engine.search(owner, arg, k=3)
    if not hits or hits[0].match < FORGET_MIN_MATCH:
        return w["no_match"].format(text=arg)
    top = hits[0]
    await ctx.engine.archive(owner, top.id)
    return w["forgot"].format(id=top.id, content=top.content)


async def _status(ctx: CommandContext, owner: str, w: dict[str, str]) -> str:
    lines = [w["model"].format(label=ctx.model_label or w["unknown_model"])]
    if ctx.notice:
        lines.append(ctx.notice)
    if ctx.extraction is None:
        lines.append(w["status_file_memory"])
        return "\n".join(lines)
    counts = await ctx.engine.stats(owner)
    waiting = await ctx.extraction.buffer.pending_turns(owner)
    lines.append(
        w["status_memory"].format(
            profile=_count(w, counts["tier1"], "profile fact"),
            memories=_count(w, counts["tier2"], "memory"),
            summaries=_count(w, counts["tier3_events"], "daily summary"),
            waiting=_count(w, waiting, "message"),
        )
    )
    return "\n".join(lines)


async def _scratchpad(ctx: CommandContext, owner: str, arg: str, w: dict[str, str]) -> str:
    if ctx.extraction is None:
        return w["scratchpad_needs_memory"]
    action, _, text = arg.partition(" ")
    if action.lower() == "clear":
        cleared = await ctx.engine.scratchpad.clear(owner)
        return w["scratchpad_cleared"] if cleared else w["scratchpad_was_empty"]
    if action.lower() == "set":
        if not text.strip():
            return w["scratchpad_set_usage"]
        note = await ctx.engine.scratchpad.put(owner, text)
        return w["scratchpad_replaced"].format(content=note.content)
    if action:
        return w["scratchpad_usage"]
    note = await ctx.engine.scratchpad.get(owner)
    if not note.content:
        return w["scratchpad_empty"]
    return w["scratchpad"].format(when=note.updated_at[:16], content=note.content)
