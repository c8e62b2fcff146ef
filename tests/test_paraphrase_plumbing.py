"""A paraphrase arm's plumbing without servers: the battle's wording, the gateway's show_active_task answer, the flags,
the run's fingerprint and standard rule, and the instruction-bound stand-in's matching.

The gateway's forwarder is a stand-in stating the contract it replaces (`mcp_gateway.forwarding.ApiForwarder.forward`:
`forward(spec, arguments, gate) -> ApiReply`, asking `gate.admit()` first and telling `gate.settled(reply)` after);
here `supervisor__show_active_task` answers as AppWorld's does (`{"instruction", "status", "answer"}`) and every other
call answers 200 `{"ok": <tool>}`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from blue_agent.instruction_match import InstructionIndex, instruction_of
from green_agent.batch.checkpoint import fingerprint
from green_agent.batch.standard import custom_settings
from green_agent.commands.paraphrase_options import add_paraphrase_args, paraphrase_spec_from
from green_agent.models.eval_run import RunConfig
from green_agent.steps.wording import RunParaphrases, choose_wording, open_paraphrases
from kernel.call_log import CallLogWriter
from kernel.errors import BadInputError
from kernel.paraphrase_set import Paraphrase, ParaphraseSet, ParaphraseSpec, dump_lines
from kernel.trace_log import trace_log_path
from kernel.trace_record import TraceRecord
from kernel.world_data import ApiDoc, WorldData
from mcp_gateway.code.session import ApiCall
from mcp_gateway.forwarding import ApiReply
from mcp_gateway.gateway import Gateway
from mcp_gateway.models import BattleScope
from mcp_gateway.tools import tool_spec

ORIGINAL = "How many of my notes in Simple Note are tagged 'recipe'?"
REWORDED = "I keep cooking ideas in Simple Note under the label 'recipe'; tell me the count of those."
TASK = "f0a1c01_1"
MILD = ["How many of my Simple Note notes are tagged 'recipe'?",
        "In Simple Note, how many of my notes are tagged 'recipe'?",
        "Tagged 'recipe': how many of my notes in Simple Note carry that tag?"]


class ActiveTaskForwarder:
    """Stands in for `ApiForwarder` (module docstring)."""

    def forward(self, spec: Any, arguments: dict[str, Any], gate: Any = None) -> ApiReply:
        if gate is not None and gate.admit() is not None:
            return ApiReply(status_code=None, refused=gate.admit())
        body = {"instruction": ORIGINAL, "status": "active", "answer": None} \
            if spec.name == "supervisor__show_active_task" else {"ok": spec.name}
        reply = ApiReply(status_code=200, body=body)
        if gate is not None:
            gate.settled(reply)
        return reply

    def close(self) -> None:
        pass


SPECS = {s.name: s for s in map(tool_spec, [
    ApiDoc(app_name="supervisor", api_name="show_active_task", method="GET", path="/supervisor/active_task",
           parameters=[], response_schemas={"success": {"instruction": "string"}}),
    ApiDoc(app_name="supervisor", api_name="show_profile", method="GET", path="/supervisor/profile",
           parameters=[], response_schemas={"success": {"x": 1}})])}


def gateway(tmp_path: Path, instruction: str | None, interaction: str = "tools") -> Gateway:
    gw = Gateway(dict(SPECS), ActiveTaskForwarder(), CallLogWriter(tmp_path / "calls.jsonl"))  # type: ignore[arg-type]
    gw.scope.set_battle(BattleScope(battle_id="B", task_id=TASK, launch_url_allowed=True, interaction=interaction,
                                    task_datetime="2023-05-18T12:00:00", instruction=instruction))
    return gw


@pytest.mark.parametrize("interaction", ["tools", "code"])
def test_show_active_task_answers_the_battles_wording_and_the_trace_records_what_the_agent_got(
        tmp_path: Path, interaction: str) -> None:
    gw = gateway(tmp_path, REWORDED, interaction)
    if interaction == "tools":
        result = asyncio.run(gw.call_tool("supervisor__show_active_task", {}))
        received = result.content[0].text
        assert result.structured_content["response"]["instruction"] == REWORDED
    else:
        answer = asyncio.run(gw.code_call(ApiCall(app="supervisor", api="show_active_task", arguments={}), "B", TASK,
                                          gw.scope.generation))
        assert answer.status_code == 200
        received = json.dumps(answer.body)
    assert REWORDED in received and ORIGINAL not in received and "active" in received  # the rest as AppWorld said
    traced = [TraceRecord.model_validate_json(line)
              for line in trace_log_path(tmp_path / "calls.jsonl").read_text().splitlines()]
    assert traced and all(ORIGINAL not in (t.result or "") for t in traced) and REWORDED in traced[0].result


def test_without_a_wording_and_for_other_apis_the_answer_is_appworlds(tmp_path: Path) -> None:
    plain = asyncio.run(gateway(tmp_path / "a", None).call_tool("supervisor__show_active_task", {}))
    assert plain.structured_content["response"]["instruction"] == ORIGINAL
    other = asyncio.run(gateway(tmp_path / "b", REWORDED).call_tool("supervisor__show_profile", {}))
    assert other.structured_content["response"] == {"ok": "supervisor__show_profile"}


def memory_set(texts: list[str], strength: str = "mild") -> ParaphraseSet:
    lines = [Paraphrase.model_validate({"task_id": TASK, "strength": strength, "variant": i + 1, "text": t,
                                        "source": "authored"}) for i, t in enumerate(texts)]
    return ParaphraseSet(lines, digest="d" * 64, path="(memory)")


def test_the_choice_is_a_pure_function_of_seed_task_and_trial(appworld_root: Path) -> None:
    world = WorldData(appworld_root)
    chosen = {trial: choose_wording(RunParaphrases(ParaphraseSpec(strength="mild", seed=7), memory_set(MILD), world),
                                    TASK, trial) for trial in range(1, 9)}
    again = RunParaphrases(ParaphraseSpec(strength="mild", seed=7), memory_set(MILD), world)
    assert all(choose_wording(again, TASK, trial) == chosen[trial] for trial in chosen)  # same inputs, same wording
    assert len({w.choice.variant for w in chosen.values()}) >= 2  # the trial moves it
    assert all(w.text == MILD[w.choice.variant - 1] and w.choice.set_digest == "d" * 64 for w in chosen.values())


def test_a_task_with_no_usable_variant_is_bad_input_naming_task_and_strength(appworld_root: Path) -> None:
    world = WorldData(appworld_root)
    dropped = memory_set(["How many of my notes in Simple Note are tagged 'dessert'?"])  # a changed literal: gated out
    with pytest.raises(BadInputError, match=rf"{TASK}.*strength mild"):
        choose_wording(RunParaphrases(ParaphraseSpec(strength="mild"), dropped, world), TASK, 1)
    with pytest.raises(BadInputError, match="strong"):
        RunParaphrases(ParaphraseSpec(strength="strong"), memory_set(MILD), world).check_tasks([TASK])


def test_a_set_file_is_loaded_once_while_unchanged(appworld_root: Path, tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    path.write_text(dump_lines(memory_set(MILD).lines))
    spec = ParaphraseSpec(strength="mild", set_path=str(path))
    world = WorldData(appworld_root)
    assert open_paraphrases(spec, world) is open_paraphrases(spec, world)
    with pytest.raises(BadInputError, match="cannot read"):
        open_paraphrases(spec.model_copy(update={"set_path": str(tmp_path / "none.jsonl")}), world)


def parse(argv: list[str]) -> ParaphraseSpec | None:
    parser = argparse.ArgumentParser()
    add_paraphrase_args(parser)
    return paraphrase_spec_from(parser.parse_args(argv))


def test_the_flags() -> None:
    assert parse([]) is None
    assert parse(["--paraphrase", "strong", "--paraphrase-seed", "3", "--paraphrase-set", "s.jsonl"]) == \
        ParaphraseSpec(strength="strong", seed=3, set_path="s.jsonl")
    with pytest.raises(BadInputError, match="'loud'.*mild, medium, strong, naturalistic"):
        parse(["--paraphrase", "loud"])
    with pytest.raises(BadInputError, match="--paraphrase-seed without --paraphrase"):
        parse(["--paraphrase-seed", "3"])


def test_a_paraphrase_run_is_fingerprinted_and_custom_with_its_digest() -> None:
    plain = RunConfig(blue="reference", predictor="all", split="dev", deadline_s=1200)
    spec = ParaphraseSpec(strength="strong")
    para = plain.model_copy(update={"paraphrase": spec, "paraphrase_set_digest": "a" * 64})
    other_set = para.model_copy(update={"paraphrase_set_digest": "b" * 64})
    other_seed = para.model_copy(update={"paraphrase": spec.model_copy(update={"seed": 1})})
    prints = {fingerprint(c, ["t_1"]) for c in (plain, para, other_set, other_seed)}
    assert len(prints) == 4
    assert fingerprint(plain, ["t_1"]) == fingerprint(RunConfig.model_validate(plain.model_dump(
        exclude={"paraphrase", "paraphrase_set_digest"})), ["t_1"])  # a run without paraphrases keeps its print
    assert any("paraphrase strong" in c and "a" * 12 in c for c in custom_settings(para, None))
    assert not any("paraphrase" in c for c in custom_settings(plain, None))


def test_the_instruction_bound_match_reads_the_wording_only(appworld_root: Path) -> None:
    index = InstructionIndex(WorldData(appworld_root))
    assert index.match(ORIGINAL).task_id == TASK
    assert index.match(MILD[0]).task_id == TASK
    strong = index.match(REWORDED)
    assert strong.task_id is None and strong.best is not None  # scored, but not clearly anyone's
    message = f"intro\nAppWorld task id: f0c9e09_1\n\nTask instruction:\n{REWORDED}\n\nSupervisor: Maya Castillo\n"
    assert instruction_of(message) == REWORDED
