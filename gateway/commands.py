"""Chat commands: /help, /new, /memory, /remember, /forget, /scratchpad, /status.

Commands are handled before the model is called and are not conversation: they are neither sent to the
model nor buffered for extraction. Memory ids shown by ``/memory`` are the numbers ``/forget`` takes,
stable across restarts and channels.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memory.engine import MemoryEngine
from memory.files.file_memory import FileMemory
from memory.pipeline.extraction import ExtractionService
from memory.records import GLOBAL_PROJECT, Fact, Memory
from memory.sessions import SessionStore

HELP_TEXT = """Commands:
/new — start a fresh conversation (what you said so far is saved to memory now)
/memory — what I remember about you, numbered
/remember TEXT — remember TEXT now
/forget N — forget memory number N (from /memory); /forget TEXT forgets the best match
/scratchpad — my running note on what you are working on; /scratchpad clear, /scratchpad set TEXT
/status — which model answers and how much I remember about you
/help — this list
/quit — leave the terminal chat (saving memories first)"""

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
    """The parts commands act on. ``extraction`` is None when SQLite memory is disabled."""

    engine: MemoryEngine
    sessions: SessionStore
    extraction: ExtractionService | None
    file_memory: FileMemory | None
    flush_wait: float = 15.0  # how long /memory waits for pending turns to be extracted first
    model_label: str = ""  # the main model, for /status
    notice: str | None = None  # how to configure a real model, when the offline stand-in answers


def is_command(text: str) -> bool:
    """True for ``/word ...`` messages (a Telegram ``/cmd@botname`` suffix is allowed)."""
    return text.startswith("/") and len(text) > 1 and not text[1].isspace()


# Commands whose answer shows someone's memories: in a group everyone would read it.
PRIVATE_COMMANDS = frozenset({"memory", "forget", "scratchpad"})
PRIVATE_ONLY_REPLY = "/{name} shows your memories, so ask me in a private chat, not in a group."


async def run_command(
    ctx: CommandContext, owner: str, chat_key: str, text: str, *, in_group: bool = False
) -> str:
    """Execute one command and return the reply text (``in_group``: refuse the private ones)."""
    text = "".join(ch for ch in text if ch.isprintable() or ch in "\n\t")  # no NUL or escape echoed back
    word, _, rest = text.strip().partition(" ")
    name = word[1:].split("@", 1)[0].lower()
    rest = rest.strip()
    if in_group and name in PRIVATE_COMMANDS:
        return PRIVATE_ONLY_REPLY.format(name=name)
    if name in ("help", "start"):
        return HELP_TEXT
    if name == "new":
        return await _new(ctx, owner, chat_key)
    if name == "memory":
        return await _memory(ctx, owner)
    if name == "remember":
        return await _remember(ctx, owner, rest)
    if name == "forget":
        return await _forget(ctx, owner, rest)
    if name == "status":
        return await _status(ctx, owner)
    if name == "scratchpad":
        return await _scratchpad(ctx, owner, rest)
    return f"Unknown command /{name}.\n{HELP_TEXT}"


async def _new(ctx: CommandContext, owner: str, chat_key: str) -> str:
    if ctx.extraction is not None:
        # The old session's turns are already buffered: extract them now, in the background (this
        # reply does not wait for the memory model).
        ctx.extraction.flush_soon(owner)
    await ctx.sessions.new_session(chat_key)
    return "Started a new conversation. What you told me before is being saved to memory."


def _describe(mem: Memory) -> str:
    where = "" if mem.project == GLOBAL_PROJECT else f" (project {mem.project})"
    return f"[{mem.id}] {' '.join(mem.content.split())}{where}"


async def _memory(ctx: CommandContext, owner: str) -> str:
    if ctx.extraction is None:
        notes = ctx.file_memory.read_long_term().strip() if ctx.file_memory else ""
        return f"My notes (file memory):\n{notes}" if notes else "I have no notes yet."
    # What was just said should show up: extract the pending turns first (bounded; a slow memory
    # model finishes in the background and the note below says so).
    await ctx.extraction.flush_now(owner, ctx.flush_wait)
    profile = await ctx.engine.profile(owner)
    knowledge = await ctx.engine.top_memories(owner, MEMORY_LIST_LIMIT)
    waiting = await ctx.extraction.buffer.pending_tokens(owner)
    lines: list[str] = []
    if profile:
        lines.append("About you:")
        lines.extend(_describe(m) for m in profile)
    if knowledge:
        lines.append("What I remember:" if not profile else "\nWhat I remember:")
        lines.extend(_describe(m) for m in knowledge)
    if not lines:
        lines.append("I don't remember anything about you yet. Tell me, or use /remember TEXT.")
    else:
        lines.append("\nForget one with /forget N.")
    if waiting:
        lines.append("(Our latest messages are still being turned into memories.)")
    return "\n".join(lines)


async def _remember(ctx: CommandContext, owner: str, text: str) -> str:
    if not text:
        return "Usage: /remember TEXT — for example /remember I prefer answers in Chinese"
    if ctx.extraction is None:
        if ctx.file_memory is None:
            return "Memory is disabled."
        ctx.file_memory.append_long_term(f"- {text}")
        return f"Noted in MEMORY.md: {text}"
    try:
        # embed=False: the user is waiting; the backfill gives the row its vector moments later.
        result = await ctx.engine.write(
            owner,
            Fact(content=text, source="manual", importance=MANUAL_IMPORTANCE, category="event"),
            embed=False,
        )
    except ValueError as exc:
        return f"I could not remember that: {exc}"
    if result.action == "merged":
        return f"I already knew that [{result.id}]."
    return f"Remembered [{result.id}]: {text}"


async def _forget(ctx: CommandContext, owner: str, arg: str) -> str:
    if not arg:
        return "Usage: /forget N (a number from /memory) or /forget TEXT"
    if ctx.extraction is None:
        return "Forgetting works with the SQLite memory; edit MEMORY.md in the workspace instead."
    number = arg.lstrip("#[").rstrip("]")
    if _ASCII_NUMBER.fullmatch(number):
        memory_id = int(number)
        if memory_id > MAX_MEMORY_ID:  # beyond what SQLite stores: no such memory, never an overflow
            return f"You have no memory number {number}. /memory lists them."
        mem = await ctx.engine.get(owner, memory_id)
        if mem is None or mem.is_archived:
            return f"You have no memory number {memory_id}. /memory lists them."
        await ctx.engine.archive(owner, memory_id)
        return f"Forgot [{memory_id}]: {mem.content}"
    hits = await ctx.engine.search(owner, arg, k=3)
    if not hits or hits[0].match < FORGET_MIN_MATCH:
        return f"Nothing I remember matches “{arg}”. /memory lists what I remember."
    top = hits[0]
    await ctx.engine.archive(owner, top.id)
    return f"Forgot [{top.id}]: {top.content}"


async def _status(ctx: CommandContext, owner: str) -> str:
    lines = [f"Model: {ctx.model_label or 'unknown'}"]
    if ctx.notice:
        lines.append(ctx.notice)
    if ctx.extraction is None:
        lines.append("Memory: notes in MEMORY.md (SQLite memory is off).")
        return "\n".join(lines)
    counts = await ctx.engine.stats(owner)
    waiting = await ctx.extraction.buffer.pending_turns(owner)
    lines.append(
        f"Memory: {counts['tier1']} profile facts and {counts['tier2']} memories about you, "
        f"{counts['tier3_events']} daily summaries; {waiting} messages waiting to be saved."
    )
    return "\n".join(lines)


async def _scratchpad(ctx: CommandContext, owner: str, arg: str) -> str:
    if ctx.extraction is None:
        return "The scratchpad works with the SQLite memory."
    action, _, text = arg.partition(" ")
    if action.lower() == "clear":
        cleared = await ctx.engine.scratchpad.clear(owner)
        return "Cleared my scratchpad about you." if cleared else "My scratchpad about you was already empty."
    if action.lower() == "set":
        if not text.strip():
            return "Usage: /scratchpad set TEXT (Markdown; replaces the whole note)"
        note = await ctx.engine.scratchpad.put(owner, text)
        return f"Scratchpad replaced:\n{note.content}"
    if action:
        return "Usage: /scratchpad, /scratchpad clear or /scratchpad set TEXT"
    note = await ctx.engine.scratchpad.get(owner)
    if not note.content:
        return "My scratchpad about you is empty: I fill it in as we talk about what you are working on."
    return f"My scratchpad about you (updated {note.updated_at[:16]} UTC):\n{note.content}"
