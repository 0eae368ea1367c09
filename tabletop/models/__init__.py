from .campaigns import Campaign, Character, CharacterResource, Player
from .events import ROLL_VISIBILITIES, Event, Visibility
from .saved import SavedRoll
from .sessions import GameSession, Seat, SeatRole, SessionStatus, status_word
from .watch import WatchLink
from .webhooks import DeliveryStatus, Webhook, WebhookCursor, WebhookDelivery

__all__ = [
    "ROLL_VISIBILITIES",
    "Campaign",
    "Character",
    "CharacterResource",
    "DeliveryStatus",
    "Event",
    "GameSession",
    "Player",
    "SavedRoll",
    "Seat",
    "SeatRole",
    "SessionStatus",
    "Visibility",
    "WatchLink",
    "Webhook",
    "WebhookCursor",
    "WebhookDelivery",
    "status_word",
]
