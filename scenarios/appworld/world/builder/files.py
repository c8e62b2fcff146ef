"""Deterministic file writing: UTF-8, fixed JSON layout, trailing newline."""

from __future__ import annotations

import json
import os
from typing import Any


def write_text(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def write_json(path: str, value: Any) -> None:
    """JSON with a fixed layout, so two builds give identical bytes."""
    write_text(path, json.dumps(value, indent=2, ensure_ascii=False) + "\n")
