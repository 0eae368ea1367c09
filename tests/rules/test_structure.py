"""The rules core's shape: no import circles, and engines never import the registry."""

from __future__ import annotations

import ast
from pathlib import Path

ENGINES = Path(__file__).resolve().parents[2] / "rules" / "engines"


def _module_name(path: Path) -> str:
    rel = path.relative_to(ENGINES.parent.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """Modules of the rules core that ``path`` imports when it runs (not for type checking)."""
    tree = ast.parse(path.read_text())
    package = _module_name(path) if path.name == "__init__.py" else _module_name(path.parent / "x")
    package = package.rsplit(".", 1)[0] if path.name != "__init__.py" else package
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.dump(node.test):
            node.body = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("rules.engines"):
                continue
            for alias in node.names:
                candidate = f"{target}.{alias.name}"
                out.add(candidate if _exists(candidate) else target)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("rules.engines"))
    return {m for m in out if _exists(m)}


def _exists(module: str) -> bool:
    rel = Path(*module.split(".")[2:]) if module.count(".") >= 2 else Path()
    base = ENGINES / rel
    return base.with_suffix(".py").exists() or (base / "__init__.py").exists()


def _graph() -> dict[str, set[str]]:
    graph = {}
    for path in ENGINES.rglob("*.py"):
        name = _module_name(path)
        # A package's own __init__ is imported before any of its modules: leave that edge out.
        graph[name] = {m for m in _imports(path) if not name.startswith(m + ".") and m != name}
    return graph


def test_the_rules_core_has_no_import_circle() -> None:
    graph = _graph()
    done: set[str] = set()
    path: list[str] = []

    def visit(node: str) -> None:
        if node in path:
            raise AssertionError("import circle: " + " -> ".join([*path[path.index(node) :], node]))
        if node in done:
            return
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            # Importing a package runs its __init__ (which re-exports); it is not a module of
            # its own behaviour, so follow it only when it is imported by name.
            visit(nxt)
        path.pop()
        done.add(node)

    for name in sorted(graph):
        visit(name)


def test_engines_never_import_the_registry() -> None:
    graph = _graph()
    for name, imports in graph.items():
        if name in ("rules.engines", "rules.engines.registry"):
            continue
        assert "rules.engines.registry" not in imports, name
        assert "rules.engines" not in imports, name


# What an engine may take from the algebra: the distribution type, the budget, and the budget's
# cost estimates. Convolution helpers and pruning stay inside dist.py.
ALGEBRA_NAMES = {"Dist", "Budget", "BUDGET_MICROSECONDS", "product_cost", "fraction_cost"}


def test_engines_build_odds_from_the_one_distribution_type() -> None:
    dist = ENGINES / "dist.py"
    for path in ENGINES.rglob("*.py"):
        if path == dist:
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[-1] == "dist":
                taken = {alias.name for alias in node.names}
                assert taken <= ALGEBRA_NAMES, f"{path.name} takes {taken - ALGEBRA_NAMES}"
            elif isinstance(node, ast.Import):
                assert not any(a.name.endswith(".dist") for a in node.names), path.name
            elif isinstance(node, ast.FunctionDef):
                assert "conv" not in node.name.lower(), f"{path.name} defines {node.name}"
            elif isinstance(node, ast.Assign):
                names = {t.id for t in node.targets if isinstance(t, ast.Name)}
                assert "PRUNE" not in names, f"{path.name} has a pruning constant of its own"
