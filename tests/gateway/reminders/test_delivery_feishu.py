"""Reminders through the real gateway and lark-oapi against the local Feishu server (websocket mode): a
reminder asked for in a Feishu message is posted into its chat when due, once; a chat the bot was removed
from (code 230002) is marked failed, not retried (README "Reminders")."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.app import Runtime
from gateway.cli.run import enabled_channels
from localservers.feishu_server import FeishuStub, message_event
from tests.gateway.reminders.support import config, until_status
from tests.gateway.reminders.support import feishu as feishu_section

OWNER = "feishu:ou_alice"


def reminders_sent(stub: FeishuStub) -> list[tuple[str, str]]:
    return [(s.target, s.text) for s in stub.sent if "⏰" in s.text]


@pytest.mark.both_stores
async def test_a_chinese_request_is_posted_into_its_chat_once(
    tmp_path: Path, memory_url: str, feishu: FeishuStub
) -> None:
    runtime = await Runtime.open(
        cfg := config(tmp_path, memory_url, feishu_section(feishu)), enabled_channels(cfg)
    )
    try:
        await runtime.start(schedule=False)
        await feishu.push_event(message_event("提醒我2秒后伸个懒腰", sender="ou_alice", chat_id="oc_chat_1"))
        await feishu.wait_for(lambda s: any("提醒你" in x.text for x in s.sent), 60)
        assert any("好的" in x.text and "伸个懒腰" in x.text for x in feishu.sent)
        assert await feishu.wait_for(lambda s: bool(reminders_sent(s)), 30)
        (row,) = await runtime.engine.store.reminders.of_owner(OWNER)
        await until_status(runtime.engine, OWNER, row.id, "delivered")
        assert reminders_sent(feishu) == [("oc_chat_1", "⏰ 提醒：伸个懒腰")]
    finally:
        await runtime.close()


async def test_a_chat_the_bot_left_is_marked_failed(tmp_path: Path, feishu: FeishuStub) -> None:
    feishu.chat_refusals.bot_removed("oc_gone")
    runtime = await Runtime.open(cfg := config(tmp_path, "", feishu_section(feishu)), enabled_channels(cfg))
    try:
        await runtime.start(schedule=False)
        book = runtime.assistant.reminders
        assert book is not None
        made = await book.create(OWNER, "feishu", "oc_gone", said="remind me in 1 second to call Li")
        row = await until_status(runtime.engine, OWNER, made.id, "failed")  # type: ignore[union-attr]
        assert "230002" in (row.last_error or "")
        assert len([r for r in feishu.send_requests() if "oc_gone" in str(r.body)]) == 1
    finally:
        await runtime.close()
