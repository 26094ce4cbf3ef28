"""How long the commands a person types take to start: ``--help``, ``memory stats``, the gateway.

    python -m bench.cli_startup [--runs 5] [--json]

Each command runs ``--runs`` times as a fresh process (the median is reported), with HOME in a temporary
directory and no ``TIERCLAW_*`` variable:

* ``help_s``: ``tierclaw --help``;
* ``memory_stats_s``: ``tierclaw memory stats`` on a small database;
* ``startup_s``: ``tierclaw chat`` from launch until it logs that it started (the terminal channel, no
  platform), offline model;
* ``startup_feishu_s``: ``tierclaw gateway`` with Feishu (callback mode) configured against the local
  Feishu server, from launch until it logs that it started.

Also ``lark_import_s``: ``python -c "import lark_oapi"`` alone, the floor under ``startup_feishu_s`` (the
SDK imports its whole generated API, ~10,700 modules, whichever part is used).

No data set is needed. Every run is a cold process, so the numbers include Python's own start (~0.05 s).
tierclaw's own modules are byte-compiled first (``compileall``, into the ignored ``__pycache__``), as a
``pip install`` does, so that an environment with ``PYTHONDONTWRITEBYTECODE`` does not time the compiler
(``bytecode_compiled`` in the JSON says it was done).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.report import emit_json, table

REPO = Path(__file__).resolve().parents[1]
STARTED = "[gateway] started"
READY_TIMEOUT_S = 300.0  # a ceiling: under load (a suite beside another) importing took 43 s


def _env(home: Path, config: Path | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIERCLAW_")}
    env["HOME"] = str(home)
    if config is not None:
        env["TIERCLAW_CONFIG"] = str(config)
    return env


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def timed_run(argv: list[str], env: dict[str, str]) -> float:
    """Seconds for ``python -m gateway.cli ARGV`` to run to completion (exit 0 required)."""
    return timed_python(["-m", "gateway.cli", *argv], env)


def timed_python(argv: list[str], env: dict[str, str]) -> float:
    """Seconds for ``python ARGV`` to run to completion (exit 0 required)."""
    started = time.perf_counter()
    subprocess.run([sys.executable, *argv], env=env, cwd=REPO, check=True, capture_output=True)
    return time.perf_counter() - started


def time_to_started(argv: list[str], env: dict[str, str]) -> float:
    """Seconds from launch until the process logs that the gateway started; then it is stopped."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "gateway.cli", "--log-level", "INFO", *argv],
        env=env,
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            if STARTED in line:
                return time.perf_counter() - started
            if time.perf_counter() - started > READY_TIMEOUT_S:
                break
        raise RuntimeError(f"tierclaw {' '.join(argv)} did not start (exit {proc.poll()})")
    finally:
        proc.terminate()
        try:
            proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()


PACKAGES = ("gateway", "channels", "memory", "localservers")


def compile_sources() -> bool:
    """Byte-compile tierclaw's packages as an install would; True when every file compiled."""
    import compileall

    return all(compileall.compile_dir(REPO / name, quiet=1) for name in PACKAGES)


def measure(runs: int) -> dict[str, Any]:
    """The medians of ``runs`` cold runs of each command."""
    from localservers.feishu_server import FeishuStub

    compiled = compile_sources()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        env = _env(home)
        db = str(home / "memory.db")
        timed_run(["memory", "add", "I live in Lyon", "--db", db], env)
        result: dict[str, Any] = {
            "help_s": statistics.median(timed_run(["--help"], env) for _ in range(runs)),
            "memory_stats_s": statistics.median(
                timed_run(["memory", "stats", "--db", db], env) for _ in range(runs)
            ),
            "startup_s": statistics.median(time_to_started(["chat"], env) for _ in range(runs)),
        }
        with FeishuStub() as feishu:
            config = home / "feishu.json"
            config.write_text(
                json.dumps(
                    {
                        "memory": {"dbPath": db},
                        "channels": {
                            "feishu": {
                                "enabled": True,
                                "appId": "cli_bench",
                                "appSecret": "bench-secret",
                                "domain": feishu.domain,
                                "mode": "callback",
                                "callback": {"listen": "127.0.0.1", "port": _free_port()},
                                "verificationToken": "bench-token",
                                "encryptKey": "bench-key",
                                "allowFrom": ["*"],
                            }
                        },
                    }
                ),
                encoding="utf-8",
            )
            feishu_env = _env(home, config)
            result["startup_feishu_s"] = statistics.median(
                time_to_started(["gateway"], feishu_env) for _ in range(runs)
            )
    result["lark_import_s"] = statistics.median(
        timed_python(["-c", "import lark_oapi"], env) for _ in range(runs)
    )
    result["runs"] = runs
    result["bytecode_compiled"] = compiled
    return result


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(prog="python -m bench.cli_startup", description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="cold runs per command; the median is shown")
    parser.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    result = measure(args.runs)
    rows = [
        [name, result[key]]
        for name, key in (
            ("tierclaw --help", "help_s"),
            ("tierclaw memory stats", "memory_stats_s"),
            ("tierclaw chat: started", "startup_s"),
            ("tierclaw gateway (Feishu): started", "startup_feishu_s"),
            ("python -c 'import lark_oapi' (floor)", "lark_import_s"),
        )
    ]
    print(table(["command", f"median of {args.runs} (s)"], rows))
    if args.json:
        emit_json(result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
