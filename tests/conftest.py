"""Shared fixtures. Network use is loopback only; every server a test starts is stopped again.

`appworld_root` is the offline world built by `make world` (`.appworld/`, or `APPWORLD_ROOT`).
`appworld_servers` runs one APIs + environment server pair on free ports for the whole session.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from green_agent.appworld_servers import AppWorldServers, AppWorldServerSpec
from green_agent.processes import free_port
from green_agent.settings import Settings, load_settings


@pytest.fixture(scope="session")
def settings() -> Settings:
    return load_settings()


@pytest.fixture(scope="session")
def appworld_root(settings: Settings) -> Path:
    root = settings.appworld_root
    if not (root / "data" / "tasks").is_dir():
        pytest.fail(f"no offline world at {root}/data: run `make world` (make test does it for you)")
    return root


@pytest.fixture(scope="session")
def appworld_servers(settings: Settings, appworld_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppWorldServers]:
    spec = AppWorldServerSpec(
        appworld_root=appworld_root,
        appworld_python=settings.appworld_python,
        env_port=free_port(),
        apis_port=free_port(),
        log_dir=tmp_path_factory.mktemp("appworld-logs"),
    )
    with AppWorldServers(spec) as servers:
        yield servers
