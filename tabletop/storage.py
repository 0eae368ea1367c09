"""Files the table keeps: static files in production (hashed names for caching, also inside ES
module imports) and the records of ended sessions."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import IO, TYPE_CHECKING

from whitenoise.storage import CompressedManifestStaticFilesStorage

if TYPE_CHECKING:  # (the static files' storage is made before the models are ready)
    from .models import GameSession


class StaticFilesStorage(CompressedManifestStaticFilesStorage):
    # The room page is small ES modules importing each other; rewrite those imports to the
    # hashed names too, so browsers never mix an old module with a new one.
    support_js_module_import_aggregation = True


class KeptRecords:
    """Records of ended sessions, made once and kept as files under ``root``: an ended session
    never changes, so its export is the same for every later download by the same viewer.
    One file per session, viewer and format; a file appears whole or not at all (it is
    written beside its place and renamed)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def folder(self, session: GameSession) -> Path:
        """A session's records: by its id and its commitment, which no other session shares (a
        database made afresh hands out the same ids again, and the folder would serve the old
        session's records for the new one)."""
        return self.root / f"{session.pk}-{(session.commitment or '')[:16]}"

    def path(self, session: GameSession, viewer: str, fmt: str) -> Path:
        return self.folder(session) / f"{viewer}.{fmt}"

    def writer(self, path: Path) -> IO[bytes]:
        """A file to write ``path`` into; ``keep`` makes it ``path``, ``forget`` drops it."""
        path.parent.mkdir(parents=True, exist_ok=True)
        return tempfile.NamedTemporaryFile(dir=path.parent, suffix=".part", delete=False)

    @staticmethod
    def keep(handle: IO[bytes], path: Path) -> None:
        handle.close()
        os.replace(handle.name, path)

    @staticmethod
    def forget(handle: IO[bytes]) -> None:
        handle.close()
        Path(handle.name).unlink(missing_ok=True)
