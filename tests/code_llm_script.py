"""The scripted model of the code-mode LLM tests: it errs, talks without code, then solves f0a1c01_1.

f0a1c01_1 asks how many of the supervisor's Simple Note notes are tagged 'recipe' (the pack's reference
solution: log in, page through `search_notes(tags=["recipe"])`, `complete_task(answer=<count>)`). Reply 1
reads a key the profile does not have (a KeyError traceback comes back), reply 2 holds no code (the
corrective message comes back), reply 3 is the solution, reusing reply 1's `profile` variable (the REPL
keeps state).
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any, NamedTuple

from fake_openai import FakeOpenAI
from test_batch_e2e import CLI, assert_nothing_left, cli_env, slot_ports

TASK = "f0a1c01_1"
API_KEY = "sk-test-code-llm-0123456789"
"""The scripted run's API key: it must show up in no file the run writes."""
RAISES = '''I need the supervisor's email first.
```python
profile = apis.supervisor.show_profile()
print(profile["e_mail"])
```'''
TALKS = "The key was wrong; I will look at the profile's keys next."
SOLVES = '''The profile has `email`. Now count the notes tagged recipe, page by page.
```python
passwords = {p["account_name"]: p["password"] for p in apis.supervisor.show_account_passwords()}
token = apis.simple_note.login(username=profile["email"], password=passwords["simple_note"])["access_token"]
recipes, page_index = [], 0
while True:
    page = apis.simple_note.search_notes(tags=["recipe"], page_index=page_index, page_limit=20, access_token=token)
    if not page:
        break
    recipes += page
    page_index += 1
print(len(recipes))
apis.supervisor.complete_task(answer=len(recipes))
```'''
SCRIPT = [RAISES, TALKS, SOLVES]


def last_user_message(request: dict[str, Any]) -> str:
    """The last user message of one recorded chat-completions request body."""
    return next(m["content"] for m in reversed(request["messages"]) if m["role"] == "user")


class ScriptedRun(NamedTuple):
    """One code-mode eval of TASK by the llm Blue against the scripted model (`scripted_code_eval` fixture)."""

    out: Path
    proc: subprocess.CompletedProcess[str]
    requests: list[dict[str, Any]]
    """Every recorded request to the fake (path and body)."""

    @property
    def chat_bodies(self) -> list[dict[str, Any]]:
        return [r["body"] for r in self.requests if r["path"].endswith("/chat/completions")]


def run_scripted_code_eval(appworld_root: Path, work: Path) -> ScriptedRun:
    """Run the eval once (real slot, gateway and sandbox; the model scripted), checking nothing is left behind."""
    out = work / "llm"
    ports_arg, ports = slot_ports(1)
    with FakeOpenAI(chat_replies=list(SCRIPT)) as fake:
        env = {**cli_env(appworld_root, work), "OPENAI_API_KEY": API_KEY, "OPENAI_BASE_URL": fake.base_url,
               "OPENAI_AGENTS_DISABLE_TRACING": "1"}
        proc = subprocess.run([CLI, "eval", "--task-ids", TASK, "--blue", "llm", "--interaction", "code",
                               "--predictor", "ground_truth", "--workers", "1", "--out", str(out), "--slot-ports",
                               ports_arg, "--deadline", "120"], capture_output=True, text=True, env=env, timeout=600)
        requests = list(fake.requests)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert_nothing_left(ports)
    return ScriptedRun(out, proc, requests)
