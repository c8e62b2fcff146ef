"""Validation of the task pack BEFORE anything is written (no AppWorld import).

Every problem is reported as `<task or scenario id> (<module file>): field <name>: <what is wrong>`;
`validate_pack` collects all problems and raises one `PackError` listing them (exit code 2).
"""

from __future__ import annotations

import ast
import json
import re
from collections import Counter
from textwrap import dedent
from typing import Any

from pack import PackError
from pack.types import PARAPHRASE_STRENGTHS, SPLITS, ScenarioDef, TaskDef
from pack.world import APPS

SCENARIO_ID_PATTERN = re.compile(r"^f0[0-9a-f]{5}$")
GOLD_API_PATTERN = re.compile(r"apis\.(\w+)\.(\w+)")
EVALUATE_PARAMS = ["test", "public_data", "private_data", "main_user", "models", "ground_truth_answer"]
NON_REQUIRED_APPS = {"supervisor", "api_docs", "admin"}
LABELS = ("no_op_fail", "no_op_pass")


def source_of(code: str) -> str:
    """Normalised source as the builder writes it (dedented, stripped, one trailing newline)."""
    return dedent(code).strip() + "\n"


def requirements_of(evaluation: str) -> list[str]:
    """The requirement of every `with test(\"\"\"...\"\"\")` block, exactly as AppWorld's TestTracker sees it.

    Raises:
        ValueError: a `test(...)` block whose argument is not a plain string literal.
    """
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source_of(evaluation))):
        if not isinstance(node, ast.With):
            continue
        for item in node.items:
            call = item.context_expr
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "test":
                if len(call.args) != 1 or not isinstance(call.args[0], ast.Constant) or not isinstance(call.args[0].value, str):
                    raise ValueError(f"line {call.lineno}: test(...) must take one string literal (the requirement)")
                found.append((call.lineno, dedent(call.args[0].value).strip()))
    return [requirement for _, requirement in sorted(found)]  # source order (ast.walk is breadth-first)


def gold_apis(solution: str) -> list[str]:
    """Sorted `app.api` names the reference solution calls (the task's gold required APIs)."""
    return sorted({f"{app}.{api}" for app, api in GOLD_API_PATTERN.findall(source_of(solution))})


def apps_of(solution: str) -> list[str]:
    """AppWorld's `required_apps`: apps the solution calls, without supervisor/api_docs/admin."""
    return sorted({api.split(".")[0] for api in gold_apis(solution)} - NON_REQUIRED_APPS)


def validate_pack(scenarios: list[ScenarioDef]) -> None:
    """Raise `PackError` listing every problem of the pack; return quietly when it is well formed."""
    problems: list[str] = []
    seen: dict[str, str] = {}
    for scenario in scenarios:
        where = f"{scenario.scenario_id} ({scenario.source})"
        if scenario.scenario_id in seen:
            problems.append(f"{where}: field scenario_id: duplicate id, also defined in {seen[scenario.scenario_id]}")
        seen.setdefault(scenario.scenario_id, scenario.source)
        problems += _scenario_problems(scenario, where)
    if problems:
        raise PackError("malformed task pack:\n  " + "\n  ".join(problems))


def _scenario_problems(scenario: ScenarioDef, where: str) -> list[str]:
    problems: list[str] = []
    if not isinstance(scenario.scenario_id, str) or not SCENARIO_ID_PATTERN.match(scenario.scenario_id):
        problems.append(f"{where}: field scenario_id: must be 7 lower-case hex characters starting with 'f0'")
    if scenario.split not in SPLITS:
        problems.append(f"{where}: field split: must be one of {', '.join(SPLITS)}, got {scenario.split!r}")
    if not isinstance(scenario.title, str) or not scenario.title.strip():
        problems.append(f"{where}: field title: must be a non-empty string")
    unknown_apps = sorted(set(scenario.apps) - set(APPS))
    if unknown_apps or not scenario.apps:
        problems.append(f"{where}: field apps: must name apps among {', '.join(APPS)}; unknown: {unknown_apps}")
    if scenario.seed_base is not None and not callable(scenario.seed_base):
        problems.append(f"{where}: field seed_base: must be a function seed_base(ctx) or None")
    variants = [task.variant for task in scenario.tasks]
    if sorted(variants) != [1, 2, 3]:
        problems.append(f"{where}: field tasks: need exactly 3 variants numbered 1, 2, 3; got {variants}")
    for variant, count in Counter(variants).items():
        if count > 1:
            problems.append(f"{scenario.scenario_id}_{variant} ({scenario.source}): field variant: duplicate task id")
    for task in scenario.tasks:
        if not isinstance(task, TaskDef):
            problems.append(f"{where}: field tasks: every entry must be a TaskDef")
            continue
        problems += _task_problems(task, f"{scenario.scenario_id}_{task.variant} ({scenario.source})")
    return problems


def _task_problems(task: TaskDef, where: str) -> list[str]:
    problems: list[str] = []
    if not isinstance(task.variant, int) or isinstance(task.variant, bool) or not 1 <= task.variant <= 3:
        problems.append(f"{where}: field variant: must be 1, 2 or 3")
    if not isinstance(task.instruction, str) or len(task.instruction.strip()) < 10:
        problems.append(f"{where}: field instruction: must be a sentence (at least 10 characters)")
    if not isinstance(task.difficulty, int) or isinstance(task.difficulty, bool) or not 1 <= task.difficulty <= 3:
        problems.append(f"{where}: field difficulty: must be 1, 2 or 3, got {task.difficulty!r}")
    for name in ("answer", "private_data", "public_data"):
        try:
            json.dumps(getattr(task, name))
        except (TypeError, ValueError):
            problems.append(f"{where}: field {name}: must be JSON-serialisable")
    for name in ("private_data", "public_data"):
        if not isinstance(getattr(task, name), dict):
            problems.append(f"{where}: field {name}: must be a dict")
    if isinstance(task.answer, str) and task.answer.strip().lower() in task.instruction.lower():
        problems.append(f"{where}: field instruction: gives the answer away ({task.answer!r})")
    if task.seed_task is not None and not callable(task.seed_task):
        problems.append(f"{where}: field seed_task: must be a function seed_task(ctx) or None")
    problems += _paraphrase_problems(task, where)
    problems += _solution_problems(task, where)
    problems += _evaluation_problems(task, where)
    return problems


def _paraphrase_problems(task: TaskDef, where: str) -> list[str]:
    """Every strength has at least one wording, each a sentence that is not the instruction itself."""
    if not isinstance(task.paraphrases, dict):
        return [f"{where}: field paraphrases: must be a dict strength -> tuple of wordings"]
    problems = [f"{where}: field paraphrases: unknown strength {name!r} (known: {', '.join(PARAPHRASE_STRENGTHS)})"
                for name in task.paraphrases if name not in PARAPHRASE_STRENGTHS]
    for strength in PARAPHRASE_STRENGTHS:
        wordings = task.paraphrases.get(strength)
        if not isinstance(wordings, tuple) or not wordings:
            problems.append(f"{where}: field paraphrases: needs at least one {strength!r} wording (a tuple of strings)")
            continue
        for number, text in enumerate(wordings, start=1):
            if not isinstance(text, str) or len(text.strip()) < 10:
                problems.append(f"{where}: field paraphrases: {strength} variant {number} must be a sentence")
            elif " ".join(text.lower().split()) == " ".join(task.instruction.lower().split()):
                problems.append(f"{where}: field paraphrases: {strength} variant {number} is the instruction itself")
    return problems


def _solution_problems(task: TaskDef, where: str) -> list[str]:
    try:
        tree = ast.parse(source_of(task.solution))
    except (SyntaxError, TypeError) as exc:
        return [f"{where}: field solution: does not parse: {exc}"]
    function = _top_level_function(tree, "solution")
    if function is None:
        return [f"{where}: field solution: must define a top-level function solution(apis, requester)"]
    problems: list[str] = []
    if [arg.arg for arg in function.args.args] != ["apis", "requester"]:
        problems.append(f"{where}: field solution: signature must be solution(apis, requester)")
    completions = [node for node in ast.walk(tree) if _is_call_to(node, "complete_task")]
    if not completions:
        problems.append(f"{where}: field solution: must finish with apis.supervisor.complete_task(...)")
    gives_answer = any(_passes_answer(call) for call in completions)
    if task.is_question and completions and not gives_answer:
        problems.append(f"{where}: field answer: a question task's solution must call complete_task(answer=...)")
    if not task.is_question and gives_answer:
        problems.append(f"{where}: field answer: is None (action task) but the solution passes an answer to complete_task")
    declared = sorted(set(task.required_apps))
    if declared != apps_of(task.solution) or any(app not in APPS for app in declared):
        problems.append(
            f"{where}: field required_apps: must list exactly the apps the solution calls "
            f"(without supervisor): expected {apps_of(task.solution)}, got {list(task.required_apps)}"
        )
    return problems


def _evaluation_problems(task: TaskDef, where: str) -> list[str]:
    try:
        tree = ast.parse(source_of(task.evaluation))
        requirements = requirements_of(task.evaluation)
    except (SyntaxError, TypeError, ValueError) as exc:
        return [f"{where}: field evaluation: {exc}"]
    problems: list[str] = []
    function = _top_level_function(tree, "evaluate")
    if function is None or [arg.arg for arg in function.args.args] != EVALUATE_PARAMS:
        problems.append(f"{where}: field evaluation: must define evaluate({', '.join(EVALUATE_PARAMS)})")
    if not requirements:
        problems.append(f"{where}: field evaluation: has no `with test(\"\"\"...\"\"\"):` block")
    for requirement, count in Counter(requirements).items():
        if not requirement:
            problems.append(f"{where}: field evaluation: a test requirement is empty")
        elif count > 1:
            problems.append(f"{where}: field evaluation: requirement text repeated: {requirement[:60]!r}")
    labels = list(task.test_labels)
    if len(labels) != len(requirements):
        problems.append(f"{where}: field test_labels: {len(labels)} labels for {len(requirements)} test blocks")
    bad = [label for label in labels if label not in LABELS]
    if bad:
        problems.append(f"{where}: field test_labels: unknown labels {bad}; use {LABELS}")
    for label in LABELS:
        if label not in labels:
            problems.append(f"{where}: field test_labels: needs at least one {label!r} test")
    if not any(_is_call_to(node, "answer") for node in ast.walk(tree)):
        problems.append(f"{where}: field evaluation: must check the answer with test.answer(predicted, ground_truth_answer)")
    used = {node.attr for node in ast.walk(tree) if _is_attribute_of(node, "private_data")}
    missing = sorted(used - set(task.private_data if isinstance(task.private_data, dict) else {}))
    if missing:
        problems.append(f"{where}: field private_data: the evaluation reads missing keys {missing}")
    return problems


def _top_level_function(tree: ast.Module, name: str) -> ast.FunctionDef | None:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    return None


def _is_call_to(node: Any, attribute: str) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == attribute


def _is_attribute_of(node: Any, name: str) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == name


def _passes_answer(call: ast.Call) -> bool:
    for keyword in call.keywords:
        if keyword.arg == "answer":
            return not (isinstance(keyword.value, ast.Constant) and keyword.value.value is None)
    return bool(call.args)
