"""What importing some modules costs a fresh interpreter: `python bench/import_probe.py MODULE ...` imports them,
collects, and prints the process's anonymous memory in MiB (its heap and private data, no file pages).

Standard library only, so the figure holds nothing but what the named modules bring (`bench_world.py`'s
`gateway_import_share`: what a warm parent forking the gateways could share with each of them)."""

from __future__ import annotations

import gc
import importlib
import sys


def anonymous_mib(pid: int | str = "self") -> float:
    """Anonymous memory (MiB) of `pid` from /proc/PID/smaps_rollup."""
    with open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as rollup:
        for line in rollup:
            if line.startswith("Anonymous:"):
                return round(int(line.split()[1]) / 1024, 1)
    raise ValueError(f"no Anonymous line in /proc/{pid}/smaps_rollup")


def main(modules: list[str]) -> int:
    for name in modules:
        importlib.import_module(name)
    gc.collect()
    print(anonymous_mib())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
