"""``tierclaw status``: what this installation would run with, and the state of its memory.

Config file in use, channels, models (with masked keys), memory database path, counts per tier, buffered
turns, dead letters, the embedder and how many memories still lack its vector, and the last and next run of
each job. Reads only: a database file is never created (an empty PostgreSQL database gets its tables, as
at any first start: ``memory/store/postgres/schema.py``), no model is loaded and no API is called.
"""

from __future__ import annotations

import os
from typing import Any

from gateway.app import job_times, timezone_of
from gateway.config import ENV_OVERRIDES, Config, FeishuConfig, TelegramConfig, masked_secret, redacted
from gateway.inbox import DurableInbox
from gateway.providers import Models, build_models
from gateway.scheduler import DAILY_JOB, SWEEP_JOB, WEEKLY_JOB
from memory.engine import MemoryEngine
from memory.pipeline.job_log import JobLog
from memory.store.urls import is_database_url, masked
from memory.text.wording import plural
from memory.vectors.embedding import LocalEmbedder, build_embedder


def _channel_state(section: TelegramConfig | FeishuConfig) -> str:
    """``disabled``, or ``enabled (<mode>, N allowed)`` / ``(…, everyone)`` / ``(…, nobody allowed yet)``."""
    if not section.enabled:
        return "disabled"
    entries = [e for e in section.allow_from if e.strip()]
    who = "everyone" if "*" in entries else f"{len(entries)} allowed" if entries else "nobody allowed yet"
    return f"enabled ({section.mode}, {who})"


async def _embedding_state(config: Config) -> dict:
    """The configured embedder: provider, ``model_key``, dimension and a one-line label.

    The embedder is built only to read its ``model_key`` (what stored vectors are tagged with) and closed
    at once: building loads no model and contacts no API.
    """
    settings = config.memory.embedding
    if not config.memory.enabled:
        return {"provider": "none", "model_key": None, "dimensions": None, "label": "off (file memory)"}
    try:
        embedder = build_embedder(settings.settings())
    except ValueError as exc:  # the gateway would refuse to start with it: say why, show the rest
        return {
            "provider": settings.provider,
            "model_key": None,
            "dimensions": None,
            "label": f"unusable: {exc}",
        }
    if embedder is None:
        return {"provider": "none", "model_key": None, "dimensions": None, "label": "off"}
    try:
        model_key = embedder.model_key
        dim = embedder.dim if embedder.dim is not None else getattr(type(embedder), "DIM", None)
    finally:
        await embedder.close()
    name = model_key.split(":", 1)[-1].split("@", 1)[0]
    state: dict = {"provider": settings.provider, "model_key": model_key, "dimensions": dim}
    if isinstance(embedder, LocalEmbedder):
        state["label"] = f"local ({name}, {dim}-d)"
    else:
        size = f", {dim}-d" if dim is not None else ""
        state["label"] = (
            f"{settings.provider} {name}  ({settings.base_url}{size}, key {masked_secret(settings.api_key)})"
        )
    return state


async def collect(config: Config) -> dict:
    """Everything status shows, as a JSON-ready dict (secrets masked)."""
    models = build_models(config)
    await models.close()
    embeddings = await _embedding_state(config)
    report = _configured(config, models, embeddings)
    if config.memory_on_file() and not config.db_path().exists():
        report["memory"] = None
        return report
    report["memory"], runs = await _memory_state(config, embeddings)
    report["jobs"] = _jobs_state(config, runs)
    return report


def _configured(config: Config, models: Models, embeddings: dict) -> dict:
    """What the config sets: file, overrides, channels, models, paths, embeddings, page, settings."""
    memory_provider = config.memory_provider()
    return {
        "config": str(config.source) if config.source else "(none: built-in defaults)",
        "env_overrides": [o.name for o in ENV_OVERRIDES if _env_set(o.name)],
        "channels": {
            "console": "tierclaw chat",
            "telegram": _channel_state(config.channels.telegram),
            "feishu": _channel_state(config.channels.feishu),
        },
        "main_model": models.chat.label,
        "main_provider": {
            "baseUrl": config.provider.base_url,
            "apiKey": masked_secret(config.provider.api_key),
            "keySource": config.api_key_source,
        },
        "memory_model": models.memory.label,
        "memory_provider": {
            "baseUrl": memory_provider.base_url,
            "apiKey": masked_secret(memory_provider.api_key),
        },
        "memory_enabled": config.memory.enabled,
        "workspace": str(config.workspace_path()),
        "memory_db": masked(config.memory_target()),
        "timezone": str(timezone_of(config)),
        "embeddings": embeddings,
        "dashboard": _dashboard_state(config),
        "settings": redacted(config),
    }


async def _memory_state(config: Config, embeddings: dict) -> tuple[dict, dict]:
    """Counts of the memory database, and the job runs it recorded (adds ``missing_vectors`` to
    ``embeddings`` when an embedder is configured)."""
    engine = await MemoryEngine.open(config.memory_target(), create=False)
    try:
        stats = await engine.stats()
        unsent = await DurableInbox(engine.store).unsent_recently()
        runs = await JobLog(engine.store.jobs).all_runs()
        if embeddings["model_key"] is not None:
            # Live memories without a vector of this model: what `tierclaw memory reindex` would embed.
            embeddings["missing_vectors"] = await engine.vectors.count_missing_embeddings(
                embeddings["model_key"]
            )
    finally:
        await engine.close()
    memory = {
        **stats,
        "unsent_replies": unsent,
    }
    return memory, runs


def _jobs_state(config: Config, runs: dict) -> dict:
    """Each scheduled job: when it runs, when it last ran and how that went."""
    times = job_times(config)
    return {
        name: {
            "schedule": schedule,
            "last_run": runs[name][0].isoformat(timespec="seconds") if name in runs else None,
            "last_status": runs[name][1] if name in runs else None,
        }
        for name, schedule in (
            (SWEEP_JOB, f"daily {times.sweep}"),
            (DAILY_JOB, f"daily {times.daily}"),
            (WEEKLY_JOB, f"{times.weekly_day} {times.weekly}"),
        )
    }


def _dashboard_state(config: Config) -> str:
    """Where the memory web page is served (never the token)."""
    page = config.dashboard
    where = f"http://{page.host}:{page.port}/"
    if page.enabled:
        return f"served by tierclaw gateway at {where} (tierclaw dashboard prints a link with the token)"
    return f"tierclaw dashboard serves it at {where} (dashboard.enabled: the gateway serves it too)"


def _env_set(name: str) -> bool:
    return bool(os.environ.get(name))


def _embedding_line(embeddings: dict) -> str:
    """``embeddings  local (…, 384-d) · 3 memories without a vector  (run `tierclaw memory reindex`)``."""
    line = f"embeddings      {embeddings['label']}"
    missing = embeddings.get("missing_vectors")
    if missing is None:
        return line
    line += f" · {plural(missing, 'memory')} without a vector"
    if missing:
        line += "  (run `tierclaw memory reindex`)"
    return line


def _key_source(provider: dict) -> str:
    source = provider.get("keySource", "none")
    return "" if source == "none" else f" from {source}"


def render(report: dict) -> str:
    """The human-readable status."""
    lines = [
        f"config file     {report['config']}",
        f"env overrides   {', '.join(report['env_overrides']) or 'none'}",
        "channels        " + ", ".join(f"{k}: {v}" for k, v in report["channels"].items()),
        f"main model      {report['main_model']}  ({report['main_provider']['baseUrl']}, "
        f"key {report['main_provider']['apiKey']}{_key_source(report['main_provider'])})",
        f"memory model    {report['memory_model']}  ({report['memory_provider']['baseUrl']}, "
        f"key {report['memory_provider']['apiKey']})",
        f"memory          {_memory_kind(report)}",
        f"memory db       {report['memory_db']}",
        _embedding_line(report["embeddings"]),
        f"memory page     {report['dashboard']}",
        f"workspace       {report['workspace']}",
        f"timezone        {report['timezone']}",
    ]
    memory = report.get("memory")
    if memory is None:
        lines.append("memory state    database not created yet (it is created on first use)")
        return "\n".join(lines)
    lines.append(
        f"memories        tier1 {memory['tier1']} · tier2 {memory['tier2']} · tier3 events "
        f"{memory['tier3_events']} · archived {memory['archived']} · owners {memory['owners']}"
    )
    lines.append(
        f"extraction      {plural(memory['buffered_turns'], 'turn')} buffered · "
        f"{plural(memory['dead_letters'], 'dead letter')}"
        + ("  (tierclaw memory retry re-queues them)" if memory["dead_letters"] else "")
    )
    if memory.get("unsent_replies"):
        lines.append(
            f"replies         {plural(memory['unsent_replies'], 'reply', 'replies')} could not be sent in "
            "the last 48 h (see the log)"
        )
    for name, job in report["jobs"].items():
        if not job["last_run"] or job["last_status"] == "scheduled":  # stamped at first start, never ran
            last = "not run yet"
        else:
            last = f"last {job['last_run']} ({job['last_status']})"
        lines.append(f"job {name:<19} {job['schedule']:<12} {last}")
    return "\n".join(lines)


def _memory_kind(report: dict[str, Any]) -> str:
    if not report["memory_enabled"]:
        return "files (memory.enabled = false)"
    return "PostgreSQL" if is_database_url(report["memory_db"]) else "SQLite"
