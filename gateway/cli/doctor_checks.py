"""``tierclaw doctor``'s local checks: the configuration (valid, and where each value came from) and the
memory database (the SQLite file: opens, schema version, file modes, free disk; a PostgreSQL URL: reachable,
authenticated, schema version, can write). Apart from that database, nothing here talks to the network;
``doctor_remote.py`` has the model, embedder and channel checks. Every ``Check`` says what to fix and
never holds a secret: a key, token or password is shown as "set" or "not set" only.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gateway.config import Config

MIN_FREE_BYTES = 100 * 1024 * 1024  # below this, SQLite's writes (and WAL checkpoints) may start failing

# The settings whose origin the config check lists (JSON spelling), in that order.
SHOWN_SETTINGS: tuple[tuple[str, ...], ...] = (
    ("provider", "type"),
    ("provider", "baseUrl"),
    ("provider", "apiKey"),
    ("agent", "model"),
    ("memory", "dbPath"),
    ("memory", "databaseUrl"),
    ("memory", "model"),
    ("memory", "embedding", "provider"),
    ("channels", "telegram", "enabled"),
    ("channels", "telegram", "token"),
    ("channels", "feishu", "enabled"),
    ("channels", "feishu", "appId"),
    ("channels", "feishu", "appSecret"),
)


@dataclass
class Check:
    """One line of the doctor's report: ``ok`` (✔) or not (✘), what was found, and what to do about it."""

    name: str
    ok: bool
    detail: str
    fix: str = ""
    notes: list[str] = field(default_factory=list)  # indented lines under it (the config's origins)

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "ok": self.ok, "detail": self.detail, "fix": self.fix, "notes": self.notes}


def hide_userinfo(text: str) -> str:
    """``text`` with any ``user:password@`` of a URL in it replaced (a proxy or private endpoint's
    credentials are as secret as a key)."""
    return re.sub(r"//[^/@\s]+@", "//<credentials>@", text)


def _lookup(raw: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(raw, dict) or key not in raw:
            return None
        raw = raw[key]
    return raw


def _origin(path: tuple[str, ...], file_raw: dict[str, Any], env: Mapping[str, str]) -> str:
    """Where ``path``'s value came from: the variable that set it, "file", or "default" (the order
    ``load_config`` applies them in: a TIERCLAW_… variable over the file, OPENAI_… only under both)."""
    from gateway.config.env import ENV_OVERRIDES, OPENAI_FALLBACKS

    for override in ENV_OVERRIDES:
        if override.path == path and env.get(override.name, ""):
            return f"env {override.name}"
    if _lookup(file_raw, path) not in (None, ""):
        return "file"
    for name, fallback in OPENAI_FALLBACKS:
        if fallback == path and env.get(name, ""):
            return f"env {name}"
    return "default"


def _shown_value(config: Config, path: tuple[str, ...]) -> str:
    from gateway.config.values import SECRET_KEYS
    from memory.store.urls import masked

    if path == ("memory", "databaseUrl"):  # the URL with its password as ***: which server, never the secret
        return json.dumps(masked(config.memory.database_url)) if config.memory.database_url else '""'
    if path[-1] in SECRET_KEYS:
        return "set" if _secret_set(config, path) else "not set"
    value = _lookup(config.model_dump(by_alias=True, mode="json"), path)
    return hide_userinfo(json.dumps(value, ensure_ascii=False))


def _secret_set(config: Config, path: tuple[str, ...]) -> bool:
    node: Any = config
    for key in path:
        node = getattr(node, _snake(key), None)
    getter = getattr(node, "get_secret_value", None)
    return bool(getter() if getter is not None else node)


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)


def check_config(config_arg: str | None, env: Mapping[str, str] | None = None) -> tuple[Check, Config | None]:
    """Load the config as every command does; the check (with each shown setting's value and origin),
    and the config when it is valid."""
    from gateway.config import ConfigError, load_config

    env = os.environ if env is None else env
    try:
        config = load_config(config_arg, env=env)
    except ConfigError as exc:
        return Check("config", False, str(exc), "correct the file or variable named above"), None
    source = config.source
    file_raw: dict[str, Any] = {}
    if source is not None:
        file_raw = json.loads(Path(source).read_text(encoding="utf-8-sig"))
    notes = [
        f"{'.'.join(path)} = {_shown_value(config, path)} ({_origin(path, file_raw, env)})"
        for path in SHOWN_SETTINGS
    ]
    where = str(source) if source is not None else "no config file (built-in defaults + environment)"
    return Check("config", True, f"valid: {where}", notes=notes), config


async def check_database(config: Config) -> Check:
    """The memory database the gateway would open: the SQLite file (``memory.dbPath``), or the
    PostgreSQL database of ``memory.databaseUrl`` / ``TIERCLAW_DATABASE_URL``."""
    if config.memory_on_file():
        return check_database_file(config.db_path())
    return await check_database_url(config.memory_target())


# What to do about each way a database URL fails (``memory/store/postgres/health.py``).
_URL_FIXES = {
    "auth": "check the user and password in memory.databaseUrl (or TIERCLAW_DATABASE_URL)",
    "no_database": "create it (createdb --owner USER NAME) or correct the name in memory.databaseUrl",
    "unreachable": "start the server, or correct the host and port in memory.databaseUrl "
    "(or TIERCLAW_DATABASE_URL)",
    "other": "correct memory.databaseUrl (or TIERCLAW_DATABASE_URL)",
}


async def check_database_url(url: str) -> Check:
    """PostgreSQL: reachable, authenticated, the database there; the server and schema versions; this
    user may write (tried and rolled back). Nothing is created; the password is never shown."""
    from memory.store.postgres.health import DatabaseUnusable, database_health
    from memory.store.schema import SCHEMA_VERSION
    from memory.store.urls import masked

    name, shown = "database", masked(url)
    try:
        health = await database_health(url)
    except DatabaseUnusable as exc:
        return Check(name, False, str(exc), _URL_FIXES.get(exc.kind, _URL_FIXES["other"]))
    server = f"PostgreSQL {health.server_version}"
    if health.schema_version is None and health.other_tables:
        return Check(
            name,
            False,
            f"{shown} ({server}) holds {health.other_tables} other tables but no tierclaw memory",
            "point memory.databaseUrl at the database made for tierclaw (an empty one gets its tables)",
        )
    if health.schema_version is not None and health.schema_version > SCHEMA_VERSION:
        return Check(
            name,
            False,
            f"{shown}: schema {health.schema_version} is newer than this tierclaw's {SCHEMA_VERSION}",
            "upgrade tierclaw",
        )
    if health.write_problem:
        user = _url_user(url)
        return Check(
            name,
            False,
            f"{shown} ({server}) cannot write: {health.write_problem}",
            f"let {user} write there (the database's owner, or GRANT on its tables and schema), "
            "or use a user who may",
        )
    if health.schema_version is None:
        state = f"empty: the first start creates the tables (schema {SCHEMA_VERSION})"
    else:
        upgrade = (
            f", upgraded to {SCHEMA_VERSION} at the next start"
            if health.schema_version < SCHEMA_VERSION
            else ""
        )
        state = f"schema {health.schema_version}{upgrade}"
    return Check(name, True, f"{shown} ({server}): {state}; can write")


def _url_user(url: str) -> str:
    from urllib.parse import urlsplit

    try:
        return urlsplit(url).username or "the user"
    except ValueError:
        return "the user"


def check_database_file(path: Path) -> Check:
    """Opens read-only, schema version known, sound (``quick_check``), private modes, disk not full."""
    from memory.store.schema import SCHEMA_VERSION
    from memory.store.sqlite import MemoryDatabaseError, file_health

    name = "database"
    free = shutil.disk_usage(_existing_parent(path)).free
    free_text = f"{free / 2**30:.1f} GiB free"
    if free < MIN_FREE_BYTES:
        return Check(name, False, f"{path}: only {free / 2**20:.0f} MiB free", "free disk space there")
    if not path.exists():
        writable = os.access(_existing_parent(path), os.W_OK)
        if not writable:
            return Check(name, False, f"{path} does not exist and cannot be created", "set memory.dbPath")
        return Check(name, True, f"{path} not created yet (the first start creates it); {free_text}")
    try:
        version, verdict = file_health(str(path))
    except MemoryDatabaseError as exc:
        return Check(name, False, f"{path} cannot be opened: {exc}", "restore it from a backup")
    if version > SCHEMA_VERSION:
        return Check(
            name,
            False,
            f"{path}: schema {version} is newer than this tierclaw's {SCHEMA_VERSION}",
            "upgrade tierclaw",
        )
    if verdict != "ok":
        return Check(name, False, f"{path}: damaged ({verdict})", "restore it from a backup")
    loose = _loose_modes(path)
    if loose:
        return Check(
            name, False, f"{path}: readable by others ({loose})", f"chmod 600 {path}; chmod 700 {path.parent}"
        )
    upgrade = f" (upgraded to {SCHEMA_VERSION} at the next start)" if version < SCHEMA_VERSION else ""
    return Check(name, True, f"{path}: schema {version}{upgrade}, modes 0600/0700, {free_text}")


def _existing_parent(path: Path) -> Path:
    for candidate in (path.parent, *path.parents):
        if candidate.exists():
            return candidate
    return Path("/")


def _loose_modes(path: Path) -> str:
    """Which of the file and its directory others can read ("file 0644"), or ""."""
    loose = []
    for what, target in (("file", path), ("directory", path.parent)):
        mode = stat.S_IMODE(target.stat().st_mode)
        if mode & 0o077:
            loose.append(f"{what} {mode:04o}")
    return ", ".join(loose)


def check_ffmpeg() -> Check:
    """ffmpeg, when ``media.transcription.convertToWav`` needs it (voice notes → WAV for a server that reads
    WAV only)."""
    from gateway.media.hearing import ffmpeg_path

    path = ffmpeg_path()
    if path is None:
        return Check(
            "ffmpeg",
            False,
            "not installed, and media.transcription.convertToWav needs it",
            "install it (apt-get install ffmpeg), or set convertToWav false if your server reads OGG",
        )
    return Check("ffmpeg", True, f"{path} (voice notes are converted to WAV before transcription)")
