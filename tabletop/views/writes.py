"""The budget of the room's write endpoints (sheets, settings, saved rolls), per seat: a count
a second and the bytes of the bodies sent, each with a burst. A saved sheet is checked, kept and
its quick rolls sent to the GM's and the player's screens; without a budget one seat could save
a large sheet many times a second and send more than the GM's socket can carry."""

from __future__ import annotations

import math

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext as _

from ..limits import Buckets
from ..protocol.bodies import BODY_BYTES
from ..services.errors import ServiceError
from .answers import error_answer

_writes = Buckets(0, 0)
_write_bytes = Buckets(0, 0)


def _configure() -> None:
    conf = settings.TABLETOP
    _writes.keep_to(conf["WRITES_PER_SECOND"], conf["WRITES_BURST"])
    _write_bytes.keep_to(conf["WRITE_BYTES_PER_SECOND"], conf["WRITE_BYTES_BURST"])


def _body_bytes(request: HttpRequest, max_bytes: int) -> int:
    # At most what the endpoint reads (a longer body is refused from its length, unread); a
    # body sent without its length counts as the most it could be.
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    return min(length, max_bytes) if length > 0 else max_bytes


def write_refused(
    request: HttpRequest, seat_id: int, *, max_bytes: int = BODY_BYTES
) -> HttpResponse | None:
    """429 with ``Retry-After`` when the seat is over its budget, before its body is read;
    else the write is counted (one its checks refuse later too: it is read and checked) and
    None. ``max_bytes``: the most of a body the endpoint reads."""
    _configure()
    count, size = _writes(seat_id), _write_bytes(seat_id)
    count_wait = count.wait_for()
    if count_wait or not size.has_credit():
        seconds = max(1, math.ceil(min(max(count_wait, size.wait()), 3600)))
        message = _(
            "this seat has saved a lot (sheets, settings, saved rolls) just now; "
            "nothing was changed, try again in %(seconds)d s"
        ) % {"seconds": seconds}
        return error_answer(ServiceError("rate-limited", message), retry_after=seconds)
    count.take()
    size.charge(_body_bytes(request, max_bytes))
    return None
