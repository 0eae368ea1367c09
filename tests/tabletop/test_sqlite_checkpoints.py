"""The write-ahead log copied back on a thread of its own (tabletop/sqlite_checkpoints.py): at a
table's pace the log begins again before any commit has to copy it, and a thread that cannot
open its database keeps trying."""

from __future__ import annotations

import logging
import sqlite3
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.test import override_settings

from tabletop.sqlite_checkpoints import (
    Checkpointer,
    checkpointer,
    file_to_checkpoint,
    start_checkpoints,
)

ROW = "x" * 4000  # a page of the log, and a little more, a commit
FRAME = 4096 + 24  # a page of the log and its header


def _wal_file(path: Path) -> sqlite3.Connection:
    """A connection set up as the table's SQLite is (settings.py), in autocommit."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("CREATE TABLE IF NOT EXISTS rows (id INTEGER PRIMARY KEY, data TEXT)")
    return db


def _commit_rows(db: sqlite3.Connection, count: int) -> None:
    for _ in range(count):
        db.execute("INSERT INTO rows (data) VALUES (?)", (ROW,))


def _log_bytes(path: Path) -> int:
    return (path.parent / f"{path.name}-wal").stat().st_size


def _longest_log_at_a_tables_pace(path: Path, db: sqlite3.Connection) -> int:
    """400 commits, a few milliseconds apart (about 1,000 frames: where a commit of SQLite's
    copies the log back); the log file's size as it grew."""
    longest = 0
    for _ in range(400):
        _commit_rows(db, 1)
        longest = max(longest, _log_bytes(path))
        time.sleep(0.004)
    return longest


def test_at_a_tables_pace_the_log_begins_again_before_a_commit_copies_it(tmp_path):
    # Begun again before it is as long as a commit copies it at (SQLite's 1,000 frames, which
    # it reaches alone: below). Typically 120-270 frames at the longest, 390 on a busy machine;
    # a machine that leaves the thread without a core for the whole run (1,002 frames once, in
    # a suite's round on two busy cores) is given two more runs, each in a database of its own.
    runs = []
    for run in range(3):
        path = tmp_path / f"table-{run}.sqlite3"
        db = _wal_file(path)
        thread = Checkpointer()
        thread.start(path=str(path), every=0.02)
        try:
            runs.append(_longest_log_at_a_tables_pace(path, db))
        finally:
            thread.stop()
        assert thread.last is not None and thread.last.busy == 0
        (count,) = db.execute("SELECT count(*) FROM rows").fetchone()
        assert count == 400
        if runs[-1] < 1000 * FRAME:
            break
    assert runs[-1] < 1000 * FRAME, [size // FRAME for size in runs]


def test_without_the_thread_a_commit_copies_the_log_at_a_thousand_frames(tmp_path):
    """What the thread spares the commits (the test above, without its thread)."""
    path = tmp_path / "table.sqlite3"
    db = _wal_file(path)
    assert _longest_log_at_a_tables_pace(path, db) >= 1000 * FRAME


def test_the_thread_copies_the_log_back_and_the_next_commit_begins_it_again(tmp_path):
    path = tmp_path / "table.sqlite3"
    db = _wal_file(path)
    db.execute("PRAGMA wal_autocheckpoint=0")  # (only the thread copies here)
    _commit_rows(db, 1200)
    thread = Checkpointer()
    thread.start(path=str(path), every=0.01)
    try:
        deadline = time.monotonic() + 30
        while (thread.last is None or thread.last.copied < 1200) and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        thread.stop()
    assert thread.last is not None
    assert thread.last.busy == 0 and thread.last.copied == thread.last.frames >= 1200
    _commit_rows(db, 3)
    (_, frames, _) = db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    assert frames < 20  # begun again, not appended to the 1,200
    (count,) = db.execute("SELECT count(*) FROM rows").fetchone()
    assert count == 1203


def test_a_thread_that_cannot_open_its_database_keeps_trying(tmp_path, caplog):
    thread = Checkpointer()
    with caplog.at_level(logging.WARNING, logger="tabletop.sqlite_checkpoints"):
        thread.start(path=str(tmp_path / "no such folder" / "db.sqlite3"), every=0.01)
        try:
            deadline = time.monotonic() + 30
            while len(caplog.records) < 3 and time.monotonic() < deadline:
                time.sleep(0.01)
            assert thread.running
        finally:
            thread.stop()
    assert len(caplog.records) >= 3
    assert "trying again" in caplog.records[0].getMessage()
    assert not thread.running


@pytest.mark.parametrize(
    "database, every",
    [
        ({"ENGINE": "django.db.backends.sqlite3", "NAME": "/srv/table/db.sqlite3"}, 0.0),
        ({"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}, 1.0),
        ({"ENGINE": "django.db.backends.sqlite3", "NAME": "file:memorydb?mode=memory"}, 1.0),
        ({"ENGINE": "django.db.backends.postgresql", "NAME": "table"}, 1.0),
    ],
)
def test_no_thread_where_there_is_no_log_to_copy_back(database, every):
    assert file_to_checkpoint(database, every) is None


def test_a_serving_process_on_an_sqlite_file_copies_that_files_log():
    database = {"ENGINE": "django.db.backends.sqlite3", "NAME": Path("/srv/table/db.sqlite3")}
    assert file_to_checkpoint(database, 1.0) == "/srv/table/db.sqlite3"


def test_the_serving_process_starts_the_thread_for_its_database(monkeypatch):
    started = []
    monkeypatch.setattr(checkpointer, "start", lambda **kwargs: started.append(kwargs))
    with override_settings(TABLETOP={**settings.TABLETOP, "WAL_CHECKPOINT_SECONDS": 2.0}):
        start_checkpoints()
    database = settings.DATABASES["default"]
    if database["ENGINE"].endswith("sqlite3"):
        assert started == [{"path": str(database["NAME"]), "every": 2.0}]
    else:
        assert started == []
