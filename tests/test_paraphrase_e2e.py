"""A paraphrase arm end to end: real AppWorld servers, the real gateway, real A2A Blues, on loopback.

- A reading Blue (the reference Blue's replay, plus a call of `supervisor.show_active_task`) in tools and code mode:
  everything it received (the task message, show_active_task's answer) and every trace record of what was sent to
  it carry the paraphrase and never the original wording; the battle passes (the world and the evaluator are
  untouched); result.json and the trace's task message record the choice.
- The shipped `instruction-bound` Blue passes a task asked in its own words and loses it asked in a strong
  paraphrase, in tools and code mode.
- `eval --paraphrase`: rows carry the choice, the run is custom with the set's digest in its provenance, `--resume`
  reruns a lost battle in the same wording, and a resume with another strength is refused.
The A2A door (`assess` with `"paraphrase"` in its config, `purple --kind instruction-bound`) is
tests/test_reliability_e2e.py's, beside the door's fault profile.
The set is the test's own file (`--paraphrase-set`), each line checked by the real validity gate.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from blue_agent.apis_shim import run_solution
from blue_agent.code_mode import execute, is_code_battle, solution_code
from blue_agent.gateway_client import GatewaySession
from faults_support import blue_server
from green_agent.engine.config import BattleChoices
from green_agent.local_battle import open_blue, run_on_slot
from green_agent.models.eval_run import EvalResults
from green_agent.models.result import BattleResult
from green_agent.runtime.slot import SlotSpec, SlotUrls, WorldSlot
from kernel.paraphrase_set import Paraphrase, ParaphraseSpec, dump_lines
from kernel.ports import free_port
from kernel.settings import Settings, load_settings
from kernel.task_ids import TaskRef
from kernel.task_message import parse_task_message
from kernel.trace_record import TraceRecord
from kernel.world_data import WorldData
from test_batch_e2e import CLI, cli_env, slot_ports

pytestmark = pytest.mark.e2e

NOTES, SONGS = "f0a1c01_1", "f0c9e09_1"
WORDINGS = {
    (NOTES, "mild"): ["How many of my Simple Note notes are tagged 'recipe'?",
                      "In Simple Note, how many of my notes are tagged 'recipe'?",
                      "Tagged 'recipe': how many of my notes in Simple Note carry that tag?"],
    (NOTES, "strong"): ["I keep cooking ideas in Simple Note under the label 'recipe'; tell me the count of those."],
    (SONGS, "mild"): ["How many songs by Wren Calloway are in my song library on Spotify?",
                      "In my Spotify song library, how many songs are by Wren Calloway?"],
    (SONGS, "strong"): ["Quick question from a Wren Calloway fan: count the tracks of hers sitting in my Spotify "
                        "collection."],
}
RECEIVED_KINDS = ("task_message", "tool_call", "execution", "green_message")
"""Trace records of what the agent was sent (the Green's verdict and world changes are the referee's own)."""


@pytest.fixture(scope="module")
def e2e_settings(tmp_path_factory: pytest.TempPathFactory, appworld_root: Path) -> Settings:
    tmp = tmp_path_factory.mktemp("paraphrase-e2e")
    return load_settings().model_copy(update={"appworld_root": appworld_root, "runs_dir": tmp / "runs",
                                              "agentbeats_mcp_log_path": tmp / "calls.jsonl", "openai_api_key": None})


@pytest.fixture(scope="module")
def set_file(e2e_settings: Settings) -> Path:
    path = e2e_settings.runs_dir.parent / "set.jsonl"
    lines = [Paraphrase.model_validate({"task_id": task, "strength": strength, "variant": i + 1, "text": text,
                                        "source": "authored"})
             for (task, strength), texts in WORDINGS.items() for i, text in enumerate(texts)]
    path.write_text(dump_lines(lines))
    return path


def reading_handler(world: WorldData, received: list[str]):  # noqa: ANN201 - a BlueHandler
    """Keeps what it receives: the task message and show_active_task's answer; then replays the solution."""

    def play(text: str) -> None:
        received.append(text)
        task = parse_task_message(text)
        source = world.solution_source(task.task_id)
        with GatewaySession(task.mcp_url) as session:
            if is_code_battle(session):
                received.append(execute(session, "print(apis.supervisor.show_active_task())"))
                received.append(execute(session, solution_code(source)))
            else:
                received.append(json.dumps(session.call_tool("supervisor__show_active_task", {})))
                run_solution(source, session.call_tool)

    async def handle(text: str) -> str:
        await asyncio.to_thread(play, text)
        return "done"

    return handle


@pytest.fixture(scope="module")
def slot(e2e_settings: Settings) -> Iterator[tuple[SlotUrls, dict[str, str], list[str]]]:
    runs = e2e_settings.runs_dir
    received: list[str] = []
    with ExitStack() as stack:
        world = stack.enter_context(WorldSlot(
            SlotSpec(env_port=free_port(), apis_port=free_port(), gateway_port=free_port()),
            appworld_root=e2e_settings.appworld_root, appworld_python=e2e_settings.appworld_python,
            log_dir=runs / "slot-logs", mcp_log_path=e2e_settings.agentbeats_mcp_log_path,
            lock_dir=runs / ".slot-locks", code_spares_at_start=True))
        blues = {"instruction-bound": stack.enter_context(open_blue("instruction-bound", e2e_settings, world.urls,
                                                                    runs / "blue-logs"))}
        blues["reading"] = stack.enter_context(blue_server("Reading Blue", reading_handler(
            WorldData(e2e_settings.appworld_root), received))).url
        yield world.urls, blues, received


def battle(settings: Settings, slot: tuple[SlotUrls, dict[str, str], list[str]], task: str, blue: str,
           strength: str | None, set_file: Path, interaction: str = "tools") -> BattleResult:
    urls, blues, _ = slot
    spec = ParaphraseSpec(strength=strength, set_path=str(set_file)) if strength else None  # type: ignore[arg-type]
    choices = BattleChoices.model_validate({"blue": blue, "predictor": "all", "interaction": interaction,
                                            "paraphrase": spec})
    name = f"{blue}-{interaction}-{task}-{strength}-{len(list(settings.runs_dir.glob('*')))}"
    return run_on_slot(TaskRef(task_id=task, source="id"), choices, settings, urls, blues[blue],
                       settings.runs_dir / name, name)


def trace_of(result: BattleResult) -> list[TraceRecord]:
    lines = (Path(result.run_dir) / "trace.jsonl").read_text().splitlines()
    return [TraceRecord.model_validate_json(line) for line in lines]


@pytest.mark.parametrize("interaction", ["tools", "code"])
def test_the_agent_reads_only_the_paraphrase_and_still_passes(
        e2e_settings: Settings, slot: tuple[SlotUrls, dict[str, str], list[str]], set_file: Path,
        interaction: str) -> None:
    received = slot[2]
    received.clear()
    result = battle(e2e_settings, slot, NOTES, "reading", "strong", set_file, interaction)
    original, (reworded,) = WorldData(e2e_settings.appworld_root).task(NOTES).instruction, WORDINGS[(NOTES, "strong")]
    assert (result.outcome, result.error) == ("passed", None), result.reason  # the world and the evaluator as ever
    message, answer = received[0], received[1]
    assert reworded in message and reworded in answer  # the task message and show_active_task's answer
    assert all(original not in text for text in received), received
    records = trace_of(result)
    sent = [r for r in records if r.kind in RECEIVED_KINDS]
    assert all(original not in (r.text or "") and original not in (r.result or "") for r in sent)
    task_message = next(r for r in records if r.kind == "task_message")
    assert reworded in task_message.text and task_message.paraphrase == result.paraphrase
    assert any(reworded in (r.result or "") for r in sent if r.kind in ("tool_call", "execution"))
    assert result.paraphrase is not None and (result.paraphrase.strength, result.paraphrase.variant) == ("strong", 1)
    assert result.instruction == original  # the referee's record keeps the task's own instruction


@pytest.mark.parametrize("interaction", ["tools", "code"])
def test_the_instruction_bound_blue_passes_in_the_tasks_own_words_and_loses_a_strong_paraphrase(
        e2e_settings: Settings, slot: tuple[SlotUrls, dict[str, str], list[str]], set_file: Path,
        interaction: str) -> None:
    own = battle(e2e_settings, slot, SONGS, "instruction-bound", None, set_file, interaction)
    strong = battle(e2e_settings, slot, SONGS, "instruction-bound", "strong", set_file, interaction)
    assert (own.outcome, own.error) == ("passed", None), own.reason
    assert (strong.status, strong.outcome) == ("completed", "failed"), strong.reason  # it gave the task up
    assert strong.trajectory.total_calls == 1  # complete_task alone


def eval_run(root: Path, tmp: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    ports, _ = slot_ports(1)
    argv = [CLI, "eval", "--task-ids", f"{NOTES},{SONGS}", "--blue", "reference", "--predictor", "all", "--trials",
            "2", "--out", str(out), "--slot-ports", ports, *extra]
    return subprocess.run(argv, capture_output=True, text=True, env=cli_env(root, tmp), timeout=600)


def test_an_eval_records_the_wordings_is_custom_and_resume_keeps_them(appworld_root: Path, tmp_path: Path,
                                                                      set_file: Path) -> None:
    out = tmp_path / "run"
    flags = ["--paraphrase", "mild", "--paraphrase-set", str(set_file), "--paraphrase-seed", "5"]
    first = eval_run(appworld_root, tmp_path, out, *flags)
    assert first.returncode == 0, first.stderr[-3000:]
    results = EvalResults.model_validate_json((out / "results.json").read_text())
    chosen = {(r.task_id, r.trial): r.paraphrase for r in results.rows}
    assert all(p is not None and p.strength == "mild" for p in chosen.values()) and results.aggregates.passed == 4
    digest = next(iter(chosen.values())).set_digest
    assert not results.standard and any("paraphrase mild" in c for c in results.custom)
    assert results.provenance.paraphrase_set_digest == digest
    lost = next(r for r in results.rows if (r.task_id, r.trial) == (NOTES, 2))
    (out / lost.result_path).unlink()  # a battle to run again
    again = eval_run(appworld_root, tmp_path, out, *flags, "--resume")
    assert again.returncode == 0, again.stderr[-3000:]
    rerun = EvalResults.model_validate_json((out / "results.json").read_text())
    assert {(r.task_id, r.trial): r.paraphrase for r in rerun.rows} == chosen
    assert next(r for r in rerun.rows if (r.task_id, r.trial) == (NOTES, 2)).battle_id != lost.battle_id
    other = eval_run(appworld_root, tmp_path, out, "--paraphrase", "strong", "--paraphrase-set", str(set_file),
                     "--resume")
    assert other.returncode == 2 and "--resume refused" in other.stderr and "paraphrase mild" in other.stderr
