"""``<code:code>`` in the table's routes (invites, campaign links, watch links): an address
with anything but a code's characters in its place is no table's, and answers 404 before any
view looks it up (``models/codes.py`` says what codes are made of)."""

from __future__ import annotations

from django.urls import register_converter

from .models.codes import CODE_PATTERN


class CodeConverter:
    regex = CODE_PATTERN

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(CodeConverter, "code")
