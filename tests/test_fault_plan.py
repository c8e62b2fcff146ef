"""The fault spec (`kernel.fault_spec`) and the plan (`mcp_gateway.faults.plan`): parsing, refusals, determinism, the
max_consecutive rule, the scaffolding never faulted, and what a faulted call answers (`mcp_gateway.faults.answers`).

Pure functions, no servers: the gateway applying the plan is tested in test_reliability_gateway.py and end to end in
test_reliability_e2e.py.
"""

from __future__ import annotations

import json

import pytest

from green_agent.a2a.request import RequestError, parse_request
from green_agent.cli import main
from kernel.errors import BadInputError
from kernel.fault_spec import DEFAULT_KINDS, FaultSpec, fault_spec_from, parse_fault_spec
from mcp_gateway.faults.answers import fault_answer
from mcp_gateway.faults.plan import FaultPlan, draw
from mcp_gateway.tools import ToolSpec


def tool(app: str, api: str, method: str = "POST", answers_list: bool = False) -> ToolSpec:
    return ToolSpec(name=f"{app}__{api}", app_name=app, api_name=api, method=method, path=f"/{app}/{api}",
                    description="", input_schema={"type": "object", "properties": {}}, answers_list=answers_list)


SPOTIFY = tool("spotify", "show_song_library", "GET", answers_list=True)
LOGIN = tool("spotify", "login")


# -- the spec ------------------------------------------------------------------------------------------------------
def test_a_spec_takes_its_defaults_and_reads_back_the_same() -> None:
    spec = parse_fault_spec("rate=0.3,seed=1")
    assert (spec.rate, spec.seed, spec.kinds, spec.timeout_s, spec.max_consecutive) == (0.3, 1, DEFAULT_KINDS, 5.0, 2)
    assert spec.text() == "rate=0.3,seed=1,kinds=error+rate_limit+timeout,timeout_s=5,max_consecutive=2"
    assert parse_fault_spec(spec.text()) == spec
    full = parse_fault_spec("rate=1,seed=-7,kinds=empty+malformed,timeout_s=0.5,max_consecutive=3")
    assert (full.kinds, full.timeout_s, full.max_consecutive) == (("empty", "malformed"), 0.5, 3)


@pytest.mark.parametrize(("text", "says"), [
    ("rate=0.3,seed=1,kinds=error+boom", "unknown kind 'boom'"),
    ("rate=0,seed=1", "rate must be in (0, 1], got 0"),
    ("rate=1.5,seed=1", "rate must be in (0, 1], got 1.5"),
    ("rate=nan,seed=1", "rate must be in (0, 1]"),
    ("rate=0.3,seed=x", "seed must be an integer, got 'x'"),
    ("rate=0.3,seed=1.5", "seed must be an integer, got '1.5'"),
    ("rate=0.3,seed=1,colour=red", "unknown key 'colour'"),
    ("rate=0.3", "seed is required"),
    ("rate=0.3,seed=1,seed=2", "seed is given twice"),
    ("rate=0.3,seed=1,kinds=error+error", "a kind is named twice"),
    ("rate=0.3,seed=1,timeout_s=60", "timeout_s"),
    ("rate=0.3,seed", "'seed' is not KEY=VALUE"),
    ("", "expected rate=R,seed=S"),
])
def test_a_bad_spec_is_refused_naming_the_bad_part(text: str, says: str) -> None:
    with pytest.raises(BadInputError) as caught:
        parse_fault_spec(text)
    assert says in str(caught.value) and str(caught.value).startswith("--faults: ")


def test_the_config_form_is_strict_and_names_the_bad_part() -> None:
    assert fault_spec_from({"rate": 0.3, "seed": 1, "kinds": ["error"]}).kinds == ("error",)
    for value, says in (({"rate": 0.3, "seed": "1"}, "seed must be an integer"),
                        ({"rate": 0.3, "seed": True}, "seed must be an integer"),
                        ({"rate": 0.3, "seed": 1, "kinds": ["slow"]}, "unknown kind 'slow'"),
                        ({"rate": 0.3, "seed": 1, "when": 3}, "unknown key 'when'"),
                        ([0.3, 1], "expected an object")):
        with pytest.raises(BadInputError, match=says):
            fault_spec_from(value, "config.faults")


def test_the_assessment_config_refuses_a_bad_faults_object_in_its_own_words() -> None:
    request = {"participants": {"agent": "http://127.0.0.1:1"}, "config": {"faults": {"rate": 0, "seed": 1}}}
    with pytest.raises(RequestError, match=r"config\.faults: rate must be in \(0, 1\], got 0"):
        parse_request(json.dumps(request))
    request["config"] = {"faults": {"rate": 0.3, "seed": 2, "kinds": ["error", "empty"]}}
    assert parse_request(json.dumps(request)).config.faults == [FaultSpec(rate=0.3, seed=2, kinds=("error", "empty"))]


def test_the_assessment_config_takes_a_sweep_and_strengths_as_the_reliability_command_does() -> None:
    """`config.faults.rate` may be a list or `R1+R2` (one arm per rate), `config.paraphrase` a list or `S1+S2`;
    a bad value is refused naming the key, in the words `reliability.arms` uses for `--faults` / `--paraphrase`."""
    def config(**given: object) -> dict[str, object]:
        return {"participants": {"agent": "http://127.0.0.1:1"}, "config": given}

    swept = parse_request(json.dumps(config(faults={"rate": [0.3, 0.6], "seed": 1}, paraphrase="mild+strong"))).config
    assert [s.rate for s in swept.faults] == [0.3, 0.6] and {s.seed for s in swept.faults} == {1}
    assert swept.paraphrase == ["mild", "strong"] and swept.paraphrase_seed == 0
    assert [s.rate for s in parse_request(json.dumps(config(faults={"rate": "0.1+0.2", "seed": 1}))).config.faults] \
        == [0.1, 0.2]
    for given, says in (({"faults": {"rate": [0.3, 0.3], "seed": 1}}, r"config\.faults: rate 0\.3 is given twice"),
                        ({"faults": {"rate": [0.3, 2], "seed": 1}}, r"config\.faults: rate must be in"),
                        ({"faults": {"rate": ["x"], "seed": 1}}, r"config\.faults: rate must be a number"),
                        ({"paraphrase": ["strong", "loud"]}, r"config\.paraphrase: unknown strength 'loud'"),
                        ({"paraphrase": []}, r"config\.paraphrase: expected strengths"),
                        ({"paraphrase_seed": -1}, r"config\.paraphrase_seed")):
        with pytest.raises(RequestError, match=says):
            parse_request(json.dumps(config(**given)))


@pytest.mark.parametrize("command", ["battle", "eval"])
def test_the_cli_refuses_a_bad_spec_with_exit_2_before_anything_starts(command: str, capsys: pytest.CaptureFixture,
                                                                       tmp_path) -> None:
    which = ["--task-id", "x_1"] if command == "battle" else ["--split", "dev", "--out", str(tmp_path / "run")]
    code = main(["--env-file", "/nonexistent.env", command, *which, "--blue", "reference",
                 "--faults", "rate=0.3,seed=1,kinds=error+flaky"])
    assert code == 2
    err = capsys.readouterr().err
    assert "--faults: unknown kind 'flaky'" in err and "Traceback" not in err
    assert not (tmp_path / "run").exists()


# -- the plan ------------------------------------------------------------------------------------------------------
def test_the_draw_is_a_pure_function_of_seed_task_trial_and_position() -> None:
    spec = parse_fault_spec("rate=0.3,seed=1")
    first = [draw(spec, "t_1", 1, p) for p in range(1, 401)]
    assert first == [draw(spec, "t_1", 1, p) for p in range(1, 401)]
    other_seed = [draw(parse_fault_spec("rate=0.3,seed=2"), "t_1", 1, p) for p in range(1, 401)]
    other_trial = [draw(spec, "t_1", 2, p) for p in range(1, 401)]
    other_task = [draw(spec, "t_2", 1, p) for p in range(1, 401)]
    assert first != other_seed and first != other_trial and first != other_task
    share = sum(kind is not None for kind in first) / len(first)
    assert 0.22 < share < 0.38  # rate 0.3 over 400 draws
    assert {kind for kind in first if kind} == set(DEFAULT_KINDS)  # every kind is drawn


def test_rate_one_faults_every_call_and_no_admitted_kind_faults_none() -> None:
    spec = parse_fault_spec("rate=1,seed=5")
    assert all(draw(spec, "t_1", 1, p) is not None for p in range(1, 100))
    assert draw(spec, "t_1", 1, 1, kinds=[]) is None


def test_the_same_api_is_never_faulted_more_than_max_consecutive_times_in_a_row() -> None:
    plan = FaultPlan(parse_fault_spec("rate=1,seed=1,max_consecutive=2"), "t_1", 1)
    marks = [plan.next(LOGIN) is not None for _ in range(7)]
    assert marks == [True, True, False, True, True, False, True]
    other = plan.next(SPOTIFY)  # another API has its own count
    assert other is not None and other.position == 8


def test_the_scaffolding_is_never_faulted_nor_counted() -> None:
    plan = FaultPlan(parse_fault_spec("rate=1,seed=1"), "t_1", 1)
    for scaffolding in (tool("supervisor", "show_account_passwords", "GET"), tool("supervisor", "complete_task"),
                        tool("api_docs", "show_api_doc", "GET")):
        assert plan.next(scaffolding) is None
    assert plan.position == 0
    first = plan.next(LOGIN)
    assert first is not None and first.position == 1


def test_a_plan_replays_the_same_faults_for_the_same_calls() -> None:
    spec = parse_fault_spec("rate=0.4,seed=3")
    calls = [LOGIN, SPOTIFY, SPOTIFY, LOGIN, tool("supervisor", "complete_task")] * 10

    def walk(seed_spec: FaultSpec) -> list[tuple[int, str] | None]:
        plan = FaultPlan(seed_spec, "t_1", 1)
        return [(p.position, p.kind) if (p := plan.next(c)) else None for c in calls]

    assert walk(spec) == walk(spec)
    assert walk(spec) != walk(parse_fault_spec("rate=0.4,seed=4"))
    positions = [mark[0] for mark in walk(spec) if mark]
    assert positions == sorted(set(positions)) and max(positions) <= 40  # 40 faultable calls


def test_empty_is_drawn_only_for_a_get_that_answers_a_list() -> None:
    spec = parse_fault_spec("rate=1,seed=1,kinds=empty,max_consecutive=100")
    plan = FaultPlan(spec, "t_1", 1)
    assert plan.next(LOGIN) is None  # a POST admits no `empty`: forwarded, but counted
    assert plan.next(tool("spotify", "show_account", "GET")) is None  # a GET answering one object
    assert plan.next(SPOTIFY) == (3, "empty")


# -- the answers -----------------------------------------------------------------------------------------------------
def test_each_kind_answers_as_a_failing_api_would_and_says_what_the_agent_receives() -> None:
    error, limit, slow = (fault_answer(kind, LOGIN, 5) for kind in ("error", "rate_limit", "timeout"))
    assert (error.status_code, limit.status_code, slow.status_code) == (503, 429, 504)
    assert "temporarily unavailable" in error.message and "Retry after 1 second" in limit.message
    assert "within 5 seconds" in slow.message
    assert json.loads(limit.tool_text()) == {"response": {"message": limit.message, "is_error": True}}
    assert limit.code_message() == "Response status code is 429:\n" + json.dumps({"message": limit.message},
                                                                                  separators=(",", ":"))
    empty = fault_answer("empty", SPOTIFY, 5)
    assert (empty.status_code, empty.body, empty.code_message()) == (200, [], "[]")
    assert json.loads(empty.tool_text()) == {"response": []}
    cut = fault_answer("malformed", SPOTIFY, 5)
    for text in (cut.tool_text(), cut.code_message()):
        with pytest.raises(ValueError):
            json.loads(text)


def test_the_agentbeats_v1_scenario_table_carries_a_spec_and_refuses_a_bad_one(tmp_path) -> None:
    from green_agent.agentbeats.scenario_config import load_scenario_config, resolve
    from kernel.settings import load_settings

    scenario = tmp_path / "scenario.toml"
    scenario.write_text('[appworld]\nfaults = "rate=0.3,seed=4"\n')
    resolved = resolve(load_scenario_config(scenario), load_settings(), None, "blue")
    assert resolved.choices.faults == parse_fault_spec("rate=0.3,seed=4")
    scenario.write_text('[appworld]\nfaults = "rate=0.3,seed=4,kinds=slow"\n')
    with pytest.raises(BadInputError, match="unknown kind 'slow'"):
        load_scenario_config(scenario)
