"""The program run INSIDE the sandbox: a stateful IPython REPL whose `apis` calls leave only as JSON lines.

Run by the AppWorld virtualenv's python (it imports AppWorld's own helpers, never our packages), with
the protocol on two pipes: requests arrive on fd 0 and replies leave on the fd that was 1 at start-up.
Before any agent code runs, fds 0, 1 and 2 are pointed at /dev/null, so what the code prints is
captured (as AppWorld captures it) and what it writes to fd 1/2 directly goes nowhere.

Protocol (one JSON object a line; the parent reads every line with a byte limit and trusts none):
- parent -> child, once: `{"init": {"datetime": ISO | null, "apis": {app: [api, ...]}, "timeout_s": int | null,
  "max_interactions": int, "max_output_chars": int}}`; child -> parent: `{"ready": true}`. A spare gets
  `"datetime": null`: it builds its REPL (shell, preamble, `apis`, the frozen clock: AppWorld's time freezer
  walks every loaded module, ~0.2 s) before any battle is known, then waits for `{"clock": ISO}`, moves the
  frozen clock there (freezegun's `move_to`: the same frozen time as freezing at ISO) and says it is ready.
- parent -> child: `{"execute": code}`; child -> parent, any number of `{"call": {"app", "api",
  "arguments"}}`, each answered by `{"reply": {"status_code": int | null, "body": any, "error": str | null,
  "text": str | null}}` (`text`: a 200 whose body is not JSON, decoded here so that decoding fails),
  then `{"output": str, "counted": bool, "timed_out": bool}`.

Output strings are AppWorld's (`appworld.environment.AppWorld.execute`, with its defaults
`raise_on_unsafe_syntax`, `null_patch_unsafe_execution`, `raise_on_failure`, `timeout_seconds`): the
same safety guard, time freezer, preamble, capture, traceback filter and messages, from AppWorld's own
modules where they are importable. An API reply other than 200 raises
`Exception("Response status code is <code>:\\n<body>")` as AppWorld's requester does; a reply the
gateway refused (`error`) raises `Exception(<error>)`.
"""

import ast
import json
import os
import re
import sys
from textwrap import dedent

PROTO_OUT = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
PROTO_IN = os.fdopen(os.dup(0), "r", encoding="utf-8")
_devnull = os.open("/dev/null", os.O_RDWR)
for _fd in (0, 1, 2):
    os.dup2(_devnull, _fd)
os.close(_devnull)

from IPython.terminal.embed import InteractiveShellEmbed  # noqa: E402
from IPython.utils.capture import capture_output  # noqa: E402
from traitlets.config.loader import Config  # noqa: E402

from appworld.apps.api_lib import set_local_date_and_time  # noqa: E402
from appworld.common.safety_guard import SafetyGuard  # noqa: E402
from appworld.common.utils import TimeoutError as AppWorldTimeout  # noqa: E402
from appworld.common.utils import CustomErrorMessageMunch, get_stack_trace_from_exception, timeout_call  # noqa: E402
from appworld.environment import TRUE_AVAILABLE_IMPORTS  # noqa: E402
from appworld.requester import NumRequestsLimitError  # noqa: E402
from freezegun.api import freeze_factories  # noqa: E402

PREAMBLE_OVERRIDES = dedent("""
def print(*args, **kwargs):
    if not kwargs and len(args) == 1 and isinstance(args[0], (list, tuple, dict)):
        indent = 1 if len(json.dumps(args[0])) >= 100 else None
        builtins.print(json.dumps(args[0], indent=indent))
    else:
        builtins.print(*args, **kwargs)

def input(*args, **kwargs):
    raise Exception("input(..) is not allowed. All decisions must be made autonomously.")
""")
SPARE_DATETIME = "2000-01-01T00:00:00"
"""Where a spare's clock is frozen until its battle's clock arrives (no code runs before it does)."""
REQUESTER_MESSAGE = ("requester is not available here: every API call goes through apis.<app>.<api>(**kwargs), "
                     "which the referee relays and logs.")


def send(message):
    PROTO_OUT.write(json.dumps(message, ensure_ascii=False, default=str) + "\n")
    PROTO_OUT.flush()


def receive():
    line = PROTO_IN.readline()
    if not line:
        os._exit(0)  # the parent closed the pipe: the battle is over
    return json.loads(line)


class CallCounter:
    """AppWorld's `max_api_calls_per_interaction` (1000): the calls of one execution."""

    limit = 1000
    count = 0
    sent = 0


def receive_reply(call_id):
    """The reply to call `call_id` (a reply to a call that the timeout interrupted is skipped)."""
    while True:
        message = receive()
        if "reply" in message and message.get("id") == call_id:
            return message["reply"]


def api_function(app, api):
    def _api_request(**kwargs):
        if CallCounter.count >= CallCounter.limit:
            raise NumRequestsLimitError(CallCounter.limit)
        CallCounter.count += 1
        CallCounter.sent += 1
        send({"call": {"app": app, "api": api, "arguments": kwargs}, "id": CallCounter.sent})
        reply = receive_reply(CallCounter.sent)
        if reply.get("error") is not None:
            raise Exception(reply["error"])
        if reply.get("status_code") != 200:
            text = json.dumps(reply.get("body"), ensure_ascii=False, separators=(",", ":"))
            raise Exception(f"Response status code is {reply.get('status_code')}:\n{text}")
        if reply.get("text") is not None:  # a body that is not JSON: decoding it fails, as `response.json()` does
            return json.loads(reply["text"])
        return reply.get("body")
    return _api_request


def build_apis(names):
    collection = CustomErrorMessageMunch.build("No app named '{key}' found.")
    for app, apis in names.items():
        functions = CustomErrorMessageMunch.build("No API named '{key}' found in the " + app + " app.")
        for api in apis:
            functions[api] = api_function(app, api)
        collection[app] = functions
    return collection


class Unavailable:
    def __getattr__(self, name):
        raise Exception(REQUESTER_MESSAGE)

    def __call__(self, *args, **kwargs):
        raise Exception(REQUESTER_MESSAGE)


class Repl:
    def __init__(self, init):
        config = Config()
        config.HistoryManager.enabled = False
        original_excepthook = sys.excepthook
        self.shell = InteractiveShellEmbed(config=config)
        sys.excepthook = original_excepthook
        self.shell.ast_node_interactivity = "none"
        self.timeout_s = init.get("timeout_s")
        self.max_interactions = int(init["max_interactions"])
        self.max_output_chars = int(init["max_output_chars"])
        self.num_interactions = 0
        self.guard = SafetyGuard()
        self.shell.run_cell(TRUE_AVAILABLE_IMPORTS + "\n\n" + PREAMBLE_OVERRIDES)
        self.shell.user_ns["apis"] = build_apis(init["apis"])
        self.shell.user_ns["requester"] = Unavailable()
        set_local_date_and_time(init["datetime"] or SPARE_DATETIME)  # AppWorld's own freezer, last, as its REPL
        self.clock = freeze_factories[-1]

    def move_clock(self, task_datetime):
        """A spare's battle time: the frozen clock moved, not frozen again (no second walk of every module)."""
        self.clock.move_to(task_datetime)

    def execute(self, code):
        is_safe, safety_message = self.guard.is_syntax_safe(code)
        if not is_safe:
            return "Execution failed. Traceback:\n" + safety_message, False, False
        if self.num_interactions >= self.max_interactions:
            code = f'raise Exception(f"Maximum number of executions ({self.max_interactions}) reached.")'
        CallCounter.count = 0
        self.guard.enable()
        try:
            return self._run(code.strip())
        finally:
            self.guard.disable()

    def _run(self, code):
        try:
            ast.parse(code)
        except SyntaxError as e:
            return ("Execution failed. Traceback:\nSyntax error in line:\n" + (e.text or "").rstrip() + "\n"
                    + "Message: " + e.msg), False, False
        if not code:
            return "No code available to execute.", False, False
        with capture_output(stdout=True, stderr=True, display=True) as cap:
            result = self._run_cell(code)
        self.num_interactions += 1
        if result is None:
            return f"Execution failed. Traceback:\nExecution timed out after {self.timeout_s} seconds.", True, True
        if result.success:
            return (cap.stdout if cap.stdout.strip() else "Execution successful."), True, False
        timed_out = isinstance(result.error_in_exec, AppWorldTimeout)
        return "Execution failed. Traceback:\n" + failure_message(result), True, timed_out

    def _run_cell(self, code):
        if self.timeout_s is None:
            return self.shell.run_cell(code)
        try:
            return timeout_call(self.shell.run_cell, timeout_seconds=self.timeout_s, raw_cell=code)
        except TimeoutError:
            return None


def failure_message(result):
    try:
        result.raise_error()
        return ""
    except Exception as exception:  # noqa: BLE001 - the agent's own exception, reported as AppWorld does
        stack_trace = get_stack_trace_from_exception(exception, only_ipython=True, add_http_exception_message=True)
    lines = stack_trace.splitlines()
    if "ipython-input" not in stack_trace:
        message = stack_trace
    else:
        index = next(i for i, line in enumerate(lines) if "ipython-input" in line)
        message = re.sub(r'File "<ipython-input-\d+-\w+>"', 'File "<python-input>"', "\n".join(lines[index:]))
    message = message.replace("appworld.requester.NumRequestsLimitError", "Exception")
    message = message.replace("appworld.common.utils.TimeoutError: Function run_cell execution", "Exception: Execution")
    return dedent(message)


def bounded(output, limit):
    if len(output) <= limit:
        return output
    return output[:limit] + f"\n[output cut: {len(output) - limit} more characters over the {limit}-character limit]"


SEALED_ENV = "APPWORLD_SCRATCH_SEALED"
LANDLOCK_WRITES = 2 | 16 | 32 | 64 | 128 | 256 | 512 | 1024 | 2048 | 4096
"""Landlock ABI 1's write rights: write a file, remove a dir or file, make a char device, dir, regular file,
socket, fifo, block device or symlink."""


def seal_writes():
    """Where the sandbox has no scratch tmpfs of a fixed size (the landlock fallback where the Green may not mount,
    `scratch.py`), the REPL writes no file once it is set up (IPython and the imports needed a writable temp dir):
    one more Landlock layer handles every write right and allows none. Fails closed."""
    if os.environ.get(SEALED_ENV) != "1":
        return
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    handled = ctypes.c_uint64(LANDLOCK_WRITES)
    ruleset = libc.syscall(444, ctypes.byref(handled), ctypes.sizeof(handled), 0)  # landlock_create_ruleset
    if ruleset < 0 or libc.syscall(446, ruleset, 0) != 0:  # landlock_restrict_self
        os._exit(3)
    os.close(ruleset)


def main():
    init = receive()["init"]
    repl = Repl(init)
    seal_writes()
    if init.get("datetime") is None:  # a spare: ready once a battle claims it and gives it its clock
        repl.move_clock(str(receive()["clock"]))
    send({"ready": True})
    while True:
        request = receive()
        if "execute" not in request:
            continue
        output, counted, timed_out = repl.execute(str(request["execute"]))
        send({"output": bounded(output, repl.max_output_chars), "counted": counted, "timed_out": timed_out})


if __name__ == "__main__":
    main()
