"""`appworld-green paraphrase` against the scripted OpenAI-compatible stand-in (tests/fake_openai.py, standing in
for a chat-completions model): it writes a set whose every line carries its gate record, keeps rejected lines
(a changed amount, a model's entailment "no", a reply that is not JSON) with their reasons, stores and prints the
rejection rate; without a key it exits 2 saying what it needs."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from fake_openai import FakeOpenAI
from kernel.paraphrase_set import load_set

CLI = [sys.executable, "-m", "green_agent.cli", "--env-file", "/nonexistent"]
MINI = ["f0a7c07_2", "f0b2d02_1"]


def scripted(body: dict[str, Any]) -> str:
    """Generation: two wordings per request (for the $30 task, the first changes the amount; the strong request of
    f0b2d02_1 gets a refusal). Entailment: "no" for B -> A on the second wording of f0b2d02_1, "yes" otherwise."""
    system, user = (message["content"] for message in body["messages"])
    if "rewrite task requests" in system:
        original = user.split("Request: ", 1)[1]
        if "Farid" in original and "Strength: strong" in user:
            return "Sorry, I can't help with that."
        first = "Please handle this for me: " + original.replace("$30", "$35")
        return json.dumps({"paraphrases": [first, "Could you do this: " + original]})
    second_farid = "Could you do this" in user and "Farid" in user
    return json.dumps({"a_entails_b": True, "b_entails_a": not second_farid, "why": "scripted"})


def run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, "paraphrase", *args], capture_output=True, text=True, timeout=120, env=env)


def test_paraphrase_writes_a_gated_set_with_its_rejections(world_copy, tmp_path: Path) -> None:
    root = world_copy(splits={"mini": MINI})
    out = tmp_path / "set.jsonl"
    with FakeOpenAI(scripted) as fake:
        env = {**os.environ, "APPWORLD_ROOT": str(root), "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": fake.base_url}
        done = run(["--split", "mini", "--strengths", "mild+strong", "--variants", "2", "--out", str(out),
                    "--model", "stand-in-model"], env)
    assert done.returncode == 0, done.stderr
    lines = load_set(out).lines
    assert [(p.task_id, p.strength, p.variant) for p in lines] == [
        (task, strength, variant) for task in MINI for strength in ("mild", "strong") for variant in (1, 2)]
    verdicts = {(p.task_id, p.strength, p.variant): p.gate for p in lines}
    assert all(p.source == "stand-in-model" and p.gate is not None for p in lines)
    assert verdicts["f0a7c07_2", "mild", 1].reason == "changed amount: 30 -> 35"
    assert verdicts["f0a7c07_2", "mild", 1].entailment_model is None  # never judged: the checks rejected it
    assert verdicts["f0a7c07_2", "mild", 2].passed and verdicts["f0a7c07_2", "mild", 2].entailment_model == \
        "stand-in-model" and "two_way_entailment" in verdicts["f0a7c07_2", "mild", 2].checks
    assert verdicts["f0b2d02_1", "mild", 1].passed
    assert verdicts["f0b2d02_1", "mild", 2].reason.startswith("entailment: it does not entail the original")
    assert "not {\"paraphrases\"" in verdicts["f0b2d02_1", "strong", 1].reason
    summary = json.loads(out.with_name("set.jsonl.summary.json").read_text())
    assert summary["lines"] == 8 and summary["rejected"] == 5 and summary["rejection_rate"] == 5 / 8
    assert summary["by_strength"]["strong"] == {"lines": 4, "rejected": 3}
    assert re.search(r"5 rejected \(rejection rate 62\.5%\)", done.stdout)


def test_paraphrase_without_a_key_exits_2_saying_what_it_needs(tmp_path: Path) -> None:
    done = run(["--split", "dev", "--out", str(tmp_path / "set.jsonl")], {**os.environ, "OPENAI_API_KEY": ""})
    assert done.returncode == 2 and "OPENAI_API_KEY" in done.stderr
    assert not (tmp_path / "set.jsonl").exists()
    bad = run(["--split", "dev", "--strengths", "mild+loud", "--out", str(tmp_path / "x")],
              {**os.environ, "OPENAI_API_KEY": "sk-test"})
    assert bad.returncode == 2 and "loud" in bad.stderr
