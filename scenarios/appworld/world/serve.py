"""Start AppWorld servers bound to 127.0.0.1 (runs in the AppWorld virtualenv).

`appworld serve apis|environment` hard-code host 0.0.0.0; this launcher does what their `run()`
does but binds loopback only. `APPWORLD_ROOT` must name the root whose `data/` is served.

Usage: python serve.py {apis,environment} --port PORT      one server in this process
       python serve.py forkserver                          many servers, forked from one warm process

Every server is guarded (`GuardedApp`): a request is served only when it carries the slot's secret,
in the `X-AppWorld-Guard` header (the Green and the gateway) or as a leading path segment
`/_guard/<secret>` (the env server's own calls to the APIs server, which go to the `remote_apis_url`
the Green gives it at `/initialize`); anything else gets a bare 404, so the agent under test cannot
use AppWorld's servers with known ports and paths alone. The secret never travels in argv: an exec'd
server reads it from `APPWORLD_GUARD_SECRET`, a forked one from its fork request (a pipe).

Fork server protocol (line-delimited JSON over stdin/stdout; the Green's side is
`green_agent.runtime.forkserver`): it imports AppWorld once (about 10 CPU-seconds: both servers
import all 12 apps' API modules), prints `{"ready": true, "pid": P}`, then for every request line
`{"server": "apis"|"environment", "port": N, "log_path": PATH, "guard": SECRET}` forks a child that becomes that
server (own session, stdout/stderr appended to PATH) and answers `{"pid": CHILD}` or
`{"error": TEXT}`. A child costs about 0.3 CPU-seconds instead of a whole start-up, and shares the
imported code's memory pages with its siblings; to keep them shared, the fork server imports with the
garbage collector off and freezes what it imported (`gc.freeze`) before it forks, so a child's collections
never write to (and so copy) a page of the parent's objects. The fork server ignores SIGINT (a terminal's Ctrl-C
reaches its owner, which stops the children it asked for) and exits when stdin closes; children
outlive it (their owner stops them by process group). Nothing in it runs threads or opens a database
before forking: the APIs server loads its DBs in its lifespan, the env server opens worlds on request.
"""

from __future__ import annotations

import argparse
import gc
import hmac
import json
import os
import signal
import sys

GUARD_HEADER = b"x-appworld-guard"
GUARD_PATH_PREFIX = "/_guard/"
GUARD_SECRET_ENV = "APPWORLD_GUARD_SECRET"
MIN_GUARD_SECRET_LENGTH = 32


class GuardedApp:
    """ASGI wrapper: pass a request to `app` only when it proves the slot's secret (module docstring).

    A path-prefixed request is passed on with the prefix removed, so AppWorld's routes see their own
    paths. Refusals are a bare 404 with no body detail: nothing tells a prober what is behind the port.
    Lifespan events pass through (the APIs server loads its DBs there).
    """

    def __init__(self, app, secret: str) -> None:  # noqa: ANN001
        if len(secret) < MIN_GUARD_SECRET_LENGTH:
            raise ValueError(f"the guard secret must have at least {MIN_GUARD_SECRET_LENGTH} characters")
        self.app = app
        self.secret = secret.encode()
        self.prefix = GUARD_PATH_PREFIX + secret

    async def __call__(self, scope, receive, send) -> None:  # noqa: ANN001
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        headers = dict(scope.get("headers") or [])
        if hmac.compare_digest(headers.get(GUARD_HEADER, b""), self.secret):
            return await self.app(scope, receive, send)
        path = scope.get("path", "")
        if path == self.prefix or path.startswith(self.prefix + "/"):
            inner = path[len(self.prefix):] or "/"
            return await self.app({**scope, "path": inner, "raw_path": inner.encode()}, receive, send)
        await _not_found(scope, send)


async def _not_found(scope, send) -> None:  # noqa: ANN001
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 1008})
        return
    await send({"type": "http.response.start", "status": 404,
                "headers": [(b"content-type", b"application/json"), (b"content-length", b"22")]})
    await send({"type": "http.response.body", "body": b'{"detail":"Not Found"}'})


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


APIS_LIFESPAN_ENV = ("LOAD_ON_STARTUP", "APPWORLD_DB_ARGS", "APPWORLD_DATE_TIME")


def build_apis_app():  # noqa: ANN201 - a FastAPI app of the AppWorld virtualenv
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
    return build_main_app()


def build_environment_app():  # noqa: ANN201
    from appworld.serve.environment import app

    _import_every_app_api()
    return app


def serve(app, port: int, guard: str) -> None:  # noqa: ANN001
    import uvicorn

    uvicorn.run(GuardedApp(app, guard), host="127.0.0.1", port=port, log_level="warning")


def serve_apis(port: int, guard: str) -> None:
    serve(build_apis_app(), port, guard)


def serve_environment(port: int, guard: str) -> None:
    serve(build_environment_app(), port, guard)


def run_fork_server() -> int:
    """See the module docstring."""
    gc.disable()  # no collection while importing: freed holes in pages the children would then share
    import uvicorn  # noqa: F401 - imported before forking, like everything the children need

    apps = {"environment": build_environment_app(), "apis": build_apis_app()}
    share_with_children()
    # build_apis_app sets what the APIs lifespan reads; only APIs children get it (an exec'd env server never had it)
    apis_env = {name: os.environ.pop(name) for name in APIS_LIFESPAN_ENV}
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    _reply({"ready": True, "pid": os.getpid()})
    for line in sys.stdin:
        try:
            request = json.loads(line)
            app, port, log_path = apps[request["server"]], int(request["port"]), str(request["log_path"])
            guard = str(request["guard"])
            GuardedApp(app, guard)  # refuses a short secret before anything forks
        except (ValueError, KeyError, TypeError) as exc:  # never echo the line: it may hold the secret
            _reply({"error": f"bad request: {type(exc).__name__}: {str(exc)[:200]}"})
            continue
        try:
            pid = os.fork()
        except OSError as exc:
            _reply({"error": f"fork failed: {exc}"})
            continue
        if pid == 0:
            if request["server"] == "apis":
                os.environ.update(apis_env)
            _become_server(app, port, log_path, guard)  # never returns
        _reply({"pid": pid})
    return 0


def share_with_children() -> None:
    """Move every object the fork server holds into the permanent generation (`gc.freeze`), so a forked
    server's collections never visit it: visiting writes to each object's header, and every page written
    is copied into the child. Without it a child's first full collection copied about 100 MiB of the
    fork server's pages into each environment server (docs/eval.md, "How many battles a machine holds")."""
    gc.freeze()


def _reply(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def _become_server(app, port: int, log_path: str, guard: str) -> None:  # noqa: ANN001
    """In a forked child: detach, log to `log_path`, serve `app` on `port`, exit without returning."""
    code = 1
    try:
        os.setsid()
        gc.enable()  # the child's own objects are collected as usual; the frozen parent's never touched
        for signum, handler in ((signal.SIGINT, signal.default_int_handler), (signal.SIGCHLD, signal.SIG_DFL),
                                (signal.SIGTERM, signal.SIG_DFL)):
            signal.signal(signum, handler)
        log_fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        null_fd = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null_fd, 0)  # and drop the fork server's pipes: its owner must see EOF when it exits
        os.dup2(log_fd, 1)
        os.dup2(log_fd, 2)
        os.close(log_fd)
        os.close(null_fd)
        serve(app, port, guard)
        code = 0
    except SystemExit as exc:  # uvicorn exits 1 after logging why (e.g. the port is taken)
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001 - a child must never return into the fork server's loop
        import traceback

        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


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
    parser.add_argument("server", choices=["apis", "environment", "forkserver"])
    parser.add_argument("--port", type=int, help="required for apis and environment")
    args = parser.parse_args()
    if args.server != "forkserver" and args.port is None:
        parser.error(f"{args.server} needs --port")
    if not os.environ.get("APPWORLD_ROOT"):
        print("APPWORLD_ROOT must be set to the AppWorld root to serve", file=sys.stderr)
        return 2
    if not os.path.isdir(os.path.join(os.environ["APPWORLD_ROOT"], "data")):
        print(f"no AppWorld data under {os.environ['APPWORLD_ROOT']}/data: run `appworld-green world build`", file=sys.stderr)
        return 2
    if args.server == "forkserver":
        return run_fork_server()
    guard = os.environ.pop(GUARD_SECRET_ENV, "")
    if len(guard) < MIN_GUARD_SECRET_LENGTH:
        print(f"{GUARD_SECRET_ENV} must hold the slot's guard secret (at least {MIN_GUARD_SECRET_LENGTH} "
              "characters); the Green sets it when it starts a slot", file=sys.stderr)
        return 2
    (serve_apis if args.server == "apis" else serve_environment)(args.port, guard)
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
