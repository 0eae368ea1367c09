from .campaigns import Campaign, Character, CharacterResource
from .events import Event, Visibility
from .sessions import GameSession, Seat, SeatRole, SessionStatus

__all__ = [
    "Campaign",
    "Character",
    "CharacterResource",
    "Event",
    "GameSession",
    "Seat",
    "SeatRole",
    "SessionStatus",
    "Visibility",
]
