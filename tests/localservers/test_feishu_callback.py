"""localservers/feishu_callback.py: Feishu's callback side posts an event again until it is answered 2xx,
against the real Feishu channel in callback mode (which answers 500 when it could not store an event)."""

from __future__ import annotations

from pathlib import Path

import pytest

from channels.base import InboundMessage
from channels.feishu.channel import FeishuChannel
from localservers.feishu_callback import CallbackGaveUp, CallbackSender
from localservers.feishu_server import FeishuStub, message_event
from tests.support.feishu_channel import ENCRYPT_KEY, TOKEN, callback_url, make_settings


class FlakyInbox:
    """Fails to store the first ``failures`` deliveries (the database away), then stores."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.stored: list[InboundMessage] = []

    async def deliver(self, message: InboundMessage) -> None:
        if self.failures:
            self.failures -= 1
            raise OSError("database away")
        self.stored.append(message)


async def test_an_event_not_stored_is_posted_again_until_it_is(tmp_path: Path) -> None:
    with FeishuStub() as feishu:
        channel, inbox = FeishuChannel(make_settings(tmp_path, feishu)), FlakyInbox(failures=2)
        await channel.start(inbox.deliver)
        sender = CallbackSender(callback_url(channel), encrypt_key=ENCRYPT_KEY, retry_after=0.01)
        try:
            attempts = await sender.deliver(message_event("hello", message_id="om_once", token=TOKEN))
        finally:
            await sender.close()
            await channel.stop()
    assert attempts == 3 and sender.failed_attempts == 2
    assert [m.text for m in inbox.stored] == ["hello"]


async def test_a_callback_that_never_answers_2xx_gives_up_with_the_event_id() -> None:
    # A refused connection fails at once: within 2 s it is tried again many times, even on a busy machine.
    sender = CallbackSender("http://127.0.0.1:9/none", encrypt_key="k", retry_after=0.01, give_up_after=2.0)
    try:
        with pytest.raises(CallbackGaveUp, match="event ev_1 had no 2xx answer"):
            await sender.deliver(message_event("x", event_id="ev_1"))
    finally:
        await sender.close()
    assert sender.failed_attempts >= 2
