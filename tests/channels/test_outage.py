"""``channels/outage.py``: the plain reason of a connection failure, and one line per outage each way."""

from __future__ import annotations

import logging
import socket
import ssl

import httpx
import pytest
import requests

from channels.outage import Outage, plain_reason

REFUSED_BY_URLLIB3 = (
    "HTTPConnectionPool(host='127.0.0.1', port=40153): Max retries exceeded with url: /callback/ws/endpoint "
    "(Caused by NewConnectionError('<urllib3.connection.HTTPConnection object at 0x7f>: Failed to "
    "establish a new connection: [Errno 111] Connection refused'))"
)


@pytest.mark.parametrize(
    ("exc", "reason"),
    [
        (requests.exceptions.ConnectionError(REFUSED_BY_URLLIB3), "connection refused"),
        (httpx.ConnectError("[Errno 111] Connection refused"), "connection refused"),
        (socket.gaierror(-2, "Name or service not known"), "DNS lookup failed"),
        (ssl.SSLCertVerificationError("certificate verify failed"), "TLS handshake failed"),
        (RuntimeError("the Bot API answered 401 Unauthorized"), "credentials refused (401)"),
        # a port that contains 401 is not a refused credential
        (
            requests.exceptions.ReadTimeout("HTTPConnectionPool(port=40153): Read timed out."),
            "no answer (timed out)",
        ),
        (httpx.RemoteProtocolError("Server disconnected without sending a response."), "connection lost"),
        (ValueError("something else\nsecond line"), "ValueError: something else"),
    ],
)
def test_plain_reason(exc: BaseException, reason: str) -> None:
    assert plain_reason(exc) == reason


def test_the_cause_chain_is_read_too() -> None:
    try:
        try:
            raise ConnectionRefusedError(111, "Connection refused")
        except OSError as inner:
            raise RuntimeError("could not poll") from inner
    except RuntimeError as outer:
        assert plain_reason(outer) == "connection refused"


def test_one_line_going_one_back_none_per_retry(caplog: pytest.LogCaptureFixture) -> None:
    now = [100.0]
    outage = Outage("telegram", "the Bot API", logging.getLogger("tierclaw.channels"), clock=lambda: now[0])
    with caplog.at_level(logging.WARNING, logger="tierclaw.channels"):
        assert outage.recovered() is None  # nothing was down: nothing said
        for _ in range(5):
            outage.failed(ConnectionRefusedError(111, "Connection refused"))
            now[0] += 10
        assert [outage.backoff()] == [16.0]  # doubled per failure
        assert outage.recovered() == 50.0
        outage.lost()  # a drop that reconnects at once: only the line that it is back
        now[0] += 2
        outage.recovered()
    assert caplog.messages == [
        "[telegram] lost the Bot API: connection refused; retrying with backoff (one line when it is back)",
        "[telegram] reconnected to the Bot API after 50 s",
        "[telegram] reconnected to the Bot API after 2 s",
    ]
