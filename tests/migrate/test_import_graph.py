"""`compat.migrate`'s modules import each other without a cycle (every import counts, also inside functions)."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "compat" / "migrate"


def _graph() -> dict[str, set[str]]:
    modules = {p.stem for p in PKG.glob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for path in PKG.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                if node.level == 1:
                    targets = [node.module] if node.module else [a.name for a in node.names]
                elif node.level == 0 and node.module and node.module.startswith("compat.migrate."):
                    targets = [node.module.split(".")[2]]
                else:
                    targets = []
            elif isinstance(node, ast.Import):
                targets = [a.name.split(".")[2] for a in node.names if a.name.startswith("compat.migrate.")]
            else:
                continue
            graph[path.stem] |= {t.split(".")[0] for t in targets if t and t.split(".")[0] in modules}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> list[str] | None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*trail, node, nxt]
            if nxt not in state and (found := visit(nxt, [*trail, node])):
                return found
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start, [])):
            return found
    return None


def test_no_import_cycle_in_compat_migrate():
    graph = _graph()
    assert "notebook" in graph["engine"]  # the scan sees imports at all
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


def test_the_scan_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None
