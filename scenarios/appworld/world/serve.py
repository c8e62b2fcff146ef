"""Start an AppWorld server bound to 127.0.0.1 (runs in the AppWorld virtualenv).

`appworld serve apis|environment` hard-code host 0.0.0.0; this launcher does what their `run()`
does but binds loopback only. `APPWORLD_ROOT` must name the root whose `data/` is served.

Usage: python serve.py {apis,environment} --port PORT
"""

from __future__ import annotations

import argparse
import json
import os
import sys


def _share_source_db_connections_across_threads() -> None:
    """Work around an AppWorld 0.1.3 bug in the APIs server.

    `get_direct_cached_sqlite3_connection` caches one sqlite3 connection per source DB, created with
    the default `check_same_thread=True`. FastAPI runs the sync `/dbs` handler on a thread pool, so
    the second `/initialize` of the same task (batch trials, a repeated battle) lands on another
    thread and fails with "SQLite objects created in a thread can only be used in that same
    thread". The connections are only read from (as a backup source), so sharing them is safe.
    """
    import sqlite3

    from appworld.apps import model_lib

    def get_direct_sqlite3_connection(db_app_path: str) -> sqlite3.Connection:
        connection = sqlite3.connect(db_app_path, check_same_thread=False)
        connection.execute("PRAGMA mmap_size = 268435456")  # as AppWorld does
        return connection

    model_lib.get_direct_sqlite3_connection = get_direct_sqlite3_connection


def serve_apis(port: int) -> None:
    import uvicorn
    from appworld.apps import build_main_app
    from appworld.apps.model_lib import get_db_home_path
    from appworld.common.constants import DEFAULT_SYSTEM_DATETIME

    # Same start-up contract as appworld.serve.apis.run(): load base DBs into memory on start.
    os.environ["LOAD_ON_STARTUP"] = "true"
    os.environ["APPWORLD_DB_ARGS"] = json.dumps(
        {
            "to_db_home_path": get_db_home_path(storage_type="memory", type="base"),
            "from_db_home_path": get_db_home_path(storage_type="disk", type="base"),
            "create": True,
        }
    )
    os.environ["APPWORLD_DATE_TIME"] = DEFAULT_SYSTEM_DATETIME.isoformat()
    _share_source_db_connections_across_threads()
    uvicorn.run(build_main_app(), host="127.0.0.1", port=port, log_level="warning")


def serve_environment(port: int) -> None:
    import uvicorn
    from appworld.serve.environment import app

    _import_every_app_api()
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def _import_every_app_api() -> None:
    """Do the env server's one-time import work now, at start-up, instead of in the first /initialize.

    AppWorld imports all 12 apps' API modules (about 8 CPU-seconds) lazily when the first world is
    created. Done here, it overlaps with the APIs server loading and the slot is ready only when it
    is finished, so the first battle's setup no longer carries it (and no deadline is spent on it).
    """
    from appworld.apps import get_all_apps
    from appworld.common.utils import get_name_to_apis

    for app_name in get_all_apps():
        get_name_to_apis(app_name)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("server", choices=["apis", "environment"])
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    if not os.environ.get("APPWORLD_ROOT"):
        print("APPWORLD_ROOT must be set to the AppWorld root to serve", file=sys.stderr)
        return 2
    if not os.path.isdir(os.path.join(os.environ["APPWORLD_ROOT"], "data")):
        print(f"no AppWorld data under {os.environ['APPWORLD_ROOT']}/data: run `appworld-green world build`", file=sys.stderr)
        return 2
    (serve_apis if args.server == "apis" else serve_environment)(args.port)
    _exit_without_finalizing()
    return 0


def _exit_without_finalizing() -> None:
    """Leave as soon as uvicorn has shut down: nothing here needs saving at exit (AppWorld writes a
    world's state only when asked, through /save_logs and /close), and letting the interpreter tear
    down AppWorld's in-memory DBs and thousands of modules took 3-5 s per server, which every battle
    run, eval and test paid at slot shutdown."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
