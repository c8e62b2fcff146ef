"""Repository hygiene: code never names a folder outside the repository.

A test, benchmark or scenario file that names an absolute path such as a temporary folder or a
home directory depends on a machine that had it: on a fresh machine (and in CI there) it is gone.
Tests use `tmp_path` and the built world (`appworld_root`); benchmarks use `bench/common.py`.

Left out on purpose: the task pack (`scenarios/appworld/world/pack/`), whose `/home/<user>/...`
paths are files inside AppWorld's simulated file_system app, not on this machine.
"""

from __future__ import annotations

import re
from pathlib import Path

from kernel.settings import REPO_ROOT

SCANNED = ("tests", "bench", "scenarios")
SUFFIXES = {".py", ".sh", ".toml", ".cfg", ".ini"}
EXEMPT = (Path("scenarios/appworld/world/pack"),)
# A quoted literal that starts at one of these top-level folders (the names are split so this file passes).
OUTSIDE = re.compile(r"""["'](/(?:""" + "|".join(["t" + "mp", "ro" + "ot", "ho" + "me", "wo" + "rk", "mnt", "srv"])
                     + r""")(?:/[^"'\s]*)?)["'/]""")


def outside_paths(text: str) -> list[tuple[int, str]]:
    """(line number, path) of every quoted absolute path outside the repository in `text`."""
    return [(number, match.group(1)) for number, line in enumerate(text.splitlines(), 1)
            for match in OUTSIDE.finditer(line)]


def scanned_files() -> list[Path]:
    files = []
    for top in SCANNED:
        for path in sorted((REPO_ROOT / top).rglob("*")):
            relative = path.relative_to(REPO_ROOT)
            if path.is_file() and path.suffix in SUFFIXES and not any(relative.is_relative_to(e) for e in EXEMPT):
                files.append(path)
    return files


def test_the_detector_finds_outside_paths_and_leaves_repository_relative_ones() -> None:
    tmp, home = "/" + "tmp", "/" + "home"
    sample = (f'WORLD = Path("{tmp}/poc-world")\n'
              f"x = '{home}/someone/.cache'\n"
              f'y = "{tmp}"\n'
              'ok = REPO_ROOT / "scenarios" / "appworld"\n'
              'env = {"PATH": "/usr/bin:/bin"}\n'
              'z = "../../etc/passwd"\n')
    assert outside_paths(sample) == [(1, f"{tmp}/poc-world"), (2, f"{home}/someone/.cache"), (3, tmp)]


def test_no_code_names_an_absolute_path_outside_the_repository() -> None:
    files = scanned_files()
    assert any(p.name == "conftest.py" for p in files) and any(p.parent.name == "bench" for p in files)
    found = [f"{path.relative_to(REPO_ROOT)}:{number}: {literal}" for path in files
             for number, literal in outside_paths(path.read_text(errors="replace"))]
    assert not found, ("code names folders outside the repository (gone on a fresh machine); use tmp_path, "
                       "the `appworld_root` fixture or bench/common.py instead:\n" + "\n".join(found))
