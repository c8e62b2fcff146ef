"""The careful Blue end to end: real AppWorld servers, the real gateway, the shipped Blues, on loopback.

- Each check of the table (`blue_agent.careful_checks`) against the real world: an auditing Blue replays the
  reference solutions of the tasks that call the pack's writes (`AUDITED`, every write at least once) and, around
  each write, runs its check before (it must not find the write) and after (it must, and give back the ids the
  world's own answer gave). The audited battles still pass: the checks' reads change nothing.
- Every write answered with a 504 (`rate=1,kinds=timeout`): the check finds it did not happen, the careful Blue
  repeats it, and passes, in tools and code mode.
- Under every kind of fault (`MIXED`) on dev tasks, the careful Blue passes in tools and code mode where
  reference-retry, which never re-reads an empty page nor re-asks a cut-off answer, loses.
- Every write's answer lost (`lost_response`: the write reached the world, the agent got a 504): the careful Blue
  finds the write done and does not repeat it (each write reaches the world once, by the call log's `call_key`);
  reference-retry repeats it blindly, and the task it wrote twice fails.
- The A2A door: `appworld-green purple --kind reference-careful` through `assess`, in tools and code mode, under
  every kind of fault including lost answers, passes its tasks and recovers from every fault.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from a2a_support import assess, env, green, start  # noqa: F401 - fixtures
from blue_agent.apis_shim import McpApis, run_solution
from blue_agent.careful_checks import CHECKS
from blue_agent.careful_policy import CarefulApis
from blue_agent.gateway_client import GatewaySession
from blue_agent.replay_policy import careful_apis, decoded
from faults_support import blue_server
from green_agent.engine.config import BattleChoices
from green_agent.local_battle import open_blue, run_on_slot
from green_agent.models.result import BattleResult
from green_agent.runtime.slot import SlotSpec, SlotUrls, WorldSlot
from kernel.call_log_reader import read_call_log
from kernel.fault_spec import parse_fault_spec
from kernel.ports import free_port
from kernel.settings import Settings, load_settings
from kernel.task_ids import TaskRef
from kernel.task_message import parse_task_message
from kernel.world_data import WorldData

pytestmark = pytest.mark.e2e

AUDITED = ("f0a1c01_2", "f0a1c01_3", "f0a5e55_3", "f0a7c07_2", "f0a7c07_3", "f0b2d02_2", "f0b2d02_3", "f0b8d08_2",
           "f0c1a11_3", "f0c3e03_3", "f0d2b22_2", "f0d2b22_3", "f0d4f04_2", "f0d4f04_3", "f0e3c33_2", "f0e3c33_3",
           "f0e5a05_2", "f0f4d44_3", "f0f6b06_3")
"""Tasks whose reference solutions call, among them, every write of the table."""
SALT = "4f1c8a30f32f36a5a8cac12b82f36c0fafbf958bcfb6f4bbfdf8abf1780fafe9"
"""A published run's secret, fixed so that the plan is known (`kernel.fault_spec`)."""
EVERY_WRITE_TIMES_OUT = f"rate=1,seed=1,kinds=timeout,timeout_s=0.2,salt={SALT}"
TIMED_OUT = ("f0b2d02_3", "f0e3c33_3", "f0d2b22_2")
"""A create found by its snapshot (venmo), a state predicate (gmail), a read that must fail (a deleted note)."""


class Audit(NamedTuple):
    """One write of an audited replay: what its check said before and after it, and the world's own answer."""

    task_id: str
    api: str
    before_write: Any
    after_write: Any
    answer: Any


class AuditingApis:
    """`apis` under the careful policy that also runs each write's check just before and just after it."""

    def __init__(self, careful: CarefulApis, task_id: str, audits: list[Audit]) -> None:
        self.careful, self.task_id, self.audits = careful, task_id, audits

    def __getattr__(self, app: str) -> Any:
        auditing = self

        class App:
            def __getattr__(self, api: str) -> Any:
                return lambda **kwargs: auditing.call(app, api, kwargs)
        return App()

    def call(self, app: str, api: str, kwargs: dict[str, Any]) -> Any:
        check = CHECKS.get(f"{app}.{api}")
        if check is None:
            return self.careful.call(app, api, kwargs)
        snapshot, found = check
        before = snapshot(self.careful, kwargs) if snapshot is not None else None
        not_yet = found(self.careful, kwargs, before)
        answer = self.careful.call(app, api, kwargs)
        self.audits.append(Audit(self.task_id, f"{app}.{api}", not_yet, found(self.careful, kwargs, before), answer))
        return answer


def auditing_handler(world: WorldData, audits: list[Audit]):  # noqa: ANN201 - a BlueHandler
    def replay(text: str) -> None:
        task = parse_task_message(text)
        with GatewaySession(task.mcp_url) as session:
            def wrap(apis: McpApis) -> AuditingApis:
                return AuditingApis(careful_apis(apis), task.task_id, audits)
            run_solution(world.solution_source(task.task_id), decoded(session.call_tool), wrap)

    async def handle(text: str) -> str:
        await asyncio.to_thread(replay, text)
        return "done"

    return handle


@pytest.fixture(scope="module")
def e2e_settings(tmp_path_factory: pytest.TempPathFactory, appworld_root: Path) -> Settings:
    tmp = tmp_path_factory.mktemp("careful-e2e")
    return load_settings().model_copy(update={"appworld_root": appworld_root, "runs_dir": tmp / "runs",
                                              "agentbeats_mcp_log_path": tmp / "calls.jsonl", "openai_api_key": None})


@pytest.fixture(scope="module")
def slot(e2e_settings: Settings) -> Iterator[tuple[SlotUrls, dict[str, str], list[Audit]]]:
    runs = e2e_settings.runs_dir
    audits: list[Audit] = []
    with ExitStack() as stack:
        world = stack.enter_context(WorldSlot(
            SlotSpec(env_port=free_port(), apis_port=free_port(), gateway_port=free_port()),
            appworld_root=e2e_settings.appworld_root, appworld_python=e2e_settings.appworld_python,
            log_dir=runs / "slot-logs", mcp_log_path=e2e_settings.agentbeats_mcp_log_path,
            lock_dir=runs / ".slot-locks", code_spares_at_start=True))
        blues = {blue: stack.enter_context(open_blue(blue, e2e_settings, world.urls, runs / "blue-logs"))
                 for blue in ("reference-careful", "reference-retry")}
        blues["auditing"] = stack.enter_context(blue_server("Auditing Blue", auditing_handler(
            WorldData(e2e_settings.appworld_root), audits))).url
        yield world.urls, blues, audits


def battle(settings: Settings, slot: tuple[SlotUrls, dict[str, str], list[Audit]], task: str, blue: str,
           spec: str | None, interaction: str = "tools") -> BattleResult:
    urls, blues, _ = slot
    choices = BattleChoices(blue=blue, predictor="all", interaction=interaction,  # type: ignore[arg-type]
                            faults=parse_fault_spec(spec) if spec else None)
    name = f"{blue}-{interaction}-{task}-{len(list(settings.runs_dir.glob('*')))}"
    return run_on_slot(TaskRef(task_id=task, source="id"), choices, settings, urls, blues[blue],
                       settings.runs_dir / name, name)


def test_each_check_finds_its_write_in_the_real_world_only_once_it_happened(
        e2e_settings: Settings, slot: tuple[SlotUrls, dict[str, str], list[Audit]]) -> None:
    results = [battle(e2e_settings, slot, task, "auditing", None) for task in AUDITED]
    assert [(r.task_id, r.outcome) for r in results if r.outcome != "passed"] == []  # the checks changed nothing
    audits = slot[2]
    assert {a.api for a in audits} == set(CHECKS)  # every check was tried
    assert [a for a in audits if a.before_write is not None] == []  # no check finds a write before it happened
    assert [a for a in audits if a.after_write is None] == []  # every check finds it once it has
    for audit in audits:  # and gives back what the world's own answer gave (an id a solution may use, a path)
        given = {key: value for key, value in audit.answer.items() if key != "message"}
        assert {key: value for key, value in audit.after_write.items() if key != "message"} == given, audit
        assert audit.after_write["message"].startswith(audit.answer["message"]), audit


@pytest.mark.parametrize("interaction", ["tools", "code"])
def test_a_write_that_timed_out_is_found_not_done_and_repeated(
        e2e_settings: Settings, slot: tuple[SlotUrls, dict[str, str], list[Audit]], interaction: str) -> None:
    for task in TIMED_OUT:
        result = battle(e2e_settings, slot, task, "reference-careful", EVERY_WRITE_TIMES_OUT, interaction)
        assert (result.outcome, result.error) == ("passed", None), (task, result.reason)
        faulted = result.trajectory.faulted_calls
        writes = {c.api for c in faulted if c.api in CHECKS}
        assert writes and all(c.recovered for c in faulted) and {c.kind for c in faulted} == {"timeout"}


MIXED = f"rate=0.3,seed=1,kinds=error+rate_limit+timeout+empty+malformed,timeout_s=1,salt={SALT}"
MIXED_TASKS = ("f0b2d02_2", "f0daa10_2", "f0f6b06_2")
"""Dev tasks reference-retry loses under `MIXED` (an answer cut short on a write, an empty page and a cut-off login,
a cut-off directory listing): the dev split under it scored TGC 38.1 with reference-retry, 95.2 with the careful
Blue, in both modes."""


@pytest.mark.parametrize("interaction", ["tools", "code"])
def test_under_every_kind_of_fault_the_careful_blue_passes_where_reference_retry_loses(
        e2e_settings: Settings, slot: tuple[SlotUrls, dict[str, str], list[Audit]], interaction: str) -> None:
    for task in MIXED_TASKS:
        lost = battle(e2e_settings, slot, task, "reference-retry", MIXED, interaction)
        won = battle(e2e_settings, slot, task, "reference-careful", MIXED, interaction)
        assert (lost.status, lost.outcome != "passed") == ("completed", True), (task, lost.outcome)
        assert (won.outcome, won.error) == ("passed", None), (task, won.reason)
        assert {c.kind for c in won.trajectory.faulted_calls} & {"empty", "malformed"}, task
        assert won.trajectory.upstream_faults == 0 and lost.trajectory.upstream_faults == 0


LOST = f"rate=1,seed=1,kinds=lost_response,timeout_s=0.2,salt={SALT}"
LOST_TASKS = ("f0b2d02_3", "f0a5e55_3", "f0e3c33_3", "f0a1c01_3")
"""Creates found by a snapshot (venmo payments, text messages, a note) and a state set once (threads archived)."""
REFUSES_A_REPEAT = "f0a1c01_3"
"""simple_note answers a second note of the same title 409: reference-retry's repeat reaches the world and is refused,
so the world holds one note and the task passes (its solution fails, and it ends the task as failed)."""


def writes_sent_to_the_world(result: BattleResult) -> Counter[str]:
    """How many times each write of the table (by its `call_key`: the same API, the same arguments) was forwarded
    to AppWorld: answered by it (whatever the status), or forwarded and its answer lost."""
    return Counter(r.call_key for r in read_call_log(Path(result.archive.call_log))
                   if r.tool_name.replace("__", ".") in CHECKS and (
                       r.fault.kind == "lost_response" if r.fault else r.status_code is not None and r.refused is None))


@pytest.mark.parametrize("interaction", ["tools", "code"])
def test_a_write_whose_answer_was_lost_is_not_repeated_by_the_careful_blue_and_is_by_reference_retry(
        e2e_settings: Settings, slot: tuple[SlotUrls, dict[str, str], list[Audit]], interaction: str) -> None:
    for task in LOST_TASKS:
        careful = battle(e2e_settings, slot, task, "reference-careful", LOST, interaction)
        blind = battle(e2e_settings, slot, task, "reference-retry", LOST, interaction)
        assert (careful.outcome, careful.error) == ("passed", None), (task, careful.reason)
        lost = [c for c in careful.trajectory.faulted_calls if c.kind == "lost_response"]
        assert lost and all(c.recovered and not c.repeated for c in lost), (task, lost)
        assert set(writes_sent_to_the_world(careful).values()) == {1}, task  # each write once
        assert max(writes_sent_to_the_world(blind).values()) >= 2, task  # the same write again
        assert any(c.repeated for c in blind.trajectory.faulted_calls), task
        if task == REFUSES_A_REPEAT:
            records = read_call_log(Path(blind.archive.call_log))
            statuses = [r.fault.upstream_status if r.fault else r.status_code
                        for r in records if r.tool_name == "simple_note__create_note"]
            assert statuses[0] == 200 and 409 in statuses[1:] and blind.outcome == "passed", statuses
        else:
            assert blind.status == "completed" and blind.outcome != "passed", (task, blind.outcome)


EVERY_KIND = {"rate": 0.3, "seed": 1, "timeout_s": 1, "salt": SALT,
              "kinds": ["error", "rate_limit", "timeout", "empty", "malformed", "lost_response"]}
A2A_TASKS = ["f0a7c07_2", "f0e5a05_3", "f0daa10_2"]
"""Under `EVERY_KIND` each meets a lost answer or an empty page, and answers cut short (reference-retry loses all
three on the dev split under the same plan)."""


@pytest.mark.parametrize("interaction", ["tools", "code"])
def test_the_careful_purple_passes_on_the_a2a_door_under_every_kind_of_fault(
        green, env, tmp_path: Path, interaction: str) -> None:  # noqa: F811 - fixtures
    purple, url, _ = start(["purple", "--kind", "reference-careful"], env, tmp_path / "purple.log")
    try:
        outcome = assess(green.url, {"participants": {"agent": url}, "config": {
            "task_ids": A2A_TASKS, "predictor": "all", "interaction": interaction, "faults": EVERY_KIND}})
    finally:
        purple.stop()
    assert outcome.state == "completed", outcome.statuses
    data = outcome.data
    assert data["tgc"] == 100.0 and data["infra_errors"] == 0, [(r["task_id"], r["outcome"]) for r in data["rows"]]
    arm = data["profile"]["arms"][0]  # the faults are an arm of the profile against the (unfaulted) baseline
    assert arm["tgc"] == 100.0 and arm["infra_errors"] == 0, data["profile"]["lost"]
    recovery = arm["recovery"]
    lost = recovery["recovery_by_kind"]["lost_response"]
    assert recovery["faults_injected"] >= 6 and lost["injected"] >= 1 and lost["recovered"] == lost["injected"]
    # every fault but one the gateway counts as recovered: a 503 on a reply whose redo's answer was lost is not
    # (the redo reached the world, and the careful Blue rightly did not make it a third time)
    assert recovery["faults_recovered"] >= recovery["faults_injected"] - 1
