"""The one atomic file writer: a temporary file in the target's directory, then a rename.

A reader never sees half a file, and a crash leaves at most a stray `.name-*.tmp`. The temporary
file comes from `mkstemp`, so it is 0600 from its first byte (slot credentials rely on that).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def atomic_write_text(path: Path, text: str) -> Path:
    """Write `text` to `path` (parents created) via a temporary file in the same directory and a rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
