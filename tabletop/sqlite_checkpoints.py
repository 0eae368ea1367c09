"""SQLite's write-ahead log copied back into the database by a thread of its own.

In WAL mode SQLite appends every commit to the log, and whichever commit finds the log past
1,000 pages copies it back into the database (a checkpoint: the pages written, both files
synced) before it returns. On a served table that is every few hundred rolls: the roll whose
commit it is waits 2-7 ms, and every other table's action waits behind it on the database
thread (docs/benchmarks.md).

A serving process on SQLite copies the log here instead, every
``TABLETOP["WAL_CHECKPOINT_SECONDS"]``, in SQLite's PASSIVE mode: it never waits for a writer
or a reader and never holds one up (it copies what no reader still needs), and the sqlite3
module lets go of the interpreter lock while SQLite works. The first commit after a whole copy
begins the log again from its start, so at a table's pace the log never grows to the length at
which a commit would copy it. When commits come faster than a copy takes (a burst of joins), no
copy is ever whole and a commit still copies the log at 1,000 pages, as SQLite does, but only
the frames committed since this thread's last copy: the log's bound is SQLite's own, and no
setting of the connections is changed.

Only a serving process starts the thread (``tabletop/asgi.py``); a management command leaves
the log to SQLite, and so does the test run, which imports the application without serving it
(``TABLETOP_WAL_CHECKPOINT_SECONDS=0``; the servers the tests start copy it back). PostgreSQL is
left alone.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Mapping
from typing import Any, NamedTuple

from django.conf import settings

log = logging.getLogger(__name__)


class Checkpoint(NamedTuple):
    """What one ``PRAGMA wal_checkpoint(PASSIVE)`` answered: whether it was kept from finishing,
    the frames in the log, and how many of them are now in the database."""

    busy: int
    frames: int
    copied: int


def checkpoint(db: sqlite3.Connection) -> Checkpoint:
    """Copy what the log holds into the database, as far as no reader still needs it."""
    busy, frames, copied = db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    return Checkpoint(busy, frames, copied)


class Checkpointer:
    """The process's checkpoint thread for one database file."""

    def __init__(self) -> None:
        self.last: Checkpoint | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self, *, path: str, every: float) -> None:
        """Copy the log of ``path`` back every ``every`` seconds from now on."""
        if self.running:
            return
        self._stop.clear()
        self._thread = threading.Thread(
            target=self._run, args=(path, every), name="sqlite-checkpoints", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self._thread = None

    def _run(self, path: str, every: float) -> None:
        db: sqlite3.Connection | None = None
        while not self._stop.wait(every):
            try:
                if db is None:
                    # (timeout 0: a PASSIVE copy never waits, and neither does opening)
                    db = sqlite3.connect(path, timeout=0, isolation_level=None)
                self.last = checkpoint(db)
            except sqlite3.Error as exc:
                # A file being replaced, a disk full for a moment: try again next time; the
                # commits keep the log within SQLite's own bound meanwhile.
                log.warning("copying %s's log back failed, trying again: %s", path, exc)
                if db is not None:
                    db.close()
                    db = None
        if db is not None:
            db.close()


checkpointer = Checkpointer()


def file_to_checkpoint(database: Mapping[str, Any], every: float) -> str | None:
    """The SQLite file whose log a serving process copies back on its thread: none on
    PostgreSQL, for a database in memory, or with ``every`` 0."""
    name = str(database["NAME"])
    if every <= 0 or database["ENGINE"] != "django.db.backends.sqlite3":
        return None
    return None if name == ":memory:" or name.startswith("file:") else name


def start_checkpoints() -> None:
    """Start the serving process's thread, if its database has a log to copy back."""
    every = settings.TABLETOP["WAL_CHECKPOINT_SECONDS"]
    path = file_to_checkpoint(settings.DATABASES["default"], every)
    if path is not None:
        checkpointer.start(path=path, every=every)
