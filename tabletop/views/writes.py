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
from ..protocol.bodies import SHEET_BYTES
from ..services.errors import ServiceError
from .answers import error_answer

_writes = Buckets(0, 0)
_write_bytes = Buckets(0, 0)


def _configure() -> None:
    conf = settings.TABLETOP
    for buckets, rate, burst in (
        (_writes, conf["WRITES_PER_SECOND"], conf["WRITES_BURST"]),
        (_write_bytes, conf["WRITE_BYTES_PER_SECOND"], conf["WRITE_BYTES_BURST"]),
    ):
        buckets.keep_to(rate, burst)


def _body_bytes(request: HttpRequest) -> int:
    # At most what a sheet's or settings' body may be: a longer one is refused from its length,
    # unread, and costs no more than the largest that is read.
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0
    return min(max(0, length), SHEET_BYTES)


def write_refused(request: HttpRequest, seat_id: int) -> HttpResponse | None:
    """429 with ``Retry-After`` when the seat is over its budget, before its body is read;
    else the write is counted (a refused one too: it was read and checked) and None."""
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
    size.charge(_body_bytes(request))
    return None
