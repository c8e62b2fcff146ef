"""Run the wheel's AgentBeats backend with its database outside site-packages (D12), plus its MCP server.

`python -m green_agent.agentbeats.backend --port 9002 --mcp-port 9001 --data-dir DIR` is
`agentbeats run_backend` with three differences:
- D12: the SQLite file is `DIR/db/data/database.db` instead of `<site-packages>/backend/db/data/`,
  so tests and demos never touch (or depend on) the shared one. The two modules that compute the
  path from `__file__` (`backend.db.storage`, `backend.services.match_storage`) are loaded with
  `__file__` pointing under DIR; their code is the wheel's, unchanged.
- D2: the MCP server is started from the installed package path (no symlink needed).
- D6: the MCP server is our child in our process group; SIGINT/SIGTERM stop both, within
  `GRACEFUL_SHUTDOWN_S` (+ the child's 5 s) even while a browser holds a WebSocket open: uvicorn's
  graceful shutdown otherwise waits for every open connection, and a second SIGTERM does not force it.
- D15: the page's live updates work (`agentbeats_compat/live_updates.py`; the `.pth` hook applies the
  same patch to a stock `agentbeats run_backend`).
Dev login is on (no Supabase); `OPENROUTER_API_KEY` gets a placeholder if unset (D8).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import signal
import subprocess
import sys
from pathlib import Path
from types import FrameType

GRACEFUL_SHUTDOWN_S = 2.0
"""How long uvicorn waits for open connections (the web UI's `/ws/battles` never closes) before cancelling them."""
PATCHED_MODULES = {"backend.db.storage": ("db", "storage.py"),
                   "backend.services.match_storage": ("services", "match_storage.py")}


def load_with_data_dir(data_dir: Path) -> None:
    """Import the two path-computing modules so their database lives under `data_dir`."""
    import backend.db  # noqa: F401 - parent packages first
    import backend.services  # noqa: F401

    for name, (sub, filename) in PATCHED_MODULES.items():
        if name in sys.modules:
            raise RuntimeError(f"{name} was imported before the data dir was set")
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        (data_dir / sub).mkdir(parents=True, exist_ok=True)
        module.__file__ = str(data_dir / sub / filename)  # the wheel derives its DB path from __file__
        sys.modules[name] = module
        spec.loader.exec_module(module)


def mcp_server_path() -> Path:
    spec = importlib.util.find_spec("backend")
    assert spec is not None and spec.origin is not None
    return Path(spec.origin).parent / "mcp" / "mcp_server.py"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m green_agent.agentbeats.backend", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9002, help="backend REST port (default 9002)")
    parser.add_argument("--mcp-port", type=int, default=9001, help="backend MCP (SSE) port (default 9001)")
    parser.add_argument("--data-dir", type=Path, required=True, help="where the backend database lives")
    parser.add_argument("--public-url", help="URL agents use to reach the backend (default http://HOST:PORT)")
    args = parser.parse_args(argv)
    public_url = args.public_url or f"http://{args.host}:{args.port}"
    os.environ["DEV_LOGIN"] = "true"
    os.environ["PUBLIC_BACKEND_URL"] = public_url
    os.environ.setdefault("OPENROUTER_API_KEY", "unused-offline")  # D8: required at import, unused here
    load_with_data_dir(args.data_dir.resolve())
    mcp = subprocess.Popen([sys.executable, str(mcp_server_path()), "--host", args.host, "--mcp_port",
                            str(args.mcp_port), "--backend_url", public_url])

    def stop(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # a background shell may have left SIGINT ignored
    try:
        import uvicorn

        import backend.app
        from backend.app import app

        from green_agent.agentbeats_compat.live_updates import patch_backend_app

        patch_backend_app(backend.app)  # D15 (idempotent: the .pth hook may have done it already)
        uvicorn.run(app, host=args.host, port=args.port, log_level="warning",
                    timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S)
    except KeyboardInterrupt:
        pass
    finally:
        mcp.terminate()
        try:
            mcp.wait(timeout=5)
        except subprocess.TimeoutExpired:
            mcp.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
