"""One file of a run folder, read as untrusted input: inside the folder, a regular file, its size checked first.

- `inside(root, path)`: `path` with every link followed, if it stays under `root`; a path built from what a
  folder holds (a task id, a row's result path, a link) that leaves it is refused;
- `read_bytes(root, path, kind)`: the file's bytes, or None when there is none; refused when it is not a regular
  file or is larger than `kind.limit` (from the open file's size, before a byte is read; read with the limit);
- `read_model(root, path, kind, model)`: `read_bytes`, then the JSON's depth (`kernel.bounded_json`), then the
  pydantic model: refused with the first problem the model names;
- `read_lines(root, path, kind)`: the JSON objects of a JSONL file, each line within `MAX_LINE_BYTES` and
  `MAX_DEPTH` (a line that is not one is skipped: a torn last line is not an attack).
Every refusal is a `RunFolderError` naming the file and the problem, quoting at most a
few dozen characters of what the folder holds, control characters dropped.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from green_agent.runfolder.limits import MAX_DEPTH, MAX_LINE_BYTES, FileKind
from kernel.bounded_json import json_depth
from kernel.call_log_reader import bounded_lines
from kernel.errors import RunFolderError
from kernel.untrusted import one_line

Model = TypeVar("Model", bound=BaseModel)
UNTRUSTED = "a run folder is untrusted input"


def shown(path: Path) -> str:
    """`path` as a message names it (as built from the folder's path the user gave), control characters dropped."""
    return one_line(path, 300)


def inside(root: Path, path: Path, what: str | None = None) -> Path:
    """`path` resolved, if it is `root` (resolved) or under it; RunFolderError otherwise."""
    base = Path(root).resolve()
    resolved = Path(path).resolve()
    if resolved != base and not resolved.is_relative_to(base):
        raise RunFolderError(f"{what or shown(path)} leaves the run folder {base} (to {one_line(resolved, 120)}): "
                             f"{UNTRUSTED}, so nothing outside it is read")
    return resolved


def _open(resolved: Path, name: str) -> int | None:
    try:
        fd = os.open(resolved, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO planted in the folder must not block us
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise RunFolderError(f"{name} cannot be read ({exc.strerror})") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise RunFolderError(f"{name} is not a regular file: {UNTRUSTED}")
    return fd


def too_large(name: str, size: int, kind: FileKind) -> RunFolderError:
    return RunFolderError(f"{name} is {size:,} bytes, more than the {kind.limit:,} bytes a {kind.name} may have: "
                          f"not a file this Green writes ({UNTRUSTED})")


def read_bytes(root: Path, path: Path, kind: FileKind) -> bytes | None:
    """The bytes of `path` (a file of the folder at `root`), or None if there is no such file (see the docstring)."""
    name = shown(path)
    fd = _open(inside(root, path), name)
    if fd is None:
        return None
    with os.fdopen(fd, "rb") as handle:
        size = os.fstat(fd).st_size
        if size > kind.limit:
            raise too_large(name, size, kind)
        data = handle.read(kind.limit + 1)
    if len(data) > kind.limit:
        raise too_large(name, len(data), kind)
    return data


def _problem(exc: ValidationError) -> str:
    first = exc.errors(include_url=False, include_input=False)[0]
    where = ".".join(str(part) for part in first.get("loc", ())) or "the top level"
    return f"{one_line(where, 80)}: {one_line(first.get('msg', ''), 160)}"


def check_depth(name: str, data: bytes, kind: FileKind) -> None:
    """RunFolderError if the JSON text `data` of file `name` nests deeper than `MAX_DEPTH` (it is not parsed)."""
    depth = json_depth(data)
    if depth > MAX_DEPTH:
        raise RunFolderError(f"{name} nests {depth:,} levels deep, more than the {MAX_DEPTH} a {kind.name} may have "
                             f"({UNTRUSTED})")


def parse_model(name: str, data: bytes, model: type[Model], kind: FileKind) -> Model:
    """`data` (the text of file `name`) as `model`, its depth checked first; RunFolderError with the problem."""
    check_depth(name, data, kind)
    try:
        return model.model_validate_json(data)
    except ValidationError as exc:
        raise RunFolderError(f"{name} is not a valid {kind.name}: {_problem(exc)}") from None


def read_model(root: Path, path: Path, kind: FileKind, model: type[Model]) -> Model | None:
    """The file at `path` as `model`, or None if there is none (see the module docstring)."""
    data = read_bytes(root, path, kind)
    return None if data is None else parse_model(shown(path), data, model, kind)


def read_lines(root: Path, path: Path, kind: FileKind) -> Iterator[dict[str, Any]]:
    """The JSON objects of the JSONL file at `path`, in order (none if there is no such file)."""
    name = shown(path)
    fd = _open(inside(root, path), name)
    if fd is None:
        return
    with os.fdopen(fd, "rb") as handle:
        size = os.fstat(fd).st_size
        if size > kind.limit:
            raise too_large(name, size, kind)
        read = 0
        for line in bounded_lines(handle, MAX_LINE_BYTES):
            read += len(line) if line is not None else MAX_LINE_BYTES
            if read > kind.limit:
                raise too_large(name, read, kind)
            record = _line(line)
            if record is not None:
                yield record


def _line(line: bytes | None) -> dict[str, Any] | None:
    if line is None or not line.strip() or json_depth(line) > MAX_DEPTH:
        return None
    try:
        record = json.loads(line)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None
