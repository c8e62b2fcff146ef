"""What the by-value secret tests share: an agent's script that reads the supervisor's account passwords and an
access token and prints them bare, and the scan of a run folder for every value it saw.

The agent under test is hostile: it prints what it read as bare values (not under a `password` key), so only
the referee's knowledge of the values can keep them out of the files it writes. `LEAK_CODE` is code mode's
script (one `execute`); `seen_in_output` reads back the values its output printed. `assert_absent` looks for
each value in every file under a folder, as written and in the encodings a writer would give it (JSON-escaped,
ASCII or not, HTML-escaped), and names each file that holds one.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

LEAK_CODE = (
    "profile = apis.supervisor.show_profile()\n"
    "accounts = {a['account_name']: a['password'] for a in apis.supervisor.show_account_passwords()}\n"
    "token = apis.simple_note.login(username=profile['email'], password=accounts['simple_note'])['access_token']\n"
    "print(token)\n"
    "for password in accounts.values():\n"
    "    print(password)\n"
    "print(accounts)\n")
"""Prints the token, then each password on a line of its own, then the accounts as a Python dict (no key names
a credential there: the account names are the keys)."""


def seen_in_output(output: str) -> list[str]:
    """The token and the passwords `LEAK_CODE` printed, one a line, before the dict (which starts with `{`)."""
    values = []
    for line in (line.strip() for line in output.splitlines()):
        if line.startswith("{"):
            break
        if line:
            values.append(line)
    return values


def encodings(value: str) -> set[str]:
    """`value` as a writer may have written it."""
    escaped = {json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]}
    return {value, html.escape(value), *escaped, *(json.dumps(e)[1:-1] for e in escaped)}


def files_under(folder: Path) -> dict[str, str]:
    """Every file under `folder`, as text (decoded leniently)."""
    return {str(p): p.read_bytes().decode("utf-8", "replace") for p in sorted(Path(folder).rglob("*")) if p.is_file()}


def found(texts: dict[str, Any], values: list[str]) -> list[str]:
    """`file: value...` for each value (in any of its encodings) found in a text."""
    return [f"{where}: {value[:8]}..." for where, text in texts.items() for value in values
            if any(form in text for form in encodings(value))]


def assert_absent(values: list[str], *folders: Path) -> int:
    """No value in any file under `folders`; returns the number of files read (so a test can see it read some)."""
    assert values and all(len(v) >= 8 for v in values), values
    texts = {k: v for folder in folders for k, v in files_under(folder).items()}
    assert found(texts, values) == [], found(texts, values)[:20]
    return len(texts)
