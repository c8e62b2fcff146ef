"""The AppWorld APIs server and environment server of one world slot, on 127.0.0.1.

Both run in the AppWorld virtualenv through `scenarios/appworld/world/serve.py` (loopback-only
launcher), either forked from the warm fork server (`launch="fork"`, the default: see
`green_agent.runtime.forkserver`) or each as its own fresh process (`launch="exec"`: `world up`,
whose servers outlive this process and are checked by command line). `AppWorldServers` is a
context manager: it starts both, waits until they answer, and always stops them.

Both are guarded by the slot's secret (`kernel.slot_credentials`): `spec.credentials`, or new
ones created (and saved for the slot's other processes) at start and removed at stop.
"""

from __future__ import annotations

import os
from pathlib import Path

from typing import Literal

from pydantic import BaseModel, Field

from green_agent.runtime.forkserver import ForkedProcess
from kernel.errors import InfrastructureError
from green_agent.runtime.processes import ManagedProcess
from kernel.ports import port_is_free
from kernel.settings import SCENARIO_DIR
from kernel.slot_credentials import SlotCredentials, remove_credentials, save_credentials

SERVE_SCRIPT = SCENARIO_DIR / "world" / "serve.py"
GUARD_SECRET_ENV = "APPWORLD_GUARD_SECRET"
"""How an exec'd server gets its guard (environment, never argv); `world/serve.py` reads it."""


class AppWorldServerSpec(BaseModel):
    """Where and how to run one pair of AppWorld servers."""

    appworld_root: Path = Field(description="AppWorld root whose data/ is served.")
    appworld_python: Path = Field(description="Python of the AppWorld virtualenv.")
    env_port: int = Field(description="Environment server port.")
    apis_port: int = Field(description="APIs server port.")
    log_dir: Path = Field(description="Where the servers' stdout/stderr logs go.")
    launch: Literal["fork", "exec"] = Field(default="fork", description="Fork from the warm fork server, or exec.")
    credentials: SlotCredentials | None = Field(default=None, description=(
        "The slot's secrets (already saved by the caller); None: create and save new ones at start."))

    @property
    def env_url(self) -> str:
        return f"http://127.0.0.1:{self.env_port}"

    @property
    def apis_url(self) -> str:
        return f"http://127.0.0.1:{self.apis_port}"


class AppWorldServers:
    """Start both servers of a slot; stop them on exit, whatever happened."""

    def __init__(self, spec: AppWorldServerSpec) -> None:
        self.spec = spec
        self._owns_credentials = spec.credentials is None
        self.credentials = spec.credentials or SlotCredentials()
        guard = self.credentials.guard.get_secret_value()
        if spec.launch == "fork":
            self.apis: ManagedProcess = ForkedProcess(
                f"AppWorld APIs server :{spec.apis_port}", "apis", spec.apis_port,
                spec.log_dir / f"apis-{spec.apis_port}.log", spec.appworld_python, spec.appworld_root, guard)
            self.environment: ManagedProcess = ForkedProcess(
                f"AppWorld environment server :{spec.env_port}", "environment", spec.env_port,
                spec.log_dir / f"environment-{spec.env_port}.log", spec.appworld_python, spec.appworld_root, guard)
            return
        env = {**os.environ, "APPWORLD_ROOT": str(spec.appworld_root), GUARD_SECRET_ENV: guard}
        python = str(spec.appworld_python)
        self.apis = ManagedProcess(
            f"AppWorld APIs server :{spec.apis_port}",
            [python, str(SERVE_SCRIPT), "apis", "--port", str(spec.apis_port)],
            spec.log_dir / f"apis-{spec.apis_port}.log", env=env, cwd=spec.appworld_root,
        )
        self.environment = ManagedProcess(
            f"AppWorld environment server :{spec.env_port}",
            [python, str(SERVE_SCRIPT), "environment", "--port", str(spec.env_port)],
            spec.log_dir / f"environment-{spec.env_port}.log", env=env, cwd=spec.appworld_root,
        )

    def start(self) -> "AppWorldServers":
        if not (self.spec.appworld_root / "data").is_dir():
            raise InfrastructureError(
                f"no AppWorld data under {self.spec.appworld_root}/data: run `appworld-green world build` first"
            )
        if not Path(self.spec.appworld_python).exists():
            raise InfrastructureError(f"AppWorld Python not found at {self.spec.appworld_python}: run `make venvs`")
        for port in (self.spec.apis_port, self.spec.env_port):
            if not port_is_free(port):
                raise InfrastructureError(f"port {port} on 127.0.0.1 is already in use; stop what holds it or pick another slot")
        if self._owns_credentials:
            save_credentials(self.spec.apis_port, self.credentials)
        try:
            self.apis.start()
            self.environment.start()
            self.apis.wait_ready(self.spec.apis_url + "/")
            self.environment.wait_ready(self.spec.env_url + "/")
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        self.environment.stop()
        self.apis.stop()
        if self._owns_credentials:
            remove_credentials(self.spec.apis_port)

    def __enter__(self) -> "AppWorldServers":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
