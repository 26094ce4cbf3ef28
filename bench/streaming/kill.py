"""The crash of ``bench.streaming``: kill -9 the gateway while replies are being written, start it again.

``chats`` private Telegram chats, as many groups and as many Feishu chats each send one message at once; a
second after every group reply and every Feishu card became visible (half-written: the model needs
seconds more), the gateway gets SIGKILL, and a new one starts on the same database. ``lost``: messages
whose whole reply never came; ``answered_twice``: messages answered by a second platform message (a second
``sendMessage`` or Feishu message replying to them) instead of the half-written one being completed.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from bench.streaming.load import REPLY_TIMEOUT_S, Gateway, Model, Platforms, feishu_message, telegram_message
from bench.streaming.watch import Reply

VISIBLE_WAIT_S = 60.0
MID_STREAM_S = 1.0


async def kill_trial(platforms: Platforms, model: Model, workdir: Path, chats: int) -> dict[str, Any]:
    """Run the crash (see the module doc); its counts."""
    gateway = Gateway(platforms, model, workdir)
    await gateway.start(platforms)
    replies: list[Reply] = []
    try:
        for n in range(chats):
            question = f"Before the crash: what is the plan for trip {n}?"
            replies.append(
                telegram_message(platforms, "telegram_private", 7000 + n, question, model.reply_tokens)
            )
            replies.append(
                telegram_message(platforms, "telegram_group", 8000 + n, question, model.reply_tokens)
            )
            replies.append(await feishu_message(platforms, gateway, 9000 + n, question, model.reply_tokens))
        deadline = time.monotonic() + VISIBLE_WAIT_S
        while not all(r.first_at for r in replies if r.surface != "telegram_private"):
            if time.monotonic() > deadline:
                break
            await asyncio.sleep(0.02)
        await asyncio.sleep(MID_STREAM_S)  # well into the replies, not the instant the last one showed
        gateway.kill()
        in_flight = sum(not r.done.is_set() for r in replies)
        await gateway.start(platforms)
        try:
            async with asyncio.timeout(REPLY_TIMEOUT_S):
                await asyncio.gather(*(r.done.wait() for r in replies))
        except TimeoutError:
            pass
        errors = gateway.errors()
    finally:
        gateway.stop()
    sends = {**platforms.telegram.sends, **platforms.lark.sends}
    twice = [r for r in replies if sends.get(r.incoming, 0) > 1]
    return {
        "messages": len(replies),
        "in_flight_at_kill": in_flight,
        "lost": sum(not r.done.is_set() for r in replies),
        "answered_twice": len(twice),
        "answered_twice_by_surface": {
            s: sum(r.surface == s for r in twice) for s in {r.surface for r in twice}
        },
        "errors": errors,
    }
