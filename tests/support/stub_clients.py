"""Clients of the real ``openai`` SDK pointed at the local model server (``localservers/openai_server.py``).

Every client made here is closed by ``close_clients`` on the test's own loop (a module that makes clients
calls it from an autouse fixture): one left to the garbage collector closes itself later, on a loop that is
gone, and asyncio logs that as an error in some other test.
"""

from __future__ import annotations

import openai

from localservers.openai_server import OpenAIStub

_open: list[openai.AsyncOpenAI] = []


def client_for(stub: OpenAIStub, *, api_key: str = "sk-test", **options: object) -> openai.AsyncOpenAI:
    """A client of ``stub`` (no retries; a 30 s timeout, a ceiling for a loaded machine, unless ``options``
    say otherwise: a test of the timeout itself passes its own)."""
    settings = {"max_retries": 0, "timeout": 30.0} | options
    client = openai.AsyncOpenAI(base_url=stub.base_url, api_key=api_key, **settings)
    _open.append(client)
    return client


async def close_clients() -> None:
    """Close every client made since the last call."""
    while _open:
        await _open.pop().close()
