"""The README is a front door that must not lie: its commands exist and its links resolve.

Every `appworld-green` command in a fenced shell block (```bash, sh, shell, console) of README.md must name a real subcommand (and
sub-subcommand, e.g. `world build`) of the CLI's parser and only flags that subcommand declares, as
`appworld-green <sub> --help` lists them. Every relative link `[text](path)` must name a file or folder
of the repository. The README stays a front door: at most 220 lines. docs/world.md counts the pack as it is built.
"""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path

import pytest

from green_agent.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
FENCE = re.compile(r"^```(\w*)\s*$")
SHELL_LANGS = {"bash", "sh", "shell", "console"}  # a bare fence is a listing, not commands
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def shell_lines(text: str) -> list[str]:
    """The command lines of the fenced shell blocks: comments dropped, `\\` continuations joined."""
    lines: list[str] = []
    in_shell = False
    lang: str | None = None
    pending = ""
    for raw in text.splitlines():
        fence = FENCE.match(raw.strip())
        if fence:
            if lang is None:
                lang = fence.group(1)
                in_shell = lang in SHELL_LANGS
            else:
                lang, in_shell = None, False
            continue
        if not in_shell:
            continue
        line = pending + raw.strip()
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        pending = ""
        tokens = shlex.split(line, comments=True)
        if tokens:
            lines.append(" ".join(shlex.quote(t) for t in tokens))
    return lines


def green_commands(text: str) -> list[list[str]]:
    """The argument lists (after the program name) of every `appworld-green` command line."""
    commands = []
    for line in shell_lines(text):
        tokens = shlex.split(line)
        if tokens and Path(tokens[0]).name == "appworld-green":
            commands.append(tokens[1:])
    return commands


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _flags(parser: argparse.ArgumentParser) -> dict[str, bool]:
    """Each option string of the parser, and whether it takes a value."""
    return {opt: action.nargs != 0 for action in parser._actions for opt in action.option_strings}


def check_command(args: list[str]) -> list[str]:
    """Problems with one command line: an unknown subcommand or a flag its subcommand lacks."""
    parser = build_parser()
    flags = _flags(parser)
    path = ["appworld-green"]
    problems: list[str] = []
    tokens = iter(args)
    for token in tokens:
        if token.startswith("-"):
            name = token.split("=", 1)[0]
            if name not in flags:
                problems.append(f"{' '.join(path)}: no flag {name}")
            elif flags[name] and "=" not in token:
                next(tokens, None)  # the flag's value
            continue
        subs = _subparsers(parser)
        if not subs:
            continue  # a positional argument of the subcommand
        if token not in subs:
            problems.append(f"{' '.join(path)}: no subcommand {token!r} (has {', '.join(sorted(subs))})")
            break
        parser = subs[token]
        flags = _flags(parser)
        path.append(token)
    if len(path) == 1:
        problems.append("appworld-green with no subcommand")
    return problems


def test_readme_commands_name_real_subcommands_and_flags():
    commands = green_commands(README.read_text(encoding="utf-8"))
    assert len(commands) >= 4, "the README's tour lost its commands"
    problems = [p for args in commands for p in check_command(args)]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("line, problem", [
    ("appworld-green battel --task-id 1 --blue noop", "no subcommand 'battel'"),
    ("appworld-green battle --task-id 1 --blue noop --wokers 2", "no flag --wokers"),
    ("appworld-green world biuld", "no subcommand 'biuld'"),
    ("appworld-green eval --split dev --blue reference --executor=ray --ray-adress x", "no flag --ray-adress"),
])
def test_check_catches_a_wrong_command(line, problem):
    [args] = green_commands(f"```bash\n{line}   # a comment\n```\n")
    assert any(problem in p for p in check_command(args)), check_command(args)


def test_check_accepts_nested_subcommands_and_continuations():
    text = "```bash\nappworld-green world up --slots 2 \\\n  --foreground\nappworld-green --env-file .env report runs/x\n```\n"
    commands = green_commands(text)
    assert commands == [["world", "up", "--slots", "2", "--foreground"], ["--env-file", ".env", "report", "runs/x"]]
    assert [check_command(c) for c in commands] == [[], []]


def relative_links(text: str) -> list[str]:
    """Link targets that are paths in the repository (not URLs, not in-page anchors)."""
    targets = []
    for target in LINK.findall(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue
        targets.append(target.split("#", 1)[0])
    return targets


def test_readme_links_resolve():
    links = relative_links(README.read_text(encoding="utf-8"))
    assert "docs/outcomes.md" in links, "the README's index of docs/ is gone"
    missing = [link for link in links if not (ROOT / link).exists()]
    assert not missing, f"README.md links to files that do not exist: {missing}"


def test_docs_links_resolve():
    problems = []
    for doc in sorted((ROOT / "docs").glob("*.md")):
        for link in relative_links(doc.read_text(encoding="utf-8")):
            if not (doc.parent / link).exists():
                problems.append(f"{doc.name}: {link}")
    assert not problems, problems


def test_readme_is_a_front_door():
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 220


def test_the_world_doc_counts_the_pack_as_built(appworld_root: Path) -> None:
    """docs/world.md once said 10 scenarios / 30 tasks while `world build` built 15 / 45."""
    from kernel.world_data import WorldData

    world = WorldData(appworld_root)
    splits = {name: world.split(name) for name in ("train", "dev", "test")}
    tasks = [task for ids in splits.values() for task in ids]
    scenarios = {task.split("_")[0] for task in tasks}
    text = " ".join((ROOT / "docs" / "world.md").read_text(encoding="utf-8").split())
    counts = ", ".join(f"{name} {len(ids)}" for name, ids in splits.items())
    assert f"{len(scenarios)} scenarios x 3 variants = {len(tasks)} tasks ({counts})" in text
    for name, ids in splits.items():
        assert f"`{name}` ({len({t.split('_')[0] for t in ids})} scenarios" in text, name
