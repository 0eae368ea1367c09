"""``<code:code>`` in the table's routes (invites, campaign links, watch links): an address
with anything but a code's characters in its place is no table's, and answers 404 before any
view looks it up (``models/codes.py`` says what codes are made of)."""

from __future__ import annotations

from django.urls.converters import StringConverter

from .models.codes import CODE_PATTERN


class CodeConverter(StringConverter):
    """Registered as ``code`` by the app's config (``apps.py``)."""

    regex = CODE_PATTERN
