"""The repository stands on its own: what the code keeps is written in its own docs, every
reference to a section of them names a section that exists, and nothing points a reader at a
document that is not here. And a module's private names (``_name``) stay its own."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SKIPPED_DIRS = {".git", ".venv", "var", "node_modules", "__pycache__", ".pytest_cache"}
TEXT_SUFFIXES = {".py", ".md", ".js", ".html", ".css", ".toml", ".txt", ".cfg", ".sh", ".json"}

# Documents the code was once written against that live outside the repository: the contract
# files, the folder they came in and the source texts beside them. (Spelled so that this file
# does not match itself.)
OUTSIDE = re.compile(r"\b(?:RULES|TABLE|STACK)\.md\b|(?<![\w.-])(?:\.\./)?(?:shared|seeds)[/]")

# "docs/rules.md, "Limits"": a section of one of the repo's docs, by its heading.
SECTION_REFERENCE = re.compile(r"docs/([\w/-]+\.md), \\?\"([^\"\\]+)\\?\"")
# [text](rules.md#limits): a link to a heading of a doc.
ANCHOR_LINK = re.compile(r"\]\(([\w./-]*\.md)?#([\w-]+)\)")


def text_files() -> Iterator[Path]:
    for path in sorted(ROOT.rglob("*")):
        relative = path.relative_to(ROOT)
        if any(part in SKIPPED_DIRS or part.startswith(".venv") for part in relative.parts):
            continue
        if path.is_file() and (path.suffix in TEXT_SUFFIXES or relative.parts[0] == ".ci"):
            yield path


def headings(doc: Path) -> list[str]:
    """A markdown file's headings, as a reader sees them (no backticks)."""
    text = re.sub(r"```.*?```", "", doc.read_text(), flags=re.S)
    return [m.group(1).replace("`", "").strip() for m in re.finditer(r"^#+\s+(.*)$", text, re.M)]


def slug(heading: str) -> str:
    """The anchor a heading gets where the docs are read (GitHub's rule)."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def test_no_file_cites_a_document_outside_the_repository() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in text_files()
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert not found, "cite the repo's own docs instead:\n" + "\n".join(found)


def test_the_outside_pattern_catches_every_spelling() -> None:
    md, shared, seeds = ".md", "shared" + "/", "seeds" + "/"
    for cited in (f"RULES{md} section 2", f"(TABLE{md})", f"../{shared}x", f"`{seeds}000_x.txt`"):
        assert OUTSIDE.search(cited), cited
    for fine in ("docs/rules.md", "shared_state", "SharedState", "the seed's words"):
        assert not OUTSIDE.search(fine), fine


def test_every_reference_to_a_section_of_the_docs_names_one_that_exists() -> None:
    missing = []
    for path in text_files():
        for doc, section in SECTION_REFERENCE.findall(path.read_text(errors="replace")):
            target = ROOT / "docs" / doc
            names = headings(target) if target.exists() else []
            section = " ".join(section.split())  # (a name may wrap onto the next line)
            if not any(name == section or name.startswith(f"{section}:") for name in names):
                missing.append(f"{path.relative_to(ROOT)}: docs/{doc}, {section!r}")
    assert not missing, "no such section:\n" + "\n".join(missing)


def test_every_link_to_a_heading_of_the_docs_lands_on_one() -> None:
    missing = []
    for path in sorted((ROOT / "docs").rglob("*.md")):
        for doc, anchor in ANCHOR_LINK.findall(path.read_text()):
            target = (path.parent / doc).resolve() if doc else path
            if not target.exists() or anchor not in {slug(h) for h in headings(target)}:
                missing.append(f"{path.relative_to(ROOT)}: {doc}#{anchor}")
    assert not missing, "no such heading:\n" + "\n".join(missing)


PRODUCT = ("tabletop", "rules", "bench")


def _module_of(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str) -> bool:
    base = ROOT.joinpath(*name.split("."))
    return base.with_suffix(".py").exists() or (base / "__init__.py").exists()


def private_reaches(path: Path, *, attributes: bool, text: str | None = None) -> Iterator[str]:
    """Where ``path`` takes another module's private name: ``from x import _name``, and (with
    ``attributes``) ``module._name`` on a module of the repository it imported."""
    tree = ast.parse(path.read_text() if text is None else text)
    package = _module_of(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    modules: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            source = ".".join([*base, *([node.module] if node.module else [])])
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    yield f"{path.relative_to(ROOT)}:{node.lineno}: {source}.{alias.name}"
                elif _is_module(f"{source}.{alias.name}"):
                    modules[alias.asname or alias.name] = f"{source}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if _is_module(alias.name):
                    modules[alias.asname or alias.name] = alias.name
    if not attributes:
        return
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
        ):
            yield f"{path.relative_to(ROOT)}:{node.lineno}: {modules[node.value.id]}.{node.attr}"


def test_no_module_takes_another_modules_private_names() -> None:
    """A helper two modules need is public, in the module where it belongs. (Tests may still
    reset a module's private state, ``module._cache.clear()``, but import nothing private.)"""
    found = [
        reach
        for path in text_files()
        if path.suffix == ".py"
        for reach in private_reaches(path, attributes=path.relative_to(ROOT).parts[0] in PRODUCT)
    ]
    assert not found, "make it public where it belongs:\n" + "\n".join(found)


def test_the_private_check_sees_both_spellings() -> None:
    probe = ROOT / "tabletop" / "views" / "probe.py"
    text = "from .room import _join_form\nfrom .. import hub\nhub._rooms\n"
    found = [f.split(": ")[1] for f in private_reaches(probe, attributes=True, text=text)]
    assert found == ["tabletop.views.room._join_form", "tabletop.hub._rooms"]


# Words only a game system speaks: a core module that holds one has taken a system's rules in.
SYSTEM_WORDS = re.compile(r"botch|insight|luck|karma|discord|defense|extended|scene", re.I)
# The chat service that shares a word with a system (Discord).
CHAT_WORDS = {Path("tabletop/webhooks/chat.py")}


def system_words(path: Path, text: str | None = None) -> list[str]:
    lines = (path.read_text() if text is None else text).splitlines()
    return [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for n, line in enumerate(lines, 1)
        if SYSTEM_WORDS.search(line)
    ]


def test_core_modules_speak_no_systems_words() -> None:
    """Each system's words live in its own package (``tabletop/systems/``): the core declares
    hooks, and a system fills them."""
    core = [
        path
        for path in (ROOT / "tabletop").rglob("*.py")
        if "systems" not in path.parts
        and "migrations" not in path.parts
        and path.relative_to(ROOT) not in CHAT_WORDS
    ]
    found = [hit for path in sorted(core) for hit in system_words(path)]
    assert not found, "say it in the system's own module:\n" + "\n".join(found)


def test_the_browsers_core_speaks_no_systems_words() -> None:
    """The pages' core modules and styles name no system: a system's reducer rule, dice captions,
    flag tones, styles and tools are its own module's (``static/tabletop/systems/``), declared
    to the core through the seam (``static/tabletop/seam.js``)."""
    core = [
        path for suffix in ("*.js", "*.css") for path in (ROOT / "static" / "tabletop").glob(suffix)
    ]
    assert len(core) > 10
    found = [hit for path in sorted(core) for hit in system_words(path)]
    engines = re.compile(r"zoria|roll-and-keep|d6-chance|action-dice|discordian", re.I)
    found += [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in sorted(core)
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if engines.search(line)
    ]
    assert not found, "say it in the system's own module:\n" + "\n".join(found)


def test_the_system_words_check_sees_a_word_in_any_case() -> None:
    probe = ROOT / "tabletop" / "services" / "probe.py"
    assert len(system_words(probe, text="x = 1\n# the Discord Die\nLUCK = 2\n")) == 2


# The services' naming rule: a service that changes something is named verb first,
# ``<verb>_<noun>`` (make_roll, end_session, add_webhook); a check that refuses by raising is
# ``check_<what>``; a read is named for what it answers (session_stats, seat_for_token). These
# are the verbs the services speak.
SERVICE_VERBS = {
    "act", "add", "announce", "carry", "change", "check", "clear", "count", "create", "delay",
    "delete", "end", "ensure", "enter", "expire", "forget", "give", "grant", "hold", "join",
    "lock", "make", "pass", "plan", "publish", "record", "remove", "renew", "reveal", "revoke",
    "save", "seat", "send", "set", "spend", "start", "take", "tell", "tie", "update",
    "withhold",
}  # fmt: skip
# Words that say "refuse unless" without the one word the rule gives it.
NOT_CHECK = ("assert_", "do_", "validate_", "verify_", "ensure_valid")
# The frame every change runs in (services/events.py), not a change of its own.
UNIT_OF_WORK = {"change", "unit_of_work"}
CHANGING_CALLS = {"change", "transaction.atomic"}
CHANGING_METHODS = (".create", ".save", ".delete", ".bulk_create", ".get_or_create")


def changes(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether a service changes something itself: it takes the unit of work, opens a change,
    or writes rows (a ``select_for_update`` is a read)."""
    arguments = function.args.args + function.args.kwonlyargs
    if any(a.arg == "uow" for a in arguments):
        return True
    calls = {ast.unparse(c.func) for c in ast.walk(function) if isinstance(c, ast.Call)}
    writes = any(call.endswith(CHANGING_METHODS) or call.endswith(").update") for call in calls)
    return writes or bool(calls & CHANGING_CALLS)


def service_functions() -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    for path in sorted((ROOT / "tabletop" / "services").glob("*.py")):
        for node in ast.parse(path.read_text()).body:
            is_function = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            if is_function and not node.name.startswith("_"):
                yield f"{path.name}: {node.name}", node


def naming_faults(found: Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]) -> list[str]:
    faults = []
    for where, function in found:
        name = function.name
        if name.startswith(NOT_CHECK):
            faults.append(f"{where} (a refusal is named check_...)")
        elif name not in UNIT_OF_WORK and changes(function):
            verb, _, noun = name.partition("_")
            if verb not in SERVICE_VERBS or not noun:
                faults.append(f"{where} (a change is named <verb>_<noun>)")
    return faults


def test_services_follow_one_naming_rule() -> None:
    assert naming_faults(service_functions()) == []


def test_the_naming_rule_sees_a_change_named_otherwise() -> None:
    source = """
def roll_made(uow, seq): ...
def seat_summary(seat): return {"id": seat.pk}
def stats_of(session): Tally.objects.filter(session=session).update(rows=0)
def assert_runs(user): ...
def withhold(uow): ...
def make_roll(*, uow): ...
"""
    found = [(f.name, f) for f in ast.parse(source).body if isinstance(f, ast.FunctionDef)]
    assert naming_faults(iter(found)) == [
        "roll_made (a change is named <verb>_<noun>)",
        "stats_of (a change is named <verb>_<noun>)",
        "assert_runs (a refusal is named check_...)",
        "withhold (a change is named <verb>_<noun>)",
    ]
