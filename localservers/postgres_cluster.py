"""A throwaway PostgreSQL cluster for the tests and benchmarks, started from the installed server binaries.

``TEST_POSTGRES_URL`` (not a ``TIERCLAW_`` name: tierclaw warns about unknown ones) names a server to use
instead; it must allow ``CREATE DATABASE``. Without either, the PostgreSQL tests skip with one line saying
what to install, unless ``REQUIRE_POSTGRES_TESTS=1`` (``.ci/run``): then they fail.

As root, ``initdb`` and ``pg_ctl`` refuse to run, so they run as the ``postgres`` user (``runuser``), in a
temporary directory that user owns (the data directory and the socket directory both live there).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from localservers.http import free_port

INSTALL_HINT = "PostgreSQL server binaries not found (apt-get install postgresql)"

# Ceilings, not margins: initdb and a start or stop take a second or two of CPU, but under ``nice 19`` beside
# busy processes that second can take minutes of wall time (pg_ctl's own default wait is 60 s).
PG_CTL_CEILING_S = 600
PG_CTL_WAIT = ["-w", "-t", str(PG_CTL_CEILING_S)]


@dataclass(slots=True)
class Cluster:
    """A running server: ``url`` connects as a superuser to its ``postgres`` database."""

    url: str
    data_dir: Path | None = None
    pg_ctl: str | None = None
    user: str | None = None
    options: str = ""  # the server options it was started with (``resume`` starts it with them again)

    def url_for(self, database: str) -> str:
        """The same server, another database."""
        parts = urlsplit(self.url)
        return urlunsplit(parts._replace(path=f"/{database}"))

    def pause(self) -> None:
        """Stop the server (fast: open connections are cut), keeping its data: the server going away."""
        assert self.data_dir is not None and self.pg_ctl is not None, "only a cluster started here"
        _run_as(self.user, [self.pg_ctl, "-D", str(self.data_dir), "-m", "fast", *PG_CTL_WAIT, "stop"])

    def resume(self) -> None:
        """Start a paused server again, on the same port."""
        assert self.data_dir is not None and self.pg_ctl is not None, "only a cluster started here"
        log = str(self.data_dir.parent / "server.log")
        _run_as(
            self.user,
            [self.pg_ctl, "-D", str(self.data_dir), "-o", self.options, "-l", log, *PG_CTL_WAIT, "start"],
        )

    def require_password(self, role: str, timeout: float = 30.0) -> bool:
        """Make ``role`` (which must exist) log in with its password over TCP (scram-sha-256), as a real
        server asks it, instead of the trust every other role keeps; False for a server this module did
        not start (its authentication is not ours to change)."""
        if self.data_dir is None:
            return False
        import time

        import psycopg

        hba = self.data_dir / "pg_hba.conf"
        rule = f"host all {role} 127.0.0.1/32 scram-sha-256\n"
        text = hba.read_text(encoding="utf-8")
        if rule not in text:
            hba.write_text(rule + text, encoding="utf-8")
        admin_execute(self, "SELECT pg_reload_conf()")
        parts = urlsplit(self.url)
        without = urlunsplit(parts._replace(netloc=f"{role}@{parts.netloc.rpartition('@')[2]}"))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:  # the server reloads its rules when it gets to the signal
            try:
                psycopg.connect(without, connect_timeout=5).close()
            except psycopg.OperationalError as exc:
                if "password" in str(exc):
                    return True
            time.sleep(0.1)
        raise TimeoutError(f"the server did not start asking {role} for a password")

    def stop(self) -> None:
        """Stop a cluster this module started and remove its directory (a given server is left alone)."""
        if self.data_dir is None or self.pg_ctl is None:
            return
        _run_as(self.user, [self.pg_ctl, "-D", str(self.data_dir), "-m", "immediate", *PG_CTL_WAIT, "stop"])
        shutil.rmtree(self.data_dir.parent, ignore_errors=True)


def server_binaries() -> str | None:
    """The directory holding ``initdb`` and ``pg_ctl`` (newest installed version), or None."""
    found = shutil.which("pg_ctl")
    if found and shutil.which("initdb"):
        return str(Path(found).parent)
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=_version_key, reverse=True)
    return str(Path(candidates[0]).parent) if candidates else None


def _version_key(path: str) -> int:
    try:
        return int(Path(path).parts[-3])
    except ValueError:
        return 0


def _run_as(user: str | None, argv: list[str]) -> None:
    command = ["runuser", "-u", user, "--", *argv] if user else argv
    subprocess.run(
        command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=PG_CTL_CEILING_S + 60
    )


TEST_SETTINGS = "-c fsync=off -c full_page_writes=off"


def start_cluster(bin_dir: str, settings: str = TEST_SETTINGS) -> Cluster:
    """initdb + pg_ctl start on a free localhost port; trust authentication; ``settings`` are server
    options (default: fsync off, for tests only)."""
    user = None
    if os.geteuid() == 0:
        user = "postgres"
        pwd.getpwnam(user)  # KeyError when the package did not create the account
    root = Path(tempfile.mkdtemp(prefix="tierclaw-pg-"))
    data, sockets = root / "data", root / "sock"
    sockets.mkdir()
    if user:
        entry = pwd.getpwnam(user)
        for path in (root, sockets):
            os.chown(path, entry.pw_uid, entry.pw_gid)
    initdb, pg_ctl = str(Path(bin_dir) / "initdb"), str(Path(bin_dir) / "pg_ctl")
    _run_as(
        user, [initdb, "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8"]
    )
    for attempt in range(START_ATTEMPTS):
        # The port is free when picked and released before the server binds it: another suite on the
        # machine (two copies at once, issue 38 item 6) can take it in between. Then pick again.
        port = free_port()
        options = f"-k {sockets} -p {port} -c listen_addresses=127.0.0.1 {settings}"
        log = root / "server.log"
        try:
            _run_as(user, [pg_ctl, "-D", str(data), "-o", options, "-l", str(log), *PG_CTL_WAIT, "start"])
        except subprocess.CalledProcessError:
            if attempt + 1 == START_ATTEMPTS or not _port_taken(log, port):
                raise
            continue
        return Cluster(f"postgresql://postgres@127.0.0.1:{port}/postgres", data, pg_ctl, user, options)
    raise AssertionError("unreachable: the last attempt returns or raises")


START_ATTEMPTS = 3  # ports picked before giving up: each lost race is another suite's bind in a moment


def _port_taken(log: Path, port: int) -> bool:
    """Whether the server's log says its start failed because ``port`` was in use (and only that)."""
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return False
    return f"port {port}" in text and "Address already in use" in text


TEMPLATE = "tierclaw_template"


def required() -> bool:
    """Whether a missing server fails the PostgreSQL tests instead of skipping them (``.ci/run``)."""
    return os.environ.get("REQUIRE_POSTGRES_TESTS") == "1"


def admin_execute(cluster: Cluster, *statements: str) -> None:
    """Run statements outside a transaction (CREATE/DROP DATABASE) on the server's ``postgres`` database."""
    import psycopg

    with psycopg.connect(cluster.url, autocommit=True) as conn:
        for statement in statements:
            conn.execute(statement)  # names the caller made, no user input


def prepare_template(cluster: Cluster) -> None:
    """A database holding the current schema, which every test's database is copied from (fast)."""
    import asyncio

    from memory.store.postgres import PostgresStore

    admin_execute(cluster, f"DROP DATABASE IF EXISTS {TEMPLATE} WITH (FORCE)", f"CREATE DATABASE {TEMPLATE}")

    async def build() -> None:
        store = await PostgresStore.open(cluster.url_for(TEMPLATE), warm_text=False)
        await store.close()

    # The session fixture may be set up while a test's event loop runs: build on a thread of its own.
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, build()).result()
