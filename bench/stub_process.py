"""The local OpenAI-compatible stub (localservers/openai_server.py) as a benchmark's model server: in a child
process (``python -m bench.stub_process``, the default) or a thread of the benchmark, and the environment
that lets ``python -m bench…`` children import the repository from any directory."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from localservers.openai_server import OpenAIStub

REPO = Path(__file__).resolve().parent.parent


def serve_stub() -> int:
    """Run the stub, print its base URL, serve until stdin closes (the child process of ``stub_server``)."""
    stub = OpenAIStub().start()
    try:
        print(stub.base_url, flush=True)
        sys.stdin.read()
    finally:
        stub.stop()
    return 0


@contextlib.contextmanager
def stub_server(where: str) -> Iterator[str]:
    """The stub's base URL, served from a child process (default) or a thread of this process.

    In a child process the stub's own CPU work (HTTP parsing, JSON) does not compete with the gateway
    for this interpreter's GIL, as a remote model server would not; in a thread it does, adding the same
    cost to both modes' messages (measured here: about the same ratio, lower rates).
    """
    if where == "thread":
        with OpenAIStub() as stub:
            yield stub.base_url
        return
    proc = subprocess.Popen(
        [sys.executable, "-m", "bench.stub_process"],
        cwd=REPO,
        env=child_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdin is not None
        url = proc.stdout.readline().strip()
        if not url.startswith("http://"):
            raise RuntimeError(f"the stub process did not start (exit {proc.poll()})")
        yield url
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def child_env() -> dict[str, str]:
    """This environment with the repository first on PYTHONPATH (``-m bench…`` from any cwd)."""
    path = os.environ.get("PYTHONPATH", "")
    return {**os.environ, "PYTHONPATH": str(REPO) + (os.pathsep + path if path else "")}


if __name__ == "__main__":
    raise SystemExit(serve_stub())
