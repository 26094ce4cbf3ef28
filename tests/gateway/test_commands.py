"""Chat commands through the Assistant: /help, /memory, /remember, /forget, unknown commands."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from channels.base import InboundMessage
from gateway.agent import ChatRequest
from gateway.assistant import CAPTION_NOTED, TEXT_ONLY_REPLY, Assistant, AssistantSettings
from gateway.commands import HELP_TEXT, PRIVATE_ONLY_REPLY
from gateway.identity import Identities
from memory.engine import MemoryEngine
from memory.files.file_memory import FileMemory
from memory.model.offline_model import OfflineMemoryModel
from memory.pipeline.buffer import ExtractionBuffer
from memory.pipeline.extraction import ExtractionService, ExtractionSettings
from memory.records import Fact
from memory.sessions import SessionStore


class EchoModel:
    """A ChatModel that records requests (our protocol, not a client library)."""

    label = "echo"

    def __init__(self) -> None:
        self.requests: list[ChatRequest] = []

    async def reply(self, request: ChatRequest) -> str:
        self.requests.append(request)
        return "ok"


@pytest.fixture
async def assistant(engine: MemoryEngine, tmp_path: Path) -> AsyncIterator[Assistant]:
    extraction = ExtractionService(
        engine,
        ExtractionBuffer(engine.store.buffer),
        OfflineMemoryModel(),
        ExtractionSettings(quiet_gap=3600),
    )
    bot = Assistant(
        engine=engine,
        sessions=SessionStore(engine.store.sessions),
        chat_model=EchoModel(),
        settings=AssistantSettings(workspace=tmp_path),
        identities=Identities({"alice": ["telegram:1", "feishu:ou_a"]}),
        extraction=extraction,
    )
    try:
        yield bot
    finally:
        await extraction.close()


def _msg(text: str, sender: str = "1", channel: str = "telegram") -> InboundMessage:
    return InboundMessage(channel=channel, chat_id=sender, sender_id=sender, text=text)


async def test_help_and_unknown_commands(assistant: Assistant) -> None:
    assert await assistant.handle(_msg("/help")) == HELP_TEXT
    unknown = await assistant.handle(_msg("/frobnicate now"))
    assert unknown is not None and unknown.startswith("Unknown command /frobnicate")
    assert assistant.chat_model.requests == []  # commands never reach the model
    assert (await assistant.engine.stats())["buffered_turns"] == 0  # nor extraction


async def test_remember_then_memory_lists_it_numbered(assistant: Assistant) -> None:
    reply = await assistant.handle(_msg("/remember I prefer answers in Chinese"))
    assert reply is not None and reply.startswith("Remembered [")
    memory_id = int(reply.split("[", 1)[1].split("]", 1)[0])
    mem = await assistant.engine.get("user:alice", memory_id)  # mapped identity -> one owner
    assert mem is not None and mem.source == "manual"
    listing = await assistant.handle(_msg("/memory", sender="ou_a", channel="feishu"))  # same person
    assert listing is not None and f"[{memory_id}] I prefer answers in Chinese" in listing
    again = await assistant.handle(_msg("/remember I prefer answers in Chinese"))
    assert again == f"I already knew that [{memory_id}]."


async def test_memory_shows_profile_first_and_empty_state(assistant: Assistant) -> None:
    assert "don't remember anything" in (await assistant.handle(_msg("/memory")) or "")
    await assistant.engine.write("user:alice", Fact(content="Alice is a backend engineer", tier=1))
    await assistant.engine.write("user:alice", Fact(content="Deploys run on Fridays", project="infra"))
    listing = await assistant.handle(_msg("/memory")) or ""
    assert listing.index("Alice is a backend engineer") < listing.index("Deploys run on Fridays")
    assert "(project infra)" in listing


async def test_forget_by_number_and_by_text(assistant: Assistant) -> None:
    first = await assistant.engine.write("user:alice", Fact(content="My locker code is 4512"))
    second = await assistant.engine.write("user:alice", Fact(content="I am learning the cello"))
    reply = await assistant.handle(_msg(f"/forget {first.id}"))
    assert reply == f"Forgot [{first.id}]: My locker code is 4512"
    assert (await assistant.engine.get("user:alice", first.id)).is_archived
    assert "no memory number" in (await assistant.handle(_msg(f"/forget {first.id}")) or "")
    reply = await assistant.handle(_msg("/forget learning the cello"))
    assert reply == f"Forgot [{second.id}]: I am learning the cello"
    assert "Nothing I remember matches" in (
        await assistant.handle(_msg("/forget quantum chromodynamics")) or ""
    )


async def test_forget_cannot_touch_another_owners_memory(assistant: Assistant) -> None:
    bobs = await assistant.engine.write("telegram:2", Fact(content="Bob's secret plan"))
    reply = await assistant.handle(_msg(f"/forget {bobs.id}"))  # alice asks
    assert reply is not None and "no memory number" in reply
    assert not (await assistant.engine.get("telegram:2", bobs.id)).is_archived


async def test_remember_and_memory_with_file_memory(engine: MemoryEngine, tmp_path: Path) -> None:
    files = FileMemory(tmp_path)
    bot = Assistant(
        engine=engine,
        sessions=SessionStore(engine.store.sessions),
        chat_model=EchoModel(),
        settings=AssistantSettings(workspace=tmp_path),
        file_memory=files,
    )
    assert (await bot.handle(_msg("/remember 我喜欢喝乌龙茶"))).startswith("已写入 MEMORY.md")
    assert "我喜欢喝乌龙茶" in files.read_long_term()
    assert "我喜欢喝乌龙茶" in (await bot.handle(_msg("/memory")) or "")
    await bot.handle(_msg("what tea do I like?"))
    assert "我喜欢喝乌龙茶" in bot.chat_model.requests[-1].system  # file memory feeds the prompt


async def test_prompt_has_workspace_profile_and_delimited_memories(
    assistant: Assistant, tmp_path: Path
) -> None:
    (tmp_path / "AGENTS.md").write_text("Be brief.", encoding="utf-8")
    (tmp_path / "SOUL.md").write_text("Warm and curious.", encoding="utf-8")
    await assistant.engine.write("user:alice", Fact(content="Alice lives in Lisbon", tier=1))
    await assistant.engine.write(
        "user:alice", Fact(content="The tierclaw deploy uses Docker", project="tierclaw")
    )
    await assistant.handle(_msg("how do I deploy tierclaw again?"))
    request = assistant.chat_model.requests[-1]
    assert request.system.index("Be brief.") < request.system.index("Warm and curious.")
    assert "Alice lives in Lisbon" in request.system and "long-term memory" in request.system
    assert request.memory_block.startswith("<memory>") and request.memory_block.endswith("</memory>")
    assert "The tierclaw deploy uses Docker" in request.memory_block
    assert request.user_text == "how do I deploy tierclaw again?"  # the user's words stay separate
    assert "Docker" not in request.user_text
    await assistant.handle(_msg("ok"))  # the gate skips acknowledgements
    assert assistant.chat_model.requests[-1].memories == []


async def test_attachment_gets_the_text_only_reply_and_its_caption_is_recorded(assistant: Assistant) -> None:
    photo = InboundMessage(
        channel="telegram", chat_id="1", sender_id="1", text="my cat Miso", attachment="photo"
    )
    reply = await assistant.handle(photo)
    assert reply == TEXT_ONLY_REPLY.format(kind="photo") + CAPTION_NOTED
    assert assistant.chat_model.requests == []  # the model is not asked about a picture it cannot see
    pending = await ExtractionBuffer(assistant.engine.store.buffer).batch("user:alice", 10_000)
    assert [turn.content for turn in pending] == ["my cat Miso"]
    assert await assistant.sessions.history("telegram:1", 10) == [("user", "my cat Miso")]

    voice = InboundMessage(channel="telegram", chat_id="1", sender_id="1", text="", attachment="voice")
    assert await assistant.handle(voice) == TEXT_ONLY_REPLY.format(kind="voice")
    assert len(await ExtractionBuffer(assistant.engine.store.buffer).batch("user:alice", 10_000)) == 1


async def test_memory_and_forget_are_refused_in_groups(assistant: Assistant) -> None:
    await assistant.handle(_msg("/remember my PIN hint is the dog's birthday"))
    group = InboundMessage(
        channel="telegram", chat_id="-100", sender_id="1", text="/memory", is_group=True, mentions_bot=True
    )
    reply = await assistant.handle(group)
    assert reply == PRIVATE_ONLY_REPLY.format(name="memory") and "PIN" not in reply
    forget = InboundMessage(
        channel="telegram", chat_id="-100", sender_id="1", text="/forget PIN", is_group=True
    )
    assert await assistant.handle(forget) == PRIVATE_ONLY_REPLY.format(name="forget")
    assert len(await assistant.engine.list("user:alice")) == 1  # nothing forgotten
    assert "PIN" in await assistant.handle(_msg("/memory"))  # a private chat still shows it


@pytest.mark.parametrize(
    ("command", "answer"),
    [
        ("/forget 99999999999999999999999", "You have no memory number 99999999999999999999999."),
        ("/forget 9223372036854775808", "You have no memory number 9223372036854775808."),
        ("/forget ²", "Nothing I remember matches “²”."),
        ("/forget ٣", "Nothing I remember matches “٣”."),
        ("/forget #", "Nothing I remember matches “#”."),
        ("/forget", "Usage: /forget N"),
        ("/remember", "Usage: /remember TEXT"),
        ("/remember " + "x" * 20_001, "I could not remember that:"),
        ("/memory@", "About you:"),
        ("/forget\x00", "Usage: /forget N"),
    ],
)
async def test_bad_command_arguments_get_an_answer_not_a_crash(
    assistant: Assistant, command: str, answer: str
) -> None:
    await assistant.handle(_msg("/remember I prefer tea"))
    await assistant.engine.write("user:alice", Fact(content="My name is Alice", tier=1, category="identity"))
    reply = await assistant.handle(_msg(command))
    assert reply is not None and reply.startswith(answer), reply


async def test_status_says_which_model_and_how_much_is_remembered(assistant: Assistant) -> None:
    await assistant.handle(_msg("/remember I keep bees"))
    await assistant.handle(_msg("I water the garden at dawn"))
    reply = await assistant.handle(_msg("/status"))
    assert reply is not None
    assert reply.splitlines()[0] == "Model: echo"
    assert "0 profile facts and 1 memory about you" in reply
    assert "2 messages waiting to be saved" in reply  # the message and its reply


async def test_the_offline_hint_comes_once_per_chat_and_never_in_the_terminal(
    engine: MemoryEngine, tmp_path: Path
) -> None:
    from gateway.offline_chat import OFFLINE_HINT, OfflineChatModel

    notice = "No API key configured (the full notice)."
    extraction = ExtractionService(
        engine,
        ExtractionBuffer(engine.store.buffer),
        OfflineMemoryModel(),
        ExtractionSettings(quiet_gap=3600),
    )
    bot = Assistant(
        engine=engine,
        sessions=SessionStore(engine.store.sessions),
        chat_model=OfflineChatModel(),
        settings=AssistantSettings(workspace=tmp_path, notice=notice),
        extraction=extraction,
    )
    try:
        first = await bot.handle(_msg("I live in Lyon"))
        second = await bot.handle(_msg("I have a cat"))
        other_chat = await bot.handle(_msg("I have a dog", sender="2"))
        terminal = await bot.handle(_msg("I like tea", channel="console"))
        status = await bot.handle(_msg("/status"))
    finally:
        await extraction.close()
    assert first is not None and first.endswith("\n\n" + OFFLINE_HINT)
    assert second is not None and OFFLINE_HINT not in second
    assert other_chat is not None and other_chat.endswith(OFFLINE_HINT)
    assert terminal is not None and OFFLINE_HINT not in terminal
    assert status is not None and "Model: offline (no API key)" in status and notice in status
