"""The core's groups and the direction of their imports, as drawn in ``oxmem_gui/core/__init__.py``: a module
imports only from its own group or a group below it, and nothing under ``oxmem_gui.core`` imports Qt."""

from __future__ import annotations

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "oxmem_gui" / "core"
#: group -> floor; a group may import groups on lower floors (and itself), never one on its own floor or above
FLOORS = {
    "errors": 0,
    "database": 1,
    "text_repair": 0,
    "folders": 0,
    "redaction": 0,
    "http_post": 1,
    "embeddings": 2,
    "store": 3,
    "retrieval": 4,
    "schedules": 4,
    "remote": 4,
    "formats": 5,
    "front doors": 6,  # memory_store.py, memory.py, contract.py, api.py, check.py, demo.py, __init__.py
}
GROUND = {"errors", "database", "text_repair", "http_post", "folders", "redaction"}


def group_of(parts: tuple[str, ...]) -> str:
    """The group of a module, from its path under ``core`` (``("store", "notes")`` → ``store``)."""
    head = parts[0]
    if len(parts) > 1 or head in ("embeddings", "store", "retrieval", "schedules", "remote", "formats"):
        return head
    return head if head in GROUND else "front doors"


def imports(path: Path) -> list[tuple[str, ...]]:
    """The core modules ``path`` imports, as path parts under ``core``."""
    here = path.relative_to(CORE).with_suffix("").parts
    package = here[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
            target = (*base, *(node.module.split(".") if node.module else ()))
            if node.module is None:
                found += [(*target, a.name) for a in node.names]
            elif target:
                found.append(target)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("oxmem_gui.core."):
            found.append(tuple(node.module.split(".")[2:]))
    return found


def test_imports_only_go_down() -> None:
    wrong = []
    for path in sorted(CORE.rglob("*.py")):
        here = path.relative_to(CORE).with_suffix("").parts
        mine = group_of(here if here[-1] != "__init__" else here[:-1] or ("__init__",))
        for target in imports(path):
            theirs = group_of(target)
            if theirs != mine and FLOORS[theirs] >= FLOORS[mine]:
                wrong.append(f"{'/'.join(here)} ({mine}) imports {'.'.join(target)} ({theirs})")
    assert wrong == []


def test_every_group_says_what_it_owns_and_may_import() -> None:
    for group in ("embeddings", "store", "retrieval", "schedules", "remote", "formats"):
        doc = ast.get_docstring(ast.parse((CORE / group / "__init__.py").read_text(encoding="utf-8")))
        assert doc and "May import" in doc, group


def test_the_core_never_imports_qt() -> None:
    qt = []
    for path in CORE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            names += [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            qt += [f"{path.name}: {n}" for n in names if n.split(".")[0] in ("PySide6", "shiboken6", "qasync")]
    assert qt == []


FRONT_ENDS = [CORE.parent / "ui", CORE.parent / "cli", CORE.parent / "app.py", CORE.parent / "logs.py"]


def test_front_ends_import_the_core_only_through_its_api() -> None:
    """The inspector and the command line reach the core through ``oxmem_gui.core.api`` alone (its contract and
    types), so a change inside the core that keeps the API changes no front end."""
    wrong = []
    for root in FRONT_ENDS:
        for path in sorted(root.rglob("*.py")) if root.is_dir() else [root]:
            package = path.relative_to(CORE.parents[1]).with_suffix("").parts[:-1]
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and node.level:
                    base = package[: len(package) - (node.level - 1)]
                    target = ".".join((*base, *(node.module.split(".") if node.module else ())))
                    if target.startswith("oxmem_gui.core") and target != "oxmem_gui.core.api":
                        wrong.append(f"{path.relative_to(CORE.parents[1])}: {target}")
                elif isinstance(node, ast.Import | ast.ImportFrom):
                    names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
                    wrong += [
                        f"{path.name}: {n}"
                        for n in names
                        if n.startswith("oxmem_gui.core") and n != "oxmem_gui.core.api"
                    ]
    assert wrong == []
