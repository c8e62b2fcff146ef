"""Where a saved state file and the replay's differ, named by place, never by the replay's value.

A forger who edits a battle's saved state to match the replay of its (forged) call log lacks only what AppWorld
computes itself, such as a row's `record_hash`: a message that printed the replayed line would hand it over, and
the same forgery would re-judge equal on the next run. So `first_difference(name, saved, replayed)` says which
line and which field differ and prints nothing of the replayed side:
- a file one side lacks: which side;
- `model_hashes.json`: the first saved counter (app and model, the saved file's own keys) below the replay's, or
  that the saved counters lack a model the replay changed (`hashes_shortfall`; None: the saved counters cover
  the replay's, see `green_agent.rejudge.replay`);
- a change log (`<app>.jsonl`, one `[sql, params, executemany]` a line): the first line that differs and, in it,
  another statement than the saved one (named by its verb and table), the executemany flag, or the first
  parameter that differs, named by the column its `?` stands for (`column record_hash`; `row k` of an
  executemany), else by its position; a line of other JSON: the first key or item that differs (a key named
  only if the saved line holds it); the same JSON written otherwise; a line that is not JSON: its number only;
- another number of lines: which side has more, from which line.
Names taken from the saved file are cut to `MAX_NAME_CHARS`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from green_agent.rejudge.state import HASHES_FILE

MAX_NAME_CHARS = 60
_STATEMENT = re.compile(r"\s*(INSERT\s+(?:OR\s+\w+\s+)?INTO|UPDATE(?:\s+OR\s+\w+)?|DELETE\s+FROM)\s+[\"`\[]?(\w+)",
                        re.IGNORECASE)
_INSERT_COLUMNS = re.compile(r"\(([^()]*)\)\s*VALUES\s*\(([^()]*)\)", re.IGNORECASE)
_NAMED_BEFORE = re.compile(r"[\"`\[]?([A-Za-z_][\w.]*)[\"`\]]?\s*(?:=|==|!=|<>|<=|>=|<|>|\bLIKE|\bIS(?:\s+NOT)?)\s*$",
                           re.IGNORECASE)
_LOOKBACK = 80
"""Characters before a `?` searched for the column it is compared with (bounded: linear in the statement)."""


def first_difference(name: str, saved: bytes | None, replayed: bytes | None) -> str:
    """Where `saved` (the run's file `name`) and `replayed` (the replay's) first differ (module docstring)."""
    if saved is None or replayed is None:
        return "the saved state has no such file" if saved is None else "the replay has no such file"
    if name == HASHES_FILE:
        return hashes_shortfall(saved, replayed) or "the same counters, written otherwise"
    saved_lines, replayed_lines = saved.splitlines(), replayed.splitlines()
    for number, (a, b) in enumerate(zip(saved_lines, replayed_lines), start=1):
        if a != b:
            return _line_difference(number, a, b)
    if len(saved_lines) == len(replayed_lines):
        return "the same lines, other line endings"
    shorter = min(len(saved_lines), len(replayed_lines))
    who = "the saved state" if len(saved_lines) > len(replayed_lines) else "the replay"
    return f"{who} has {abs(len(saved_lines) - len(replayed_lines))} more line(s), from line {shorter + 1}"


def hashes_shortfall(saved: bytes, replayed: bytes) -> str | None:
    """The first way AppWorld's model-hash counters saved fail to cover the replay's, or None: every model the
    replayed calls changed counts at least as many changes in the saved state."""
    try:
        saved_counts, replayed_counts = json.loads(saved), json.loads(replayed)
    except (ValueError, RecursionError):
        return "the counters cannot be compared (not JSON)"
    if not isinstance(saved_counts, dict) or not isinstance(replayed_counts, dict):
        return "the counters cannot be compared (not a JSON object)"
    for app, models in replayed_counts.items():
        kept = saved_counts.get(app)
        if not isinstance(models, dict):
            return "the replay's counters cannot be compared (not a JSON object per app)"
        if models and not isinstance(kept, dict):
            return "the saved counters lack an app the replay changed"
        for model, count in models.items():
            have = kept.get(model) if isinstance(kept, dict) else None
            if not isinstance(count, int):
                return "the replay's counters cannot be compared (a count that is not a number)"
            if not isinstance(have, int):
                return f"the saved counters of {_name(app)} lack a model the replay changed"
            if have < count:
                return f"the saved count of {_name(app)} {_name(model)} does not cover the replay's"
    return None


def _line_difference(number: int, saved: bytes, replayed: bytes) -> str:
    try:
        a, b = json.loads(saved), json.loads(replayed)
        if _is_change(a) and _is_change(b):
            return _change_difference(number, a, b)
        path = _json_path(a, b)
    except (ValueError, RecursionError):
        return f"line {number} differs"
    return f"line {number}: {path} differs" if path else f"line {number}: the same JSON, written otherwise"


def _is_change(value: Any) -> bool:
    return (isinstance(value, list) and len(value) == 3 and isinstance(value[0], str)
            and isinstance(value[1], (list, dict)) and isinstance(value[2], bool))


def _change_difference(number: int, saved: list, replayed: list) -> str:
    """`line N, UPDATE tasks: column answer differs` and the like: the saved statement's own words only."""
    sql, params, many = saved
    statement = _statement(sql)
    where = f"line {number}, {statement}" if statement else f"line {number}"
    if sql != replayed[0]:
        return f"line {number}: another statement than the saved {statement}" if statement else \
            f"line {number}: another statement"
    if many != replayed[2]:
        return f"{where}: executemany differs"
    if _same(params, replayed[1]):
        return f"{where}: the same change, written otherwise"
    if not many:
        return f"{where}: {_parameter(sql, params, replayed[1])}"
    if not (isinstance(params, list) and isinstance(replayed[1], list)):
        return f"{where}: the rows differ"
    for row, (a, b) in enumerate(zip(params, replayed[1]), start=1):
        if not _same(a, b):
            return f"{where}, row {row}: {_parameter(sql, a, b)}"
    return f"{where}: another number of rows"


def _parameter(sql: str, saved: Any, replayed: Any) -> str:
    """The first parameter of one row that differs, named by its column where the statement says it."""
    if isinstance(saved, dict) and isinstance(replayed, dict):
        for key, value in saved.items():
            if key not in replayed or not _same(value, replayed[key]):
                return f"parameter {_name(key)} differs"
        return "a parameter the saved line lacks"
    if isinstance(saved, list) and isinstance(replayed, list):
        names = _placeholder_names(sql)
        for index, (a, b) in enumerate(zip(saved, replayed)):
            if not _same(a, b):
                named = names[index] if index < len(names) else None
                return f"column {_name(named)} differs" if named else f"parameter {index + 1} differs"
        return "another number of parameters"
    return "the parameters differ"


def _placeholder_names(sql: str) -> list[str | None]:
    """The column each `?` of `sql` stands for (None where the statement does not say), in order."""
    if sql.lstrip()[:6].upper() == "INSERT":
        insert = _INSERT_COLUMNS.search(sql)
        if insert:
            columns = [c.strip().strip("\"`[]") for c in insert.group(1).split(",")]
            values = [v.strip() for v in insert.group(2).split(",")]
            if len(columns) == len(values):
                return [column for column, value in zip(columns, values) if value == "?"]
    names: list[str | None] = []
    for mark in re.finditer(r"\?", sql):
        before = _NAMED_BEFORE.search(sql[max(0, mark.start() - _LOOKBACK):mark.start()])
        names.append(before.group(1) if before else None)
    return names


def _statement(sql: str) -> str | None:
    """`INSERT INTO orders`, `UPDATE tasks`, `DELETE FROM notes` (None: not one of these)."""
    match = _STATEMENT.match(sql)
    return f"{' '.join(match.group(1).upper().split())} {_name(match.group(2))}" if match else None


def _json_path(saved: Any, replayed: Any) -> str | None:
    """The first key or item where two JSON values differ, in the saved value's words (None: equal)."""
    if _same(saved, replayed):
        return None
    if isinstance(saved, dict) and isinstance(replayed, dict):
        for key, value in saved.items():
            if key not in replayed:
                return f'key "{_name(key)}" (the replay lacks it)'
            inner = _json_path(value, replayed[key])
            if inner:
                return f'key "{_name(key)}"' + ("" if inner == "the value" else f" > {inner}")
        return "a key the saved line lacks"
    if isinstance(saved, list) and isinstance(replayed, list):
        for index, (a, b) in enumerate(zip(saved, replayed), start=1):
            inner = _json_path(a, b)
            if inner:
                return f"item {index}" + ("" if inner == "the value" else f" > {inner}")
        return "the number of items"
    return "the value"


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON, type for type (1, 1.0 and true differ; keys in any order)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _name(text: Any) -> str:
    return str(text)[:MAX_NAME_CHARS]
