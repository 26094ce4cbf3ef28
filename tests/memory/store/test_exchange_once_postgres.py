"""The exchange is written once even when the answered step's commit goes through and its answer never
reaches the gateway (issue 38, item 1; ``chat_holds.answered_then_next``): a real PostgreSQL behind a
small TCP proxy that, once armed, lets the answered step's statement through, waits for the server's
whole answer — the commit done (ReadyForQuery after the statement's rows) — and closes the client's
side instead of passing it on. The worker (gateway/loop.py ``_retrying``) tries the step again on a new
connection; the store must then write nothing twice and report the mark made."""

from __future__ import annotations

import asyncio
import contextlib
import struct
from collections.abc import AsyncIterator
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

from memory.store.claim_rows import ClaimedRow, parse_history
from memory.store.exchange import Exchange, ExchangeTurn
from memory.store.open import open_store
from memory.store.protocol import MemoryStore
from memory.text import tokenizer


class DroppingProxy:
    """127.0.0.1 → the server, byte for byte, except the one answer it is armed to lose."""

    def __init__(self, host: str, port: int) -> None:
        self._target = (host, port)
        self._marker: bytes | None = None
        self.dropped = asyncio.Event()
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()  # the byte pumps
        self._serving: set[asyncio.Task[object]] = set()  # a connection handler each
        self.port = 0

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        """Stop taking connections; the open ones end as their clients close them (a ceiling, then cut)."""
        if self._server is not None:
            self._server.close()
        serving = set(self._serving)
        if serving:
            _, cut = await asyncio.wait(serving, timeout=30)
            for task in self._tasks:
                task.cancel()  # their connection handlers then end on their own
            if cut:
                await asyncio.wait(cut, timeout=30)

    def arm(self, marker: bytes) -> None:
        """Lose the server's answer to the next request (on any connection) whose bytes hold ``marker``,
        once that answer is complete and carries a command's result; close that client connection."""
        self._marker = marker

    async def _serve(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        me = asyncio.current_task()
        if me is not None:
            self._serving.add(me)
            me.add_done_callback(self._serving.discard)
        server_r, server_w = await asyncio.open_connection(*self._target)
        armed = asyncio.Event()
        up = asyncio.create_task(self._client_to_server(client_r, server_w, armed))
        down = asyncio.create_task(self._server_to_client(server_r, client_w, armed))
        self._tasks |= {up, down}
        try:
            await asyncio.wait({up, down}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (up, down):
                task.cancel()
            for writer in (client_w, server_w):
                writer.close()
                with contextlib.suppress(Exception):
                    await writer.wait_closed()
            self._tasks -= {up, down}

    async def _client_to_server(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, armed: asyncio.Event
    ) -> None:
        seen = b""
        while data := await reader.read(65536):
            seen = (seen + data)[-65536:]
            if self._marker is not None and self._marker in seen:
                self._marker = None
                armed.set()
            writer.write(data)
            await writer.drain()

    async def _server_to_client(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, armed: asyncio.Event
    ) -> None:
        """Whole protocol messages (type byte, int32 length); while armed, each answer is held until its
        ReadyForQuery: one that carried a command's result (``C``) is lost, the client's side closed."""
        held: list[bytes] = []
        result = False
        while True:
            head = await reader.readexactly(5)
            kind, length = head[:1], struct.unpack("!i", head[1:])[0]
            message = head + await reader.readexactly(length - 4)
            if not armed.is_set():
                writer.write(message)
                await writer.drain()
                continue
            held.append(message)
            result = result or kind == b"C"
            if kind != b"Z":
                continue
            if result:
                self.dropped.set()
                return  # the server committed; the client hears nothing and its connection ends
            for part in held:  # an answer without a result (a statement's preparation): passed on
                writer.write(part)
            await writer.drain()
            held = []


@pytest.fixture
async def proxy(postgres_url: str) -> AsyncIterator[tuple[DroppingProxy, str]]:
    """The proxy in front of the test's database, and the URL through it (no TLS, no GSS: plain
    protocol messages from the first byte)."""
    parts = urlsplit(postgres_url)
    assert parts.hostname is not None and parts.port is not None
    running = DroppingProxy(parts.hostname, parts.port)
    await running.start()
    netloc = f"{parts.username}@127.0.0.1:{running.port}"
    url = urlunsplit(parts._replace(netloc=netloc, query="sslmode=disable&gssencmode=disable"))
    try:
        yield running, url
    finally:
        await running.close()


def _exchange(*said: tuple[str, str]) -> Exchange:
    return Exchange(
        owner="hana",
        channel="telegram",
        chat_id="42",
        chat_key="telegram:42",
        session=1,
        created_at="2026-01-02 03:04:05",
        turns=[
            ExchangeTurn(role, text, "7" if role == "user" else "", tokenizer.index_text(text), 5)
            for role, text in said
        ],
    )


async def _counts(store: MemoryStore) -> tuple[int, int, int]:
    """Conversation turns, buffered turns, Tier 0 messages of the chat."""
    buffered = await store.buffer.oldest("hana", due_only=False)
    session = await store.sessions.recent("telegram:42", 1, 100)
    return await store.turns.count("hana"), len(buffered), len(session)


async def test_an_answered_step_whose_answer_is_lost_after_its_commit_writes_the_exchange_once(
    proxy: tuple[DroppingProxy, str],
) -> None:
    dropping, url = proxy
    store = await open_store(url, warm_text=False)
    try:
        one, _, claim = await store.inbox.add_hold_and_claim("telegram", "42", "u1", "hi", 1, "", "r1", 60.0)
        two = await store.inbox.add("telegram", "42", "u2", "and you?", 2)
        assert one is not None and two is not None and isinstance(claim, ClaimedRow)
        budget = {"token_budget": 1000, "quiet_gap_s": 3600.0}
        prepared = store.exchange.prepare(_exchange(("user", "hi"), ("assistant", "hello")), **budget)
        step = (one, "telegram", "42", "r1", 1)
        dropping.arm(b"nxt AS (SELECT")  # the answered step's statement
        with pytest.raises(psycopg.OperationalError):  # the connection ends; the commit went through
            await store.chat_holds.answered_then_next(*step, history=5, exchange=prepared)
        assert dropping.dropped.is_set()
        assert await _counts(store) == (2, 2, 2)  # written by the lost step
        # The worker tries the step again (a new connection from the pool).
        again = await store.chat_holds.answered_then_next(*step, history=5, exchange=prepared)
        assert again.marked and not again.wrote
        assert await _counts(store) == (2, 2, 2)  # one exchange, not two
        nxt = again.next
        assert isinstance(nxt, ClaimedRow) and nxt.id == two and nxt.sent_by is None
        assert parse_history(nxt.history, nxt.written) == [("assistant", "hello"), ("user", "hi")]
        assert await store.inbox.in_flight("r1") == 1  # "and you?" alone
    finally:
        await store.close()
