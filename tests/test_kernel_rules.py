"""Rules written once, in the kernel, and nowhere else: the naming rule `app.api` <-> `app__api`
(`kernel.api_names`), the process-liveness probe (`kernel.liveness`) and the SIGTERM handler of the
entry points (`kernel.entry`)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from kernel.api_names import api_name, tool_name
from kernel.liveness import group_alive, pid_alive
from kernel.settings import SCENARIO_DIR


def test_the_pair_converts_both_ways_at_the_first_separator() -> None:
    assert tool_name("simple_note.login") == "simple_note__login"
    assert api_name("simple_note__login") == "simple_note.login"
    assert api_name("api_docs__show_api_doc") == "api_docs.show_api_doc"
    assert api_name(tool_name("supervisor.complete_task")) == "supervisor.complete_task"
    assert tool_name("call_api") == "call_api" and api_name("call_api") == "call_api"
    assert api_name("a.b") == "a.b"


def test_no_module_but_the_kernel_pair_writes_the_rule() -> None:
    rule = re.compile(r'partition\("__"\)|split\("__"|replace\("__"|replace\("\.", "__"|\}__\{')
    writers = [str(path.relative_to(SCENARIO_DIR)) for path in SCENARIO_DIR.rglob("*.py")
               if "pack" not in path.parts and path.name != "api_names.py" and rule.search(path.read_text())]
    assert writers == []


def test_liveness_sees_a_live_process_and_not_an_exited_one() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], start_new_session=True)
    try:
        assert pid_alive(child.pid) and group_alive(child.pid)
        assert pid_alive(os.getpid()) and pid_alive(1)  # pid 1: another user's (or ours), exists either way
    finally:
        child.kill()
    child.wait()
    assert not pid_alive(child.pid) and not group_alive(child.pid)


def test_a_zombie_group_leader_is_not_alive() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"], start_new_session=True)
    os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # exited, not yet reaped: a zombie
    assert not group_alive(child.pid)


def test_only_the_kernel_installs_the_sigterm_handler_of_an_entry_point() -> None:
    installs = [str(path.relative_to(SCENARIO_DIR)) for path in SCENARIO_DIR.rglob("*.py")
                if "signal.signal(signal.SIGTERM" in path.read_text()]
    # the AgentBeats backend stops its own MCP child on SIGTERM instead (D6), so it keeps its own handler
    assert sorted(installs) == ["green_agent/agentbeats/backend.py", "kernel/entry.py"]


def test_the_paginated_apis_are_found_once_and_each_caller_gets_its_own_list(appworld_root) -> None:
    from kernel.world_data import WorldData

    world = WorldData(appworld_root)
    expected = [doc.dotted for apis in world.api_docs.values() for doc in apis.values() if doc.is_paginated]
    first = world.paginated_apis()
    assert first == expected and expected  # the built world has paginated APIs (page_index)
    first.append("mutated.by_a_caller")
    assert WorldData(appworld_root).paginated_apis() == expected  # a battle's fresh WorldData: same, unmutated
