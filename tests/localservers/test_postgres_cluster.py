"""A throwaway cluster's start survives losing its picked port (localservers/postgres_cluster.py).

Two copies of the suite at once (issue 38 item 6) each pick a free port and release it before their server
binds it; one can take the other's. The start then picks another port instead of failing the session."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

import localservers.postgres_cluster as throwaway_pg
from localservers.http import free_port


def _binaries() -> str:
    binaries = throwaway_pg.server_binaries()
    if binaries is None:
        if throwaway_pg.required():
            pytest.fail(throwaway_pg.INSTALL_HINT + ", and REQUIRE_POSTGRES_TESTS=1 is set")
        pytest.skip(throwaway_pg.INSTALL_HINT)
    return binaries


def test_a_port_taken_between_the_pick_and_the_bind_is_picked_again(monkeypatch: pytest.MonkeyPatch) -> None:
    binaries = _binaries()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = int(taken.getsockname()[1])
        picks: Iterator[int] = iter([busy, free_port()])
        monkeypatch.setattr(throwaway_pg, "free_port", lambda: next(picks))
        cluster = throwaway_pg.start_cluster(binaries)
        try:
            assert not cluster.url.endswith(f":{busy}/postgres")
            throwaway_pg.admin_execute(cluster, "SELECT 1")
            assert cluster.data_dir is not None
            log = (cluster.data_dir.parent / "server.log").read_text(errors="replace")
            assert f"port {busy}" in log and "Address already in use" in log  # the first try did meet it
        finally:
            cluster.stop()
