"""The AppWorld APIs server and environment server of one world slot, on 127.0.0.1.

Both run in the AppWorld virtualenv through `scenarios/appworld/world/serve.py` (loopback-only
launcher). `AppWorldServers` is a context manager: it starts both, waits until they answer,
and always stops them.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, Field

from green_agent.errors import InfrastructureError
from green_agent.processes import ManagedProcess, port_is_free
from green_agent.settings import SCENARIO_DIR

SERVE_SCRIPT = SCENARIO_DIR / "world" / "serve.py"


class AppWorldServerSpec(BaseModel):
    """Where and how to run one pair of AppWorld servers."""

    appworld_root: Path = Field(description="AppWorld root whose data/ is served.")
    appworld_python: Path = Field(description="Python of the AppWorld virtualenv.")
    env_port: int = Field(description="Environment server port.")
    apis_port: int = Field(description="APIs server port.")
    log_dir: Path = Field(description="Where the servers' stdout/stderr logs go.")

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
        env = {**os.environ, "APPWORLD_ROOT": str(spec.appworld_root)}
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

    def __enter__(self) -> "AppWorldServers":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
