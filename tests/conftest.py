"""Shared fixtures: a real MemoryEngine on a fresh SQLite file per test, a throwaway PostgreSQL server
(``localservers/postgres_cluster.py``) with a fresh database per test that asks for one, and the local
platform servers (``localservers/``) started for a test and stopped after it."""

from __future__ import annotations

import itertools
import os
import signal
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from localservers import postgres_cluster as throwaway_pg
from localservers.feishu_server import FeishuStub
from localservers.openai_server import OpenAIStub
from localservers.telegram_server import TelegramStub
from memory.engine import MemoryEngine
from tests.support.stub_clients import close_clients

# Hypothesis fails an example that runs over 200 ms (its ``deadline``) and a test whose data takes long to
# generate (``too_slow``): wall-clock limits that a loaded machine breaks and no test here means to assert
# (tests/README.md). Loaded before any test module, so every ``@settings`` builds on it.
settings.register_profile("tierclaw", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("tierclaw")


@pytest.fixture(autouse=True)
def _no_openai_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The OpenAI SDK's variables fill in a missing provider key (gateway/config/env.py): a developer's own
    key must not reach the tests (nor their subprocesses)."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def _cutter_switches(monkeypatch: pytest.MonkeyPatch) -> None:
    """A trainer's entry point sets the cutter's switches for the rest of its process (``memory/head/
    arguments.round_flags``, ``memory/retrieval/train_rerank.main``: the clause cutter, question rule, secret
    rule and clause subjects a head is trained with). A command ends its process; a test calling one in the
    suite's process must not leave them changed, so each is put back after every test."""
    from memory.model import clauses, quick_extract

    for switch in ("QUESTION_HEADS", "SUBJECTLESS_STATEMENTS", "SECRET_WHEREABOUTS"):
        monkeypatch.setattr(quick_extract, switch, getattr(quick_extract, switch))
    monkeypatch.setattr(clauses, "WHOLE_CONTINUATIONS", clauses.WHOLE_CONTINUATIONS)


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[throwaway_pg.Cluster]:
    """A PostgreSQL server for the session: ``TEST_POSTGRES_URL``, or one started from the installed
    binaries and removed afterwards. Without either the test skips (fails under REQUIRE_POSTGRES_TESTS=1)."""
    given = os.environ.get("TEST_POSTGRES_URL")
    if given:
        cluster = throwaway_pg.Cluster(given)
    else:
        binaries = throwaway_pg.server_binaries()
        if binaries is None:
            if throwaway_pg.required():
                pytest.fail(throwaway_pg.INSTALL_HINT + ", and REQUIRE_POSTGRES_TESTS=1 is set")
            pytest.skip(throwaway_pg.INSTALL_HINT)
        cluster = throwaway_pg.start_cluster(binaries)
    try:
        throwaway_pg.prepare_template(cluster)
        yield cluster
    finally:
        cluster.stop()


_database_numbers = itertools.count(1)


@pytest.fixture
def postgres_url(postgres_cluster: throwaway_pg.Cluster) -> Iterator[str]:
    """The URL of a fresh database holding the current (empty) schema, dropped after the test."""
    name = f"tierclaw_test_{os.getpid()}_{next(_database_numbers)}"
    template = throwaway_pg.TEMPLATE
    throwaway_pg.admin_execute(postgres_cluster, f"CREATE DATABASE {name} TEMPLATE {template}")
    try:
        yield postgres_cluster.url_for(name)
    finally:
        throwaway_pg.admin_execute(postgres_cluster, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture(params=["sqlite", "postgres"])
def memory_db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where a memory lives, once per store: a SQLite file path, then a PostgreSQL URL."""
    if request.param == "sqlite":
        return str(tmp_path / "memory.db")
    return str(request.getfixturevalue("postgres_url"))


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test marked ``both_stores`` runs once per store: its ``engine`` (or ``memory_url``) is a SQLite
    file, then a fresh PostgreSQL database."""
    if metafunc.definition.get_closest_marker("both_stores") and "memory_store" in metafunc.fixturenames:
        metafunc.parametrize("memory_store", ["sqlite", "postgres"], indirect=True)


@pytest.fixture
def memory_store(request: pytest.FixtureRequest) -> str:
    """Which store ``engine`` and ``memory_url`` use: the test's parameter (``both_stores``), else
    TEST_MEMORY_STORE (``postgres`` runs the whole suite on the second store), else sqlite."""
    return str(getattr(request, "param", os.environ.get("TEST_MEMORY_STORE", "sqlite")))


@pytest.fixture
def memory_url(memory_store: str, request: pytest.FixtureRequest) -> str:
    """``memory.databaseUrl`` for a test's config: "" (the SQLite file at dbPath) or a fresh database."""
    return str(request.getfixturevalue("postgres_url")) if memory_store == "postgres" else ""


@pytest.fixture
async def engine(tmp_path: Path, memory_url: str) -> AsyncIterator[MemoryEngine]:
    """A MemoryEngine on tmp_path/"memory.db" (or a fresh PostgreSQL database: ``memory_store``), closed
    after the test."""
    target: str | Path = memory_url or tmp_path / "memory.db"
    eng = await MemoryEngine.open(target)
    try:
        yield eng
    finally:
        await eng.close()


@pytest.fixture
async def close_stub_clients() -> AsyncIterator[None]:
    """Close the OpenAI clients a test made with ``tests/support/stub_clients.client_for`` (their
    connections would otherwise outlive the test's event loop); a module opts in with
    ``pytestmark = pytest.mark.usefixtures("close_stub_clients")``."""
    yield
    await close_clients()


@pytest.fixture
def tg() -> Iterator[TelegramStub]:
    """The local Telegram Bot API server."""
    with TelegramStub() as stub:
        yield stub


@pytest.fixture
def feishu() -> Iterator[FeishuStub]:
    """The local Feishu open-api, websocket and callback server."""
    with FeishuStub() as stub:
        yield stub


@pytest.fixture
def model() -> Iterator[OpenAIStub]:
    """The local OpenAI-compatible model server (chat completions and embeddings)."""
    with OpenAIStub() as stub:
        yield stub


@pytest.fixture
def ctrl_c_interrupts() -> Iterator[None]:
    """Ctrl-C (SIGINT) reaches this process as it does in a terminal, for the test's length.

    A command started in the background by a non-interactive shell (``pytest … &``, ``nohup``) inherits
    SIGINT ignored; Python then keeps it ignored, ``asyncio.run`` installs no Ctrl-C handler, and a test
    that raises SIGINT waits out its ceiling instead (tests/gateway/cli/test_cli_reindex.py failed so, in
    a background run of tests/gateway). The disposition the run started with is put back afterwards."""
    before = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)
