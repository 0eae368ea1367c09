"""The commands of talk at the table and of the turn order, whatever the table's system: one box
for messages, emotes, whispers and slash-command rolls (``services/chat.py``), the GM's talk
settings, and the initiative tracker (``services/initiative.py``)."""

from __future__ import annotations

from django.utils.translation import gettext_noop

from rules.engines.schema import Field

from ..services.chat import MAX_MESSAGE_CHARS, check_line, send_message, set_talk
from ..services.initiative import (
    act_delayed,
    add_npc,
    clear_order,
    delay_entry,
    pass_turn,
    remove_entry,
    set_turn,
)
from .commands import ID, Command

ENTRY = Field("entry", "int", label="Entry", required=True, help="its id in the turn order", **ID)

TALK: tuple[Command, ...] = (
    Command(
        "chat",
        (
            Field(
                "text",
                "text",
                label="Message",
                required=True,
                max_length=MAX_MESSAGE_CHARS,
                help="what was typed: text with [[inline rolls]], or /me, /r, /roll, /gmr, /w NAME",
            ),
            Field(
                "client_seed",
                "text",
                label="Client seed",
                default="",
                max_length=200,
                help="your seed for the message's rolls (none: the server draws a random one)",
            ),
        ),
        send_message,
        "say something at the table: a chat event (a whisper: seen by its two seats), or a roll",
        precheck=check_line,
    ),
    Command(
        "chat.settings",
        (
            Field("gm_reads_whispers", "bool", label="GM reads players' whispers", nullable=True),
            Field("to_webhooks", "bool", label="Public messages to webhooks", nullable=True),
        ),
        set_talk,
        "change the campaign's talk settings (the room is told)",
        gm_only=True,
        refusal=gettext_noop("only the GM changes the table's talk settings"),
    ),
    Command(
        "turns.add",
        (
            Field("name", "text", label="Name", required=True, max_length=40),
            Field("value", "int", label="Initiative", required=True, min=-999, max=9999),
        ),
        add_npc,
        "put a combatant of the GM's in the turn order with a result",
        gm_only=True,
        refusal=gettext_noop("only the GM adds to the turn order by hand"),
    ),
    Command(
        "turns.remove",
        (ENTRY,),
        remove_entry,
        "take an entry out of the turn order (the GM, or the entry's player)",
    ),
    Command(
        "turns.set",
        (ENTRY,),
        set_turn,
        "give the turn to an entry",
        gm_only=True,
        refusal=gettext_noop("only the GM sets whose turn it is"),
    ),
    Command(
        "turns.next",
        (
            Field(
                "round",
                "bool",
                label="Next round",
                default=False,
                help="start the next round now (the GM)",
            ),
        ),
        pass_turn,
        "end the turn: the next in the order has it; after the last, a new round (the GM)",
    ),
    Command(
        "turns.delay",
        (ENTRY,),
        delay_entry,
        "hold an entry's action: out of the order until it acts (the GM, or its player)",
    ),
    Command(
        "turns.act",
        (ENTRY,),
        act_delayed,
        "a delayed entry acts now, right after whoever had the turn (the GM, or its player)",
    ),
    Command(
        "turns.clear",
        (),
        clear_order,
        "empty the turn order: the fight is over",
        gm_only=True,
        refusal=gettext_noop("only the GM clears the turn order"),
    ),
)
