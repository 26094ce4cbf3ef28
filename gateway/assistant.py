"""The path of one message (docs/architecture.md, "The path of one message", steps 4–10), from an
InboundMessage to the reply text.

Order matters and is the point of this module: retrieval only runs when the gate says so; the memory
block is sent to the model beside the user's words and never buffered; the user's words and the reply are
kept together after the model answered, in one write (memory/exchange.py: until then the unanswered inbox
row is the message's record); a model failure or a cancelled reply still leaves the words kept.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from channels.base import InboundMessage
from gateway.agent import ChatModel, ChatRequest, ToolBox
from gateway.commands import CommandContext, is_command, run_command
from gateway.identity import Identities
from gateway.media.build import MediaParts
from gateway.media.send_back import asks_for_a_file, offline_send_back
from gateway.media.service import MediaTurn
from gateway.media.tools import AttachmentTools, WithAttachments
from gateway.memory_tools import MemoryTools, ToolSettings
from gateway.offline_chat import offline_hint, promised
from gateway.prompt import WorkspaceFiles, build_system_prompt, memory_block
from gateway.reminders.book import ReminderBook
from gateway.reminders.tools import message_tools
from gateway.streaming import reply_sink
from memory.engine import MemoryEngine
from memory.exchange import ExchangeKeeper, Said
from memory.files.file_memory import FileMemory
from memory.head.verdict import gate_verdict
from memory.model.keeper import head_usable
from memory.pipeline.extraction import ExtractionService
from memory.records import Retrieved
from memory.retrieval.gate import (
    asks_about_themselves,
    personal_question,
    should_retrieve,
    to_listener,
    topic_question,
)
from memory.retrieval.question import budget_memories, memories_wanted
from memory.retrieval.ranking import NO_FLOOR, RelevanceFloor
from memory.sessions import SessionStore
from memory.text.names import person_names
from memory.text.token_count import estimate_tokens
from memory.text.wording import is_chinese, speaks_chinese

log = logging.getLogger("tierclaw.gateway")

APOLOGY = "Sorry — I couldn't reach my language model just now. Please try again in a moment."
# When the model is not unreachable but misconfigured, waiting will not help: say so (details in the log).
APOLOGY_BY_KIND = {
    "auth": "Sorry — my language model refused its API key, so I can't answer until whoever runs me "
    "fixes it.",
    "not_found": "Sorry — my language model's name or address is wrong, so I can't answer until whoever runs "
    "me fixes it.",
}
TEXT_ONLY_REPLY = "I can only understand text for now, so I can't look at that {kind}."
CAPTION_NOTED = " I've noted its caption."
# The same replies for a person who writes Chinese (docs: gateway/README.md, "The person's language").
APOLOGY_ZH = "抱歉，我暂时连不上语言模型，请稍后再试。"
APOLOGY_BY_KIND_ZH = {
    "auth": "抱歉，语言模型拒绝了我的 API 密钥，需要运行我的人修好配置后我才能回答。",
    "not_found": "抱歉，语言模型的名称或地址不对，需要运行我的人修好配置后我才能回答。",
}
TEXT_ONLY_REPLY_ZH = "我目前只能看懂文字，没法查看这个{kind}。"
# A message bigger than one extraction batch (memory.extraction.tokenBudget) is refused whole: kept, it
# could only be cut into fragments (issue 37). Nothing of it is stored.
TOO_LONG_REPLY = (
    "That message is too long for me to take in at once (about {tokens:,} tokens; at most {budget:,}). "
    "I kept none of it — please send it in parts."
)
TOO_LONG_REPLY_ZH = (
    "这条消息太长了，我一次处理不了（约 {tokens:,} 个 token，上限 {budget:,}）。"
    "我没有保存其中任何内容，请分几次发送。"
)
CAPTION_NOTED_ZH = "它的说明文字我记下了。"
_ATTACHMENT_ZH = {"photo": "图片", "voice": "语音", "audio": "音频", "video": "视频", "document": "文件"}


@dataclass(slots=True)
class AssistantSettings:
    """Per-message knobs from the config."""

    workspace: Path
    history_messages: int = 20
    top_k: int = 7  # memory.topK's default (gateway/config/schema.py)
    flush_wait: float = 15.0  # /memory waits this long for the chat's pending turns to become memories
    floor: RelevanceFloor = NO_FLOOR  # what a retrieved memory needs to be injected (memory.relevanceFloor)
    notice: str | None = None  # how to configure a real model, when the offline stand-in answers
    tools: ToolSettings = field(default_factory=lambda: ToolSettings(enabled=False))  # agent.tools
    max_message_tokens: int | None = None  # longer messages are refused whole (memory.extraction.tokenBudget)
    hint: Callable[[str], str] = offline_hint  # how to get real answers (the config file in use)


# Channels that show the offline notice themselves when a chat starts (gateway/cli/run.py prints it for
# the terminal); elsewhere the first reply of each chat carries the short hint.
NOTICE_AT_START_CHANNELS = frozenset({"console"})

# "What do you know about me?": the memories that weigh most now, beside the profile in the system prompt.
OVERVIEW_MEMORIES = 10

# Reply-path memory timings kept: the newest ones only, so months of messages do not grow the list; a
# benchmark window (bench/gateway_throughput.py: at most a few thousand messages) fits.
TIMING_SAMPLES_KEPT = 10_000


@dataclass(slots=True)
class MemoryTiming:
    """Time spent on memory on the reply path, per message, newest ``TIMING_SAMPLES_KEPT`` (the throughput
    benchmark reads it)."""

    samples_ms: deque[float] = field(default_factory=lambda: deque(maxlen=TIMING_SAMPLES_KEPT))
    observer: Callable[[float], None] | None = None  # also told each sample, in ms (gateway/metrics.py)

    def add(self, ms: float) -> None:
        """Keep one message's reply-path memory time."""
        self.samples_ms.append(ms)
        if self.observer is not None:
            self.observer(ms)


@dataclass(frozen=True, slots=True)
class _Answer:
    """What the person is shown, the reply kept in the conversation (None: their words alone), and the
    offline stand-in's reply whose promise to remember is kept at once."""

    shown: str
    kept: str | None = None
    promise: str | None = None


def _apology(text: str, kind: str) -> str:
    """The apology for a failed model call, in the language of the message it answers."""
    if is_chinese(text):
        return APOLOGY_BY_KIND_ZH.get(kind, APOLOGY_ZH)
    return APOLOGY_BY_KIND.get(kind, APOLOGY)


class Assistant:
    """Answers messages: commands, Tier 0 history, gated retrieval, prompt, main model, extraction hand-off.

    ``extraction`` is None when ``memory.enabled`` is false: then the file memory feeds the system prompt
    and nothing is retrieved or extracted. The engine is still used for Tier 0 sessions.
    """

    def __init__(
        self,
        *,
        engine: MemoryEngine,
        sessions: SessionStore,
        chat_model: ChatModel,
        settings: AssistantSettings,
        identities: Identities | None = None,
        extraction: ExtractionService | None = None,
        file_memory: FileMemory | None = None,
        media: MediaParts | None = None,
        reminders: ReminderBook | None = None,
    ) -> None:
        self.engine = engine
        self.reminders = reminders  # reminders.enabled: the model's reminder tools, /reminders, /timezone
        self.sessions = sessions
        self.chat_model = chat_model
        self.settings = settings
        self.identities = identities or Identities()
        self.extraction = extraction
        self.file_memory = file_memory
        self.media = media  # voice notes, photos and files (gateway/media/); None: text only
        self.memory_timing = MemoryTiming()
        self._workspace = WorkspaceFiles(self.settings.workspace)
        self._commands = CommandContext(
            engine,
            sessions,
            extraction,
            file_memory,
            settings.flush_wait,
            model_label=chat_model.label,
            notice=settings.notice,
            reminders=reminders,
        )
        self._hinted: set[str] = set()  # chats whose first offline reply carried the offline hint
        self._exchange = ExchangeKeeper(engine.store, sessions, engine.conversation, extraction)

    async def handle(self, msg: InboundMessage) -> str | None:
        """The reply to one message, or None when there is nothing to answer (empty text)."""
        text = msg.text.strip()
        owner = self.identities.owner_for(msg.sender_key)
        turn: MediaTurn | None = None
        if msg.media and self.media is not None:  # heard, seen, read and kept first (gateway/media/)
            turn = await self.media.service.understand(msg, owner, await self._speaks_chinese(msg))
            text = turn.text
        elif msg.attachment:
            return await self._attachment(msg, owner, text)
        if not text:
            return "\n\n".join(turn.notices) if turn and turn.notices else None
        if turn is None and is_command(text):
            return await run_command(self._commands, owner, msg.chat_key, text, in_group=msg.is_group)
        if turn is None and (refusal := self._too_long(msg, text)) is not None:
            return refusal  # typed text only: what media brings (a transcript) is kept with its attachment

        started = time.perf_counter()
        history = await self.sessions.history(msg.chat_key, self.settings.history_messages)
        try:
            answer = await self._reply(msg, owner, text, turn, history, started)
        except BaseException:  # cancelled (or a bug): the person's words are kept all the same
            await self._keep(msg, owner, text, None)
            raise
        await self._keep(msg, owner, text, answer.kept)
        if answer.promise is not None:
            await self._keep_promise(owner, answer.promise)
        return answer.shown

    async def _reply(
        self,
        msg: InboundMessage,
        owner: str,
        text: str,
        turn: MediaTurn | None,
        history: list[tuple[str, str]],
        started: float,
    ) -> _Answer:
        """What to show for the message, and what of it to keep beside the person's words."""
        stand_in = getattr(self.chat_model, "stand_in", False)
        if stand_in and self.media is not None and turn is None and asks_for_a_file(text):
            return _Answer(self._with_hint(msg, await offline_send_back(self.media.sender, owner, msg, text)))
        if turn is not None and (stand_in or not turn.understood) and not msg.text.strip():
            return _Answer("\n\n".join(turn.notices))  # only kept (or failed): nothing for the model
        memories = await self._recall(owner, text)
        request = ChatRequest(
            system=await self._system_prompt(owner),
            history=history,
            user_text=text,
            memories=memories,
            memory_block=memory_block(memories),
            tools=self._tools(owner, text, msg, turn.attachment_ids if turn else []),
            images=turn.images if turn else [],
            documents="\n\n".join(turn.documents) if turn else "",
            # The loop streams the reply (gateway/streaming.py), after the notices it will open with.
            on_text=reply_sink("".join(f"{notice}\n\n" for notice in turn.notices) if turn else ""),
        )
        self.memory_timing.add((time.perf_counter() - started) * 1000.0)

        try:
            reply = (await self.chat_model.reply(request)).strip()
        except Exception as exc:  # ModelError, or anything unexpected from a model: apologise, keep going
            log.error("[gateway] model %s failed for %s: %s", self.chat_model.label, msg.chat_key, exc)
            return _Answer(_apology(text, getattr(exc, "kind", "")))
        if not reply:
            log.error("[gateway] model %s gave an empty reply for %s", self.chat_model.label, msg.chat_key)
            return _Answer(_apology(text, ""))

        if stand_in:  # the offline stand-in: shown, never history or memory
            shown = self._with_hint(msg, "\n\n".join([*(turn.notices if turn else []), reply]))
            return _Answer(shown, promise=reply)
        return _Answer("\n\n".join([*turn.notices, reply]) if turn and turn.notices else reply, kept=reply)

    async def _keep(self, msg: InboundMessage, owner: str, text: str, reply: str | None) -> None:
        """The exchange — the person's words, and the reply when there is one to keep — written at once
        after the model answered, to the session, the conversation tier and the extraction buffer
        (memory/exchange.py); until then the unanswered inbox row is the message's record."""
        said = [Said("user", text)] + ([Said("assistant", reply)] if reply else [])
        await self._exchange.keep(
            owner, channel=msg.channel, chat_id=msg.chat_id, sender_id=msg.sender_id, said=said
        )

    def _tools(self, owner: str, text: str, msg: InboundMessage, received: list[int]) -> ToolBox | None:
        """The tools of this message: the memory tools (bound to its owner) with the attachment tools when
        media is on, and beside them the reminder tools, bound to the message's chat. A model without tool
        support (the offline stand-in) gets the reminder tools alone (gateway/reminders/tools.py)."""
        stand_in = bool(getattr(self.chat_model, "stand_in", False))
        memory: ToolBox | None = None
        if self.settings.tools.enabled and self.extraction is not None and not stand_in:
            tools = MemoryTools(self.engine, owner, text, self.settings.tools)
            memory = tools
            if self.media is not None:
                attachment_tools = AttachmentTools(
                    self.engine.attachments, self.media.sender, owner, msg, received
                )
                memory = WithAttachments(tools, attachment_tools)
        return message_tools(
            memory,
            self.reminders,
            owner,
            msg.channel,
            msg.chat_id,
            stand_in=stand_in,
            enabled=self.settings.tools.enabled,
        )

    async def _speaks_chinese(self, msg: InboundMessage) -> bool:
        """The person's language for a message that may have no words: its caption, else their latest
        messages in the chat."""
        if msg.text.strip():
            return is_chinese(msg.text)
        history = await self.sessions.history(msg.chat_key, 6)
        return speaks_chinese(content for role, content in history if role == "user")

    async def _keep_promise(self, owner: str, reply: str) -> None:
        """The offline stand-in's ``reply`` said "I'll remember: …" and its memory model is the offline
        one: extract the owner's buffer now, so the next message recalls it (issue 37) — within
        ``flush_wait``, as ``/memory`` does; what is not done by then goes on in the background."""
        if self.extraction is None or not getattr(self.chat_model, "remembers_at_once", False):
            return
        if promised(reply):
            await self._exchange.write_kept_back()  # the words must be in the buffer it extracts
            await self.extraction.flush_now(owner, self.settings.flush_wait)

    def _too_long(self, msg: InboundMessage, text: str) -> str | None:
        """The refusal for a message longer than one extraction batch, or None when it fits."""
        budget = self.settings.max_message_tokens
        tokens = estimate_tokens(text)
        if budget is None or tokens <= budget:
            return None
        log.info(
            "[gateway] refused a message of %d characters in %s: too long to keep", len(text), msg.chat_key
        )
        return (TOO_LONG_REPLY_ZH if is_chinese(text) else TOO_LONG_REPLY).format(
            tokens=tokens, budget=budget
        )

    def _with_hint(self, msg: InboundMessage, reply: str) -> str:
        """The offline stand-in's reply, with how to get real answers the first time in a chat."""
        if msg.channel in NOTICE_AT_START_CHANNELS or msg.chat_key in self._hinted:
            return reply
        self._hinted.add(msg.chat_key)
        return f"{reply}\n\n{self.settings.hint(msg.text)}"

    async def _attachment(self, msg: InboundMessage, owner: str, caption: str) -> str:
        """A photo, voice note or file: say only text is understood; keep the caption like any words."""
        chinese = is_chinese(caption)
        kind = _ATTACHMENT_ZH.get(msg.attachment, msg.attachment) if chinese else msg.attachment
        reply = (TEXT_ONLY_REPLY_ZH if chinese else TEXT_ONLY_REPLY).format(kind=kind)
        if caption:
            reply += CAPTION_NOTED_ZH if chinese else CAPTION_NOTED
            await self._keep(msg, owner, caption, None)
        return reply

    async def _recall(self, owner: str, text: str) -> list[Retrieved]:
        """Tier 2 memories for the message when the gate fires; a failing store never blocks the reply."""
        if self.extraction is None:
            return []
        try:
            if asks_about_themselves(text):
                return await self._overview(owner)
            projects = await self.engine.known_projects(owner)
            personal = await self._wants_memory(text, projects)
            if personal is None:
                return await self._rescue(owner, text, projects)
            k = memories_wanted(text, self.settings.top_k)  # more for "how many…", "哪些…"
            # A question about the person's own life finds its statement in other words and keeps a
            # memory that stands out; other messages the gate lets through (chatter, narrative) only get
            # memories that share their words or are close in meaning (issue 26, bench/README.md), and
            # stand ``otherLift`` above the query's candidates (``RelevanceFloor.for_message``).
            floor = self.settings.floor.for_message(bool(personal))
            hits = await self.engine.retrieve(owner, text, k=k, floor=floor, related=personal, later=True)
            return budget_memories(hits)
        except Exception as exc:
            log.error("[memory] retrieve failed for owner=%s: %s", owner, exc)
            return []

    async def _rescue(self, owner: str, text: str, projects: frozenset[str]) -> list[Retrieved]:
        """A message the head refused that names one of the person's people (``memory/text/names.py``) gets
        what a question about their own life gets, when a memory names them too (round 44); any other still
        gets the one memory that stands far out from the rest (``RelevanceFloor.rescues``, issue 35). What a
        rule refuses (a greeting, thanks, a command) never does, and without the shipped head nothing is
        rescued."""
        if not head_usable(self.engine.embedder) or not should_retrieve(text, projects, learned=True):
            return []
        names = person_names(text)
        if names:  # someone of the person's asked after by name (memory/text/names.py)
            k = memories_wanted(text, self.settings.top_k)
            named = await self.engine.recall_named(owner, text, names, k=k, floor=self.settings.floor)
            if named:
                return budget_memories(named)
        return await self.engine.rescue(owner, text, self.settings.floor)

    async def _wants_memory(self, text: str, projects: frozenset[str]) -> bool | None:
        """None when the message needs no memory, else whether it asks about the person's own life.

        The gate's rules refuse what a rule can know; then memory is looked for when the learned head
        reads the query vector as asking or telling about the person's own life (issue 35) or the short
        keyword rules say so (a first-person question, a recalled past, a known project); without the
        shipped embedder the keyword rules alone decide (``memory/retrieval/gate.py``)."""
        learned = head_usable(self.engine.embedder)
        if not should_retrieve(text, projects, learned=learned):
            return None
        verdict = await gate_verdict(self.engine.embedding, text) if learned else None
        if verdict is None:  # the keyword rules alone (already asked above when there is no head)
            if learned and not should_retrieve(text, projects):
                return None
            return personal_question(text) or topic_question(text)
        keyword = should_retrieve(text, projects, topics=False)
        # The head judges questions (mark or not: ``Verdict.asks``); telling is the rules'.
        if not (keyword or (verdict.wants and verdict.asks)):
            return None
        return (verdict.asks_own and not to_listener(text)) or personal_question(text)

    async def _overview(self, owner: str) -> list[Retrieved]:
        """The owner's most important memories (decay score), for a question about themselves."""
        top = await self.engine.top_memories(owner, OVERVIEW_MEMORIES)
        return [Retrieved.from_memory(m, score=float(len(top) - rank)) for rank, m in enumerate(top)]

    async def _system_prompt(self, owner: str) -> str:
        workspace = self._workspace.parts()
        if self.extraction is None:
            file_context = self.file_memory.context() if self.file_memory else ""
            return build_system_prompt(workspace, file_memory=file_context)
        try:
            profile = await self.engine.profile_text(owner)
            scratchpad = (await self.engine.scratchpad.get(owner)).content
        except Exception as exc:
            log.error("[memory] profile failed for owner=%s: %s", owner, exc)
            profile = scratchpad = ""
        return build_system_prompt(workspace, profile=profile, scratchpad=scratchpad)
