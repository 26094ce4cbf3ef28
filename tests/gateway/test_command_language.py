"""Commands, notices and the offline hint answer a Chinese speaker in Chinese; /remember files everyday
facts where they do not fade (gateway/commands.py, gateway/command_words.py, gateway/assistant.py)."""

from __future__ import annotations

import string
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from channels.base import InboundMessage
from gateway.agent import ChatRequest
from gateway.assistant import Assistant, AssistantSettings
from gateway.command_words import EN, HELP_TEXT, HELP_TEXT_ZH, ZH
from gateway.offline_chat import OFFLINE_HINT, OFFLINE_HINT_ZH, OfflineChatModel
from memory.engine import MemoryEngine
from memory.model.offline_model import OfflineMemoryModel
from memory.pipeline.buffer import ExtractionBuffer
from memory.pipeline.extraction import ExtractionService, ExtractionSettings
from memory.sessions import SessionStore


class FailingModel:
    """A ChatModel whose every reply fails (our protocol, not a client library)."""

    label = "failing"

    async def reply(self, request: ChatRequest) -> str:
        raise RuntimeError("unreachable")


async def _assistant(
    engine: MemoryEngine, tmp_path: Path, model: object
) -> tuple[Assistant, ExtractionService]:
    extraction = ExtractionService(
        engine,
        ExtractionBuffer(engine.store.buffer),
        OfflineMemoryModel(),
        ExtractionSettings(quiet_gap=3600),
    )
    bot = Assistant(
        engine=engine,
        sessions=SessionStore(engine.store.sessions),
        chat_model=model,  # type: ignore[arg-type]
        settings=AssistantSettings(workspace=tmp_path, flush_wait=30.0),  # /memory extracts first (a ceiling)
        extraction=extraction,
    )
    return bot, extraction


@pytest.fixture
async def offline(engine: MemoryEngine, tmp_path: Path) -> AsyncIterator[Assistant]:
    bot, extraction = await _assistant(engine, tmp_path, OfflineChatModel())
    try:
        yield bot
    finally:
        await extraction.close()


def _msg(text: str, chat: str = "1") -> InboundMessage:
    return InboundMessage(channel="telegram", chat_id=chat, sender_id=chat, text=text)


def test_both_wording_tables_say_the_same_things() -> None:
    assert set(EN) == set(ZH)
    for key in EN:  # the same fields to fill in both languages
        assert sorted(_fields(EN[key])) == sorted(_fields(ZH[key])), key


def _fields(text: str) -> list[str]:
    return [name for _, name, _, _ in string.Formatter().parse(text) if name]


async def test_a_chinese_speaker_gets_chinese_commands(offline: Assistant) -> None:
    await offline.handle(_msg("你好，今天天气怎么样"))
    assert await offline.handle(_msg("/memory")) == ZH["nothing_yet"]
    assert await offline.handle(_msg("/help")) == HELP_TEXT_ZH
    assert (await offline.handle(_msg("/frobnicate")) or "").startswith("没有 /frobnicate 这个命令")


async def test_an_english_speaker_keeps_english_commands(offline: Assistant) -> None:
    await offline.handle(_msg("What's the weather like?", chat="2"))
    assert await offline.handle(_msg("/memory", chat="2")) == EN["nothing_yet"]
    assert await offline.handle(_msg("/help", chat="2")) == HELP_TEXT


async def test_remember_answers_in_the_language_of_its_text_and_files_by_the_category_guide(
    offline: Assistant,
) -> None:
    reply = await offline.handle(_msg("/remember 我女儿叫小雨"))
    assert reply is not None and reply.startswith("记住了 [") and reply.endswith("：我女儿叫小雨")
    reply = await offline.handle(_msg("/remember My dog is called Biscuit"))
    assert reply is not None and reply.startswith("Remembered [")
    reply = await offline.handle(_msg("/remember Shipped the beta"))
    categories = {m.content: m.category for m in await offline.engine.list("telegram:1")}
    assert categories == {
        "我女儿叫小雨": "event",  # issue 35: the people and pets around a person are events, not identity
        "My dog is called Biscuit": "event",
        "Shipped the beta": "event",
    }


async def test_the_offline_hint_is_in_the_language_of_the_first_message(offline: Assistant) -> None:
    chinese = await offline.handle(_msg("我住在杭州", chat="3"))
    english = await offline.handle(_msg("I live in Lyon", chat="4"))
    assert chinese is not None and chinese.endswith(OFFLINE_HINT_ZH) and OFFLINE_HINT not in chinese
    assert chinese.startswith("[离线模型] 记住了：我住在杭州")
    assert english is not None and english.endswith(OFFLINE_HINT)


async def test_the_apology_is_in_the_person_s_language(engine: MemoryEngine, tmp_path: Path) -> None:
    bot, extraction = await _assistant(engine, tmp_path, FailingModel())
    try:
        assert await bot.handle(_msg("我女儿几岁了")) == "抱歉，我暂时连不上语言模型，请稍后再试。"
        assert (await bot.handle(_msg("How old is my daughter?")) or "").startswith("Sorry")
    finally:
        await extraction.close()
