"""The table in German: every text the product shows has a German translation (pages, errors,
admin and the browser modules), the compiled catalogues match their sources, the page's
language follows the browser and the switch, and a socket's errors speak the reader's language
with the same codes."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import override_settings
from django.utils import translation

from tabletop.language import modules_catalog, scope_language

from .catalogues import Entry, placeholders, read_mo, read_po

ROOT = Path(__file__).resolve().parents[2]
CATALOGUES = ROOT / "tabletop" / "locale"
# Where the product's texts live (tests, benchmarks and docs show nothing to players).
SOURCES = ("templates", "static", "tabletop", "rules")
GERMAN = "de"

needs_gettext = pytest.mark.gettext


def copy_sources(into: Path) -> Path:
    """The product's sources, without their catalogues, under ``into``."""
    for name in SOURCES:
        shutil.copytree(
            ROOT / name, into / name, ignore=shutil.ignore_patterns("locale", "__pycache__")
        )
    return into


def extract(domain: str, sources: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Entry]:
    """Every translatable text of ``sources`` as ``makemessages`` finds it, in a fresh
    catalogue beside them (the committed ones are not touched)."""
    locale = sources / "locale"
    shutil.rmtree(locale, ignore_errors=True)
    locale.mkdir()
    monkeypatch.chdir(sources)
    with override_settings(LOCALE_PATHS=[locale]):
        call_command("makemessages", locale=[GERMAN], domain=domain, verbosity=0)
    return read_po(locale / GERMAN / "LC_MESSAGES" / f"{domain}.po")


def untranslated(found: dict[str, Entry], catalogue: dict[str, Entry]) -> list[str]:
    """What ``found`` holds that ``catalogue`` does not translate, one line each: where it is
    used and the text."""
    problems = []
    for key, entry in sorted(found.items()):
        where = ", ".join(entry.where[:3]) or "?"
        shown = key.replace("\x04", " | ")
        theirs = catalogue.get(key)
        if theirs is None or theirs.obsolete:
            problems.append(f"  {where}: {shown!r} is not in the catalogue")
        elif "fuzzy" in theirs.flags:
            problems.append(f"  {where}: {shown!r} is marked fuzzy")
        elif not theirs.translations or not all(theirs.translations):
            problems.append(f"  {where}: {shown!r} has no translation")
        else:
            sources = [entry.msgid] + ([entry.plural] if entry.plural else [])
            wanted = sorted(set(p for text in sources for p in placeholders(text)))
            for text in theirs.translations:
                if sorted(set(placeholders(text))) != wanted:
                    problems.append(
                        f"  {where}: {shown!r} is translated as {text!r}, which does not keep "
                        f"its placeholders {wanted}"
                    )
    return problems


@needs_gettext
@pytest.mark.parametrize("domain", ["django", "djangojs"])
def test_every_text_the_product_shows_has_a_german_translation(
    domain: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = extract(domain, copy_sources(tmp_path), monkeypatch)
    assert len(found) > 100, "the extraction found the product's texts"
    source = CATALOGUES / GERMAN / "LC_MESSAGES" / f"{domain}.po"
    problems = untranslated(found, read_po(source))
    assert not problems, (
        f"{len(problems)} text(s) have no German translation in "
        f"{source.relative_to(ROOT)}: run `python manage.py makemessages -l de` "
        f"(and `-d djangojs` for the browser modules), translate, then "
        f"`python manage.py compilemessages` (docs/translations.md):\n" + "\n".join(problems)
    )


@needs_gettext
def test_the_check_names_a_text_left_untranslated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check above can fail: a new text in a template is reported with where it is."""
    sources = copy_sources(tmp_path)
    found = extract("django", sources, monkeypatch)
    page = sources / "templates" / "tabletop" / "home.html"
    page.write_text(page.read_text() + '{% load i18n %}{% translate "A text nobody translated" %}')
    again = extract("django", sources, monkeypatch)
    assert set(again) - set(found) == {"A text nobody translated"}
    problems = untranslated(again, read_po(CATALOGUES / GERMAN / "LC_MESSAGES" / "django.po"))
    line = len(page.read_text().splitlines())
    assert (
        f"  templates/tabletop/home.html:{line}: 'A text nobody translated' is not in the catalogue"
        in problems
    )


@pytest.mark.parametrize("domain", ["django", "djangojs"])
def test_the_compiled_catalogue_is_its_source(domain: str) -> None:
    """The .mo files are kept in the repository (a fresh clone needs no gettext to run): each
    must say exactly what its .po says (`python manage.py compilemessages` after an edit)."""
    folder = CATALOGUES / GERMAN / "LC_MESSAGES"
    source = {
        key: entry.translations
        for key, entry in read_po(folder / f"{domain}.po").items()
        if not entry.obsolete and "fuzzy" not in entry.flags and all(entry.translations)
    }
    compiled = read_mo(folder / f"{domain}.mo")
    assert compiled == source, f"run `python manage.py compilemessages` ({domain}.mo is stale)"


# The modules' calls: _("..."), ngettext("...", "...", n), pgettext("context", "...").
JS_CALL = re.compile(
    r"""(?<![\w.])(?:_|ngettext|pgettext)\(\s*(?:"((?:[^"\\]|\\.)*)"\s*,\s*)?"((?:[^"\\]|\\.)*)\""""
)
JS_ANY_CALL = re.compile(r"(?<![\w.])(?:_|ngettext|pgettext)\(\s*(\S)")


def modules() -> list[Path]:
    """The browser modules that say things (i18n.js, which translates, says nothing itself)."""
    return [p for p in sorted((ROOT / "static").rglob("*.js")) if p.name != "i18n.js"]


def module_keys() -> dict[str, str]:
    """Every catalogue key the browser modules ask for, and the module asking."""
    keys = {}
    for path in modules():
        text = path.read_text()
        for match in JS_CALL.finditer(text):
            first, second = (
                json.loads(f'"{g}"') if g is not None else None for g in match.groups()
            )
            call = text[match.start() : match.start() + 9]
            if call.startswith("pgettext"):
                key = f"{first}\x04{second}"
            else:
                key = first if first is not None else second
            keys[key] = str(path.relative_to(ROOT))
    return keys


def test_every_text_a_browser_module_asks_for_is_in_the_german_page_catalogue() -> None:
    """What the server puts in a German page's #i18n-catalog covers every _(), ngettext() and
    pgettext() of the modules (with no build step, nothing else would catch a miss)."""
    keys = module_keys()
    assert len(keys) > 200
    catalogue = modules_catalog(GERMAN)
    missing = [f"  {where}: {key!r}" for key, where in sorted(keys.items()) if key not in catalogue]
    assert not missing, "no German entry for:\n" + "\n".join(missing)


def test_the_modules_translate_only_written_out_texts() -> None:
    """_(name) cannot be extracted or checked: every call names its text in quotes."""
    calls = [
        f"{path.relative_to(ROOT)}: {match.group(0)}"
        for path in modules()
        for match in JS_ANY_CALL.finditer(path.read_text())
        if match.group(1) != '"'
    ]
    assert calls == []


def test_a_german_browser_gets_german_pages_and_the_switch_goes_back(client) -> None:
    page = client.get("/", HTTP_ACCEPT_LANGUAGE="de-DE,de;q=0.9,en;q=0.5")
    html = page.content.decode()
    assert '<html lang="de">' in html and "An einen Tisch setzen" in html
    assert 'lang="en">English</button>' in html
    catalogue = re.search(r'<script id="i18n-catalog" type="application/json">(.*?)</script>', html)
    assert catalogue and json.loads(catalogue.group(1))["Roll"] == "Würfeln"

    switched = client.post(
        "/i18n/setlang", {"language": "en", "next": "/"}, HTTP_ACCEPT_LANGUAGE="de"
    )
    assert switched.status_code == 302 and switched["Location"] == "/"
    english = client.get("/", HTTP_ACCEPT_LANGUAGE="de").content.decode()
    assert '<html lang="en">' in english and "Sit down at a table" in english
    assert 'lang="de">Deutsch</button>' in english
    # English is the modules' own language: its page catalogue is empty.
    assert '<script id="i18n-catalog" type="application/json">{}</script>' in english


def test_a_socket_speaks_the_language_of_its_cookie_or_its_browser() -> None:
    def scope(headers: list[tuple[bytes, bytes]], cookies: dict[str, str] | None = None) -> dict:
        return {"headers": headers, "cookies": cookies or {}}

    assert scope_language(scope([(b"accept-language", b"de-AT,en;q=0.5")])) == "de"
    assert scope_language(scope([(b"accept-language", b"fr, en;q=0.8")])) == "en"
    assert scope_language(scope([])) == "en"
    chosen = {"django_language": "en"}
    assert scope_language(scope([(b"accept-language", b"de")], chosen)) == "en"
    assert scope_language(scope([], {"django_language": "xx"})) == "en"


def test_a_refusal_keeps_its_code_in_every_language() -> None:
    from tabletop.protocol.wire import decode

    with translation.override("de"):
        german = decode('{"type": "nonsense", "ref": 1}', system="generic", is_gm=False)
    english = decode('{"type": "nonsense", "ref": 1}', system="generic", is_gm=False)
    assert german.code == english.code == "unknown-type"
    assert english.message == "Unknown message type 'nonsense'"
    assert german.message == "Unbekannter Nachrichtentyp 'nonsense'"


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_german_socket_gets_its_refusals_in_german_with_the_same_codes(
    monkeypatch,
) -> None:
    from tabletop import consumers

    from .test_consumer import ORIGIN, connect, make_table, seat_token

    chosen = []

    def counted(scope):
        chosen.append(scope_language(scope))
        return chosen[-1]

    # the language is chosen once a socket, from its handshake, not again for every message
    monkeypatch.setattr(consumers, "scope_language", counted)
    table = await make_table()
    token = await seat_token(table["session"], "Ana")
    german, _hello = await connect(
        table["code"], token=token, headers=[ORIGIN, (b"accept-language", b"de-DE,de;q=0.9")]
    )
    english, _hello = await connect(table["code"], token=token)
    answers = {}
    for name, comm in (("de", german), ("en", english)):
        await comm.send_json_to({"type": "reveal", "seq": 10**9, "ref": "r1"})
        await comm.send_json_to({"type": "nonsense", "ref": "r2"})
        answers[name] = [await comm.receive_json_from(timeout=10) for _ in range(2)]
        await comm.disconnect()
    codes = [[(m["ref"], m["code"]) for m in answers[lang]] for lang in ("de", "en")]
    assert codes[0] == codes[1] == [("r1", "not-found"), ("r2", "unknown-type")]
    assert [m["message"] for m in answers["en"]] == [
        "no roll #1000000000 in this session",
        "Unknown message type 'nonsense'",
    ]
    assert [m["message"] for m in answers["de"]] == [
        "kein Wurf #1000000000 in dieser Sitzung",
        "Unbekannter Nachrichtentyp 'nonsense'",
    ]
    assert chosen == ["de", "en"]


def test_the_list_of_the_systems_words_is_current() -> None:
    """The engines' titles, labels and help texts reach the catalogues through
    tabletop/systems/texts.py, which is generated: a changed field means running
    `python -m tabletop.language`."""
    from tabletop.language import SCHEMA_TEXTS_FILE, schema_texts_source

    kept = SCHEMA_TEXTS_FILE.read_text()
    assert kept == schema_texts_source(), "run `python -m tabletop.language`"


def test_a_systems_fields_are_shown_in_the_readers_language() -> None:
    from rules.engines import get_system
    from tabletop.language import translated_schema

    schema = get_system("generic").schema()
    with translation.override("de"):
        german = translated_schema(schema)
    assert german["title"] == "Würfelnotation"
    notation = german["request"][0]
    assert (notation["name"], notation["label"]) == ("notation", "Würfel")
    assert notation["help"].startswith("z. B. 4d6kh3+2")
    assert translated_schema(schema) == schema, "English is the engines' own"


def test_the_admin_speaks_german_to_a_german_browser(admin_client) -> None:
    index = admin_client.get("/admin/", HTTP_ACCEPT_LANGUAGE="de").content.decode()
    assert "Kampagnen" in index and "Sitzungen" in index
    form = admin_client.get("/admin/tabletop/campaign/add/", HTTP_ACCEPT_LANGUAGE="de")
    html = form.content.decode()
    for label in ("Spielsystem", "Einstellungen", "Kampagnenlink", "Welche Regel-Engine würfelt."):
        assert label in html, label
