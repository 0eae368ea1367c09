"""What a webhook is sent: one JSON body that chat services' incoming webhooks accept as it is
(``content`` for Discord, ``text`` for Slack, Mattermost and the like) plus the public event
itself for any other receiver.

Names, labels and titles are the players' and the GM's own text: in the chat fields they are
escaped for each target, so a seat named ``@everyone`` pings nobody and ``[here](https://...)``
is not a link that hides where it goes. ``event`` and ``session`` carry the values as they are,
for a program to escape for wherever it shows them."""

from __future__ import annotations

import json
import re
from typing import Any

from ..models import Event
from ..selectors.events import event_message, for_everyone
from ..selectors.room import session_summary
from ..services.export import event_line
from ..services.watch import without_invite

DISCORD_CHARS = 2000  # Discord refuses longer content
TEXT_CHARS = 4000  # Slack's advice for text; Mattermost and others take at least this much
MAX_BODY_BYTES = 64 * 1024  # past this the event's data is left out (its line stays)
ZWSP = "\u200b"  # a zero-width space: breaks a mention or a link without showing

_DISCORD_MARKDOWN = re.compile(r"([\\*_~`|>\[\]<])")
_MENTION = re.compile(r"@")


def chat_line(event: Event) -> str:
    """The line a chat channel shows for the event, before escaping: the session's title, the
    event's number and its line as the log shows it, a roll's with its character and what it
    was for ("Ana as Kael (Attack): 1d20 (19) + 5 = 24")."""
    message = for_everyone(event_message(event))
    line = event_line(message)
    title = without_invite(session_summary(event.session))["title"]
    return " ".join(f"[{title}] #{event.seq} {line}".split())


def for_discord(text: str) -> str:
    """Discord Markdown: every formatting character escaped with a backslash (``[`` and ``]``,
    so no masked link; ``<``, so no ``<@id>`` mention), and each ``@`` followed by a zero-width
    space (``allowed_mentions`` also says ping nobody)."""
    return _MENTION.sub("@" + ZWSP, _DISCORD_MARKDOWN.sub(r"\\\1", text))


def for_slack(text: str) -> str:
    """Slack's mrkdwn (and Markdown, for Mattermost and the like): ``& < >`` as entities, which
    Slack requires and Markdown shows as the characters, so no ``<!here>``, ``<@U1>`` or
    ``<url|text>``; each ``@`` followed by a zero-width space; ``](`` split so no Markdown link
    hides its address."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MENTION.sub("@" + ZWSP, text).replace("](", "]" + ZWSP + "(")


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def body(event: Event, *, delivery: int) -> bytes:
    """The JSON body posted for ``event`` as delivery ``delivery`` (its id is in the signed body
    too, so a receiver dropping repeats by it can trust it)."""
    line = chat_line(event)
    message = for_everyone(event_message(event))
    payload: dict[str, Any] = {
        "content": _cut(for_discord(line), DISCORD_CHARS),  # Discord
        "allowed_mentions": {"parse": []},  # Discord: nobody is pinged, whatever the text
        "flags": 4,  # Discord: no link previews of what players wrote
        "text": _cut(for_slack(line), TEXT_CHARS),  # Slack, Mattermost, Rocket.Chat, Teams
        "unfurl_links": False,
        "unfurl_media": False,
        "username": "Dice table",
        "delivery": delivery,
        "session": without_invite(session_summary(event.session)),
        "event": message,
    }
    encoded = json.dumps(payload, separators=(",", ":")).encode()
    if len(encoded) > MAX_BODY_BYTES:
        # A roll of very many dice: its line says what it came to; the full record has the rest.
        payload["event"] = {**message, "data": {"too_large": True}}
        encoded = json.dumps(payload, separators=(",", ":")).encode()
    return encoded
