"""What chat channels are sent: players' text escaped for each target, so nobody is pinged and
no link hides where it goes; the roll's character and what it was for kept; bodies bounded."""

from __future__ import annotations

import json
import re

import pytest

from tabletop.models import Character
from tabletop.services.seats import join_session
from tabletop.webhooks import chat
from tabletop.webhooks.chat import MAX_BODY_BYTES, ZWSP, body, chat_line, for_discord, for_slack

from .commands import rolled

pytestmark = pytest.mark.django_db

LABEL = "[here](https://evil.example) <@123> <!here> @here"


def test_player_text_pings_nobody_and_links_nowhere(live_session):
    seat = join_session(session=live_session, name="@everyone").seat
    roll = rolled(seat_id=seat.pk, request={"notation": "1d20+5"}, label=LABEL)
    sent = json.loads(body(roll, delivery=7))
    discord, slack = sent["content"], sent["text"]
    assert sent["allowed_mentions"] == {"parse": []}
    assert sent["delivery"] == 7
    for text in (discord, slack):
        assert "@everyone" not in text and "@here" not in text
        assert f"@{ZWSP}everyone" in text and f"@{ZWSP}here" in text
        assert re.search(r"(?<!\\)<[@!#]", text) is None  # no Discord or Slack mention
    assert "\\[here\\](https://evil.example)" in discord and f"\\<@{ZWSP}123\\>" in discord
    assert "](" not in slack  # no Markdown link (Discord's is broken by the escaped brackets)
    assert "&lt;!here&gt;" in slack and f"&lt;@{ZWSP}123&gt;" in slack
    # The event itself goes as it is, for a program to escape for wherever it shows it.
    assert sent["event"]["data"]["label"] == LABEL
    assert sent["event"]["actor"]["name"] == "@everyone"


def test_a_rolls_line_keeps_its_character_and_what_it_was_for(live_session):
    seat = join_session(session=live_session, name="Ana").seat
    kael = Character.objects.create(campaign=live_session.campaign, name="Kael")
    seat.characters.add(kael)
    roll = rolled(seat_id=seat.pk, request={"notation": "1d20"}, label="Attack")
    assert chat_line(roll).startswith(f"[Session one] #{roll.seq} Ana (Attack): 1d20 ")
    roll = rolled(seat_id=seat.pk, request={"notation": "1d20"}, character=kael.pk)
    assert chat_line(roll).startswith(f"[Session one] #{roll.seq} Ana as Kael: 1d20 ")


def test_escaping_per_target():
    assert for_discord("**x** _y_ ~z~ `c` ||s|| > q") == (
        "\\*\\*x\\*\\* \\_y\\_ \\~z\\~ \\`c\\` \\|\\|s\\|\\| \\> q"
    )
    assert for_slack("a & b <https://x|y> [t](u)") == f"a &amp; b &lt;https://x|y&gt; [t]{ZWSP}(u)"


def test_a_huge_roll_is_posted_as_its_line_within_the_body_limit(live_session, monkeypatch):
    seat = join_session(session=live_session, name="Ana").seat
    roll = rolled(seat_id=seat.pk, request={"notation": "1000d6"})
    limit = MAX_BODY_BYTES // 4  # the largest roll the table makes is just under the real one
    monkeypatch.setattr(chat, "MAX_BODY_BYTES", limit)
    assert len(json.dumps(roll.data)) > limit
    sent = body(roll, delivery=1)
    assert len(sent) <= limit
    decoded = json.loads(sent)
    assert decoded["event"]["data"] == {"too_large": True}
    assert len(decoded["content"]) <= 2000 and len(decoded["text"]) <= 4000


def test_a_reveals_line_keeps_the_rolls_character_and_what_it_was_for(live_session, gm):
    from tabletop.services.rolls import reveal_roll
    from tabletop.services.seats import gm_seat

    seat = join_session(session=live_session, name="Ana").seat
    kael = Character.objects.create(campaign=live_session.campaign, name="Kael")
    seat.characters.add(kael)
    roll = rolled(
        seat_id=seat.pk,
        request={"notation": "2d6+3"},
        label="Attack",
        character=kael.pk,
        visibility="gm",
    )
    reveal = reveal_roll(seat=gm_seat(session=live_session, user=gm), seq=roll.seq)
    assert chat_line(reveal).startswith(
        f"[Session one] #{reveal.seq} GM reveals roll #{roll.seq} by Ana as Kael (Attack): 2d6 "
    )
