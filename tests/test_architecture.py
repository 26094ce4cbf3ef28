"""The layout rules the project keeps (docs/architecture.md, "Layers"), checked on the source with ``ast`` so
that breaking one fails CI instead of waiting for a reviewer:

* ``channels/`` and ``memory/`` never import ``gateway/`` (the gateway wires them together, never the other
  way round);
* no import cycle between modules of ``gateway/``, ``channels/``, ``memory/``, ``localservers/`` and
  ``bench/``;
* only ``memory/store/`` speaks SQL: no SQLite or PostgreSQL driver import and no SQL statement text
  elsewhere in the four packages (what a second store backend relies on);
* no module over 500 lines in the four packages, no test file over 600 lines, no function over 60 lines
  outside ``bench/``.

Which imports count: every ``import`` statement in a module — at the top, inside functions (the lazy imports
that keep ``tierclaw --help`` fast) and under ``if TYPE_CHECKING:``. A deferred import still makes the module
depend on the other one (it runs later, and a reader and the type checker follow it), and deferring an
import is exactly how a cycle hides, so all of them are edges. Not counted: the parent packages Python
imports implicitly before a submodule (``import a.b.c`` runs ``a/__init__.py``) — a package's
``__init__`` re-exporting its own modules would otherwise be a "cycle" with each of them.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from tests.support import REPO

PACKAGES = ("gateway", "channels", "memory", "localservers")
MAX_MODULE_LINES = 500
MAX_TEST_LINES = 600
MAX_FUNCTION_LINES = 60

# Known offenders of "only memory/store/ speaks SQL", each with the issue that removes it (none left since
# issue 28). The list may only shrink: an entry whose file no longer breaks the rule fails the test.
# The throwaway PostgreSQL server of the tests and benchmarks administers a cluster (CREATE DATABASE for a
# test, the template): server administration, not the memory's data, which only memory/store/ touches.
SQL_ALLOWED: set[str] = {"localservers/postgres_cluster.py"}
SQL_DRIVERS = {"sqlite3", "aiosqlite", "psycopg", "psycopg2", "psycopg_pool", "asyncpg"}
SQL_TEXT = re.compile(
    r"\bSELECT\b[\s\S]{0,400}?\bFROM\b|\bINSERT\s+(?:OR\s+\w+\s+)?INTO\b|\bUPDATE\s+\w+\s+SET\b"
    r"|\bDELETE\s+FROM\b|\bCREATE\s+(?:VIRTUAL\s+)?TABLE\b|\bPRAGMA\b"
)


def _modules(*packages: str) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` file of ``packages`` (a package is its ``__init__``)."""
    found: dict[str, Path] = {}
    for package in packages:
        for path in sorted((REPO / package).rglob("*.py")):
            parts = path.relative_to(REPO).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


@cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _imported_names(name: str, path: Path) -> Iterator[str]:
    """Every module name an import statement anywhere in the module names: ``from a import b`` gives
    ``a.b`` (``b`` may be a submodule; the caller falls back to ``a`` when it is not)."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package[: len(package) - (node.level - 1)]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            yield from (f"{base}.{alias.name}" for alias in node.names)


def _import_graph(*packages: str) -> dict[str, set[str]]:
    """Module -> the modules of ``packages`` it imports (the longest known prefix of each imported name)."""
    modules = _modules(*packages)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        edges: set[str] = set()
        for imported in _imported_names(name, path):
            target = imported
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                edges.add(target)
        graph[name] = edges
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _functions(path: Path) -> Iterator[tuple[str, int, int]]:
    """(name, first line, length in lines) of every function and method, nested ones included."""
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node.name, node.lineno, (node.end_lineno or node.lineno) - node.lineno + 1


def _speaks_sql(path: Path) -> list[str]:
    """What in the module speaks SQL: driver imports and string constants holding a SQL statement."""
    found = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            found += [f"line {node.lineno}: import {n}" for n in names if n.split(".")[0] in SQL_DRIVERS]
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and (match := SQL_TEXT.search(node.value))
        ):
            found.append(f"line {node.lineno}: {match.group(0)[:40]!r}")
    return found


def test_channels_and_memory_never_import_gateway() -> None:
    graph = _import_graph("gateway", "channels", "memory")
    upward = sorted(
        f"{module} imports {target}"
        for module, targets in graph.items()
        if module.split(".")[0] in ("channels", "memory")
        for target in targets
        if target.split(".")[0] == "gateway"
    )
    assert upward == []


def test_no_import_cycles() -> None:
    assert _cycles(_import_graph(*PACKAGES, "bench")) == []


def test_the_cycle_finder_finds_a_cycle_and_the_graph_counts_deferred_imports() -> None:
    """The two tests above would pass on a broken graph: check it sees what it must."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    graph = _import_graph(*PACKAGES)
    assert "gateway.app" in graph["gateway.cli.run"]  # imported inside a function
    assert "gateway.app" in graph["gateway.dashboard.server"]  # imported under TYPE_CHECKING
    assert "memory.vectors.openai_embedder" in graph["memory.vectors.embedding"]  # lazy, in build_embedder


def test_only_the_store_speaks_sql() -> None:
    offenders = {}
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            relative = path.relative_to(REPO).as_posix()
            if relative.startswith("memory/store/"):
                continue
            if found := _speaks_sql(path):
                offenders[relative] = found
    assert sorted(set(offenders) - SQL_ALLOWED) == [], {k: offenders[k] for k in set(offenders) - SQL_ALLOWED}
    assert sorted(SQL_ALLOWED - set(offenders)) == [], "fixed: delete these from SQL_ALLOWED"


def test_the_sql_check_recognises_statements_and_drivers() -> None:
    store = _speaks_sql(REPO / "memory" / "store" / "schema.py")
    assert any("CREATE" in line for line in store) and any("PRAGMA" in line for line in store)
    for text in (
        "SELECT id\n  FROM memories",
        "INSERT OR IGNORE INTO seen",
        "UPDATE t SET a = 1",
        "DELETE FROM t",
    ):
        assert SQL_TEXT.search(text), text
    assert not SQL_TEXT.search("select the memories from the store, then update them")


def test_modules_and_test_files_stay_small() -> None:
    too_long = {
        path.relative_to(REPO).as_posix(): lines
        for package in PACKAGES
        for path in (REPO / package).rglob("*.py")
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert too_long == {}
    long_tests = {
        path.relative_to(REPO).as_posix(): lines
        for path in (REPO / "tests").rglob("*.py")
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_TEST_LINES
    }
    assert long_tests == {}


def test_no_function_over_sixty_lines_outside_bench() -> None:
    too_long = [
        f"{path.relative_to(REPO).as_posix()}:{line} {name} ({length} lines)"
        for package in PACKAGES
        for path in sorted((REPO / package).rglob("*.py"))
        for name, line, length in _functions(path)
        if length > MAX_FUNCTION_LINES
    ]
    assert too_long == []
