"""Put the compatibility layer in place in the current virtualenv (run by the Makefile)."""

from __future__ import annotations

import importlib.util
import sysconfig
from pathlib import Path

PTH_NAME = "appworld_green_agentbeats_compat.pth"
PTH_LINE = "import green_agent.agentbeats_compat.hook as _aw_compat; _aw_compat.activate()\n"


def site_packages() -> Path:
    return Path(sysconfig.get_paths()["purelib"])


def backend_link_path() -> Path:
    """Where agentbeats' cli.py looks for the backend (D2): three levels above cli.py, then src/backend."""
    spec = importlib.util.find_spec("agentbeats")
    if spec is None or spec.origin is None:
        raise RuntimeError("agentbeats is not installed in this interpreter; run `make .venv` first")
    return Path(spec.origin).parent.parent.parent / "src" / "backend"


def backend_package_dir() -> Path:
    spec = importlib.util.find_spec("backend")
    if spec is None or spec.origin is None:
        raise RuntimeError("the agentbeats backend package is missing from this interpreter")
    return Path(spec.origin).parent


def install() -> list[str]:
    """Write the `.pth` hook and the D2 symlink; return what was done (idempotent)."""
    done = []
    pth = site_packages() / PTH_NAME
    if not pth.exists() or pth.read_text() != PTH_LINE:
        pth.write_text(PTH_LINE)
        done.append(f"wrote {pth}")
    link = backend_link_path()
    target = backend_package_dir()
    if link.is_symlink() and link.resolve() != target.resolve():
        link.unlink()
    if not link.exists():
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(target, target_is_directory=True)
        done.append(f"linked {link} -> {target}")
    return done


def status() -> dict[str, bool]:
    """Report whether each part of the layer is in place."""
    return {
        "pth_hook": (site_packages() / PTH_NAME).is_file(),
        "backend_link": (backend_link_path() / "mcp" / "mcp_server.py").is_file(),
    }
