"""Disk cache of LLM scope predictions, so a re-run is reproducible and costs nothing.

One JSON file per key under `<repo>/.cache/scoping/` (git-ignored). The key is the sha256 of
(instruction, model, prompt version, API-docs digest, demonstrations digest): any change to what
the model would see makes a new key. Writes are atomic (temp file + rename), so a crash or two
concurrent writers never leave a torn file; an unreadable entry counts as a miss.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from kernel.atomic import atomic_write_text
from green_agent.models.scope import ScopeUsage
from kernel.settings import REPO_ROOT

DEFAULT_CACHE_DIR = REPO_ROOT / ".cache" / "scoping"


class CacheEntry(BaseModel):
    """What one cached prediction stores (the raw answer is re-parsed on load)."""

    key: str = Field(description="sha256 hex of the key fields.")
    model: str = Field(description="Model that answered.")
    prompt_version: str = Field(description="Prompt version used.")
    raw_output: str = Field(description="The model's answer text.")
    usage: ScopeUsage = Field(description="Usage of the original call.")


def cache_key(instruction: str, model: str, prompt_version: str, docs_digest: str, demos_digest: str) -> str:
    """The sha256 hex key of one prediction."""
    material = json.dumps([instruction, model, prompt_version, docs_digest, demos_digest], ensure_ascii=False)
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


class PredictionCache:
    """A directory of `<key>.json` files."""

    def __init__(self, directory: Path = DEFAULT_CACHE_DIR) -> None:
        self.directory = Path(directory)

    def path(self, key: str) -> Path:
        return self.directory / f"{key}.json"

    def get(self, key: str) -> CacheEntry | None:
        path = self.path(key)
        if not path.is_file():
            return None
        try:
            entry = CacheEntry.model_validate_json(path.read_text(encoding="utf-8"))
        except (OSError, ValidationError, ValueError):
            return None
        return entry if entry.key == key else None

    def put(self, entry: CacheEntry) -> Path:
        return atomic_write_text(self.path(entry.key), entry.model_dump_json(indent=1))
