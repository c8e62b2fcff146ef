"""AppWorldClient against mocked env-server endpoints.

Every mock names the endpoint and the response shape of AppWorld 0.1.3 it stands for.
"""

from __future__ import annotations

import json

import pytest
import requests
import responses

from green_agent.appworld_client import AppWorldClient
from kernel.errors import AppWorldUnavailableError, UnknownTaskError, WorldChangedError, WrongActiveTaskError

ENV = "http://127.0.0.1:18000"
TASK = "7c1a0e2_1"
TASK_INFO = {"task_id": TASK, "instruction": "Create a note.", "datetime": "2023-05-18T12:00:00",
             "supervisor": {"first_name": "Ava", "last_name": "Lopez", "email": "ava@x.com", "phone_number": "555"}}
EVALUATION = {"success": False, "difficulty": 1, "num_tests": 2,
              "passes": [{"requirement": "no model changes", "label": "no_op_pass"}],
              "failures": [{"requirement": "note created", "trace": "AssertionError", "label": "no_op_fail"}]}


def client() -> AppWorldClient:
    return AppWorldClient(ENV, backoff_s=0.0)


@responses.activate
def test_initialize_sends_remote_apis_url_and_never_ground_truth_mode() -> None:
    # POST /initialize {"task_id", ...init fields} -> {"output": TaskInfo}
    responses.post(f"{ENV}/initialize", json={"output": TASK_INFO})
    c = client()
    info = c.initialize(TASK, "b1_7c1a0e2_1", "http://127.0.0.1:19000", max_interactions=50)
    body = json.loads(responses.calls[0].request.body)
    assert body == {"task_id": TASK, "experiment_name": "b1_7c1a0e2_1", "max_interactions": 50,
                    "remote_apis_url": "http://127.0.0.1:19000"}
    assert "ground_truth_mode" not in body  # B3
    assert info.supervisor.email == "ava@x.com" and c.active_task_id == TASK


@responses.activate
def test_evaluate_always_suppresses_errors_and_parses_tests() -> None:
    # POST /evaluate {"task_id", "suppress_errors", "report"} -> {"output": EvaluationRecord}
    responses.post(f"{ENV}/evaluate", json={"output": EVALUATION})
    evaluation = client().evaluate(TASK)
    assert json.loads(responses.calls[0].request.body)["suppress_errors"] is True  # B2
    assert not evaluation.success and evaluation.num_tests == 2
    assert evaluation.failures[0].label == "no_op_fail" and evaluation.passes[0].label == "no_op_pass"


@responses.activate
def test_persist_state_executes_pass() -> None:
    # POST /execute {"task_id", "code"} -> {"output": "Execution successful."}
    responses.post(f"{ENV}/execute", json={"output": "Execution successful."})
    client().persist_state(TASK)
    assert json.loads(responses.calls[0].request.body) == {"task_id": TASK, "code": "pass"}  # B5


@responses.activate
def test_persist_state_failure_is_infrastructure() -> None:
    # POST /execute -> {"output": "Execution failed. Traceback: ..."} (agent errors never give HTTP errors)
    responses.post(f"{ENV}/execute", json={"output": "Execution failed. Traceback:\nboom"})
    with pytest.raises(AppWorldUnavailableError, match="persist"):
        client().persist_state(TASK)


@responses.activate
def test_500_for_wrong_active_task_names_url_and_task() -> None:
    # POST /task_completed for a task that is not the active world -> HTTP 500 "Internal Server Error" (B1)
    responses.post(f"{ENV}/task_completed", body="Internal Server Error", status=500)
    with pytest.raises(WrongActiveTaskError) as exc:
        client().task_completed("other_2")
    assert ENV in str(exc.value) and "other_2" in str(exc.value)
    assert len(responses.calls) == 1  # a 500 is an answer, not a connection error: no retry


@responses.activate
def test_500_for_the_world_this_client_opened_says_it_changed_behind_its_back() -> None:
    # POST /initialize -> {"output": TaskInfo}; later /task_completed for that task -> 500: the world is gone
    responses.post(f"{ENV}/initialize", json={"output": TASK_INFO})
    responses.post(f"{ENV}/task_completed", body="Internal Server Error", status=500)
    c = client()
    c.initialize(TASK, "exp", None)
    with pytest.raises(WorldChangedError, match="behind the Green's back") as exc:
        c.task_completed(TASK)
    assert isinstance(exc.value, WrongActiveTaskError) and TASK in str(exc.value)
    with pytest.raises(WrongActiveTaskError) as other:  # a task it never opened: the plain B1 answer
        c.task_completed("other_2")
    assert not isinstance(other.value, WorldChangedError)


@responses.activate
def test_unknown_task_lookup_is_unknown_task_error() -> None:
    # GET /tasks/{id} for an id the data does not hold -> HTTP 500
    responses.get(f"{ENV}/tasks/nope_1", body="Internal Server Error", status=500)
    responses.get(f"{ENV}/tasks/{TASK}", json={"output": TASK_INFO})
    c = client()
    with pytest.raises(UnknownTaskError, match="nope_1"):
        c.get_task("nope_1")
    assert c.has_task(TASK) and not c.has_task("nope_1")


@responses.activate
def test_connection_refused_is_retried_for_idempotent_calls_only() -> None:
    # Server down: every request fails to connect.
    responses.post(f"{ENV}/task_completed", body=requests.ConnectionError("refused"))
    responses.post(f"{ENV}/initialize", body=requests.ConnectionError("refused"))
    responses.post(f"{ENV}/execute", body=requests.ConnectionError("refused"))
    c = client()
    with pytest.raises(AppWorldUnavailableError, match="unreachable") as exc:
        c.task_completed(TASK)
    assert f"{ENV}/task_completed" in str(exc.value)
    assert len(responses.calls) == 3
    for call in (lambda: c.initialize(TASK, "e", None), lambda: c.execute(TASK, "pass")):
        before = len(responses.calls)
        with pytest.raises(AppWorldUnavailableError):
            call()
        assert len(responses.calls) == before + 1  # never retried blindly


@responses.activate
def test_connection_error_then_success_recovers() -> None:
    # POST /close: first attempt refused, second answers {"output": null}
    responses.post(f"{ENV}/close", body=requests.ConnectionError("refused"))
    responses.post(f"{ENV}/close", json={"output": None})
    client().close(TASK)
    assert len(responses.calls) == 2


@responses.activate
def test_read_timeout_is_reported_not_retried() -> None:
    # POST /evaluate that never answers in time (server busy on a long /execute)
    responses.post(f"{ENV}/evaluate", body=requests.ReadTimeout("slow"))
    with pytest.raises(AppWorldUnavailableError, match="did not answer"):
        client().evaluate(TASK)
    assert len(responses.calls) == 1


@responses.activate
def test_malformed_json_and_missing_output() -> None:
    # POST /task_completed answering 200 with a non-JSON body, then with JSON lacking "output"
    responses.post(f"{ENV}/task_completed", body="<html>proxy error</html>", status=200)
    with pytest.raises(AppWorldUnavailableError, match="malformed JSON"):
        client().task_completed(TASK)
    responses.replace(responses.POST, f"{ENV}/task_completed", json={"result": True})
    with pytest.raises(AppWorldUnavailableError, match="no 'output'"):
        client().task_completed(TASK)


@responses.activate
def test_evaluate_with_unexpected_shape_or_422() -> None:
    # POST /evaluate -> {"output": "<plain-text report>"} (what report=true gives), then a 422 validation error
    responses.post(f"{ENV}/evaluate", json={"output": "Report: 1/2"})
    with pytest.raises(AppWorldUnavailableError, match="EvaluationRecord"):
        client().evaluate(TASK)
    responses.replace(responses.POST, f"{ENV}/evaluate", json={"detail": "bad"}, status=422)
    with pytest.raises(AppWorldUnavailableError, match="HTTP 422"):
        client().evaluate(TASK)


@responses.activate
def test_health_save_logs_save_state_and_api_docs() -> None:
    # GET / -> {"message"}; POST /save_logs -> {"output": null}; POST /save_state -> {"output": "<state_id>"};
    # GET /api_docs -> {app: {api: doc}} (not wrapped in "output")
    responses.get(f"{ENV}/", json={"message": "Welcome to AppWorld Server!"})
    responses.post(f"{ENV}/save_logs", json={"output": None})
    responses.post(f"{ENV}/save_state", json={"output": "s0"})
    responses.get(f"{ENV}/api_docs", json={"supervisor": {"complete_task": {"path": "/supervisor/message"}}})
    c = client()
    assert "Welcome" in c.health()
    c.save_logs(TASK)
    assert c.save_state(TASK, "s0") == "s0"
    assert "complete_task" in c.api_docs()["supervisor"]
