"""The reader's language: for pages (Django's LocaleMiddleware picks it), for sockets (the same
choice, made from the handshake's cookie and Accept-Language header), and the browser modules'
catalogue, which every page carries as JSON (the modules have no build step and the pages no
inline script)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from django.conf import settings
from django.http import HttpRequest
from django.utils import translation
from django.utils.translation import trans_real
from django.views.i18n import JavaScriptCatalog

from rules.engines import get_system, system_ids

# The generated list of the systems' own words, kept with the systems (their words live there):
# ``python -m tabletop.language`` writes it, and a test checks that it is current.
SCHEMA_TEXTS_FILE = Path(__file__).parent / "systems" / "texts.py"


@functools.lru_cache(maxsize=16)
def modules_catalog(language: str) -> dict[str, Any]:
    """The browser modules' translations (the ``djangojs`` domain): English msgid -> text, or a
    list of plural forms. English, the modules' own language, needs none."""
    if language == settings.LANGUAGE_CODE:
        return {}
    catalog = JavaScriptCatalog(domain="djangojs")
    catalog.translation = trans_real.DjangoTranslation(language, domain="djangojs")
    return dict(catalog.get_catalog())


def browser_catalog(request: HttpRequest) -> dict[str, Any]:
    """Template context: ``browser_catalog`` for base.html's ``#i18n-catalog``."""
    return {"browser_catalog": modules_catalog(translation.get_language() or "en")}


def scope_language(scope: Mapping[str, Any]) -> str:
    """A socket's language, chosen as LocaleMiddleware chooses a page's: the switch's cookie,
    else the best of the browser's Accept-Language, else the default."""
    cookie = scope.get("cookies", {}).get(settings.LANGUAGE_COOKIE_NAME)
    if cookie:
        try:
            return translation.get_supported_language_variant(cookie)
        except LookupError:
            pass
    headers = dict(scope.get("headers", []))
    accept = headers.get(b"accept-language", b"").decode("latin-1")
    for code, _quality in trans_real.parse_accept_lang_header(accept):
        if code == "*":
            break
        try:
            return translation.get_supported_language_variant(code)
        except LookupError:
            continue
    return settings.LANGUAGE_CODE


# -- the systems' words (titles, field labels and help texts come from the pure engines) --------

_FIELD_TEXTS = ("label", "help")
_SCHEMA_PARTS = ("request", "sheet", "settings", "resources")


def schema_texts() -> list[str]:
    """Every title, summary, label and help text the systems' schemas show, in order, once."""
    texts: dict[str, None] = {}
    for system_id in system_ids():
        schema = get_system(system_id).schema()
        for key in ("title", "summary"):
            if schema.get(key):
                texts[schema[key]] = None
        for part in _SCHEMA_PARTS:
            for spec in schema.get(part) or []:
                for key in _FIELD_TEXTS:
                    if spec.get(key):
                        texts[spec[key]] = None
    return list(texts)


def schema_texts_source() -> str:
    """tabletop/systems/texts.py as it should read: each text marked for ``makemessages``."""
    lines = [
        '"""The game systems\' words, for the translation catalogues (generated: run',
        "``python -m tabletop.language`` after changing a system's fields; a test checks it).\n",
        "The engines are pure Python and name their fields in English; the pages show them",
        'translated by ``tabletop.language.translated_schema``."""',
        "",
        "# ruff: noqa: E501",
        "from django.utils.translation import gettext_noop",
        "",
        "# fmt: off",
        "TEXTS = (",
        *(line for text in schema_texts() for line in _marked(text)),
        ")",
        "# fmt: on",
        "",
    ]
    return "\n".join(lines)


def _marked(text: str) -> list[str]:
    # A "%" here is a percent sign, not a placeholder: said so, or xgettext guesses otherwise.
    said = ["    # xgettext:no-python-format"] if "%" in text else []
    return [*said, f"    gettext_noop({text!r}),"]


def translated_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A system's schema (or part of one) with its words in the reader's language; names,
    types, choices and defaults stay as the protocol has them."""

    def field(spec: Mapping[str, Any]) -> dict[str, Any]:
        return {
            k: translation.gettext(v) if k in _FIELD_TEXTS and v else v for k, v in spec.items()
        }

    out = dict(schema)
    for key in ("title", "summary"):
        if out.get(key):
            out[key] = translation.gettext(out[key])
    for part in _SCHEMA_PARTS:
        if isinstance(out.get(part), list):
            out[part] = [field(spec) for spec in out[part]]
    return out


if __name__ == "__main__":
    import django

    django.setup()
    SCHEMA_TEXTS_FILE.write_text(schema_texts_source())
