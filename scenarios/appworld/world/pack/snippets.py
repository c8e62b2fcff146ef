"""Builders of the code strings scenarios share: solution preambles, pagination loops, evaluation templates.

Plain string functions, no AppWorld import (like every pack module). `AUTHORING.md` shows how a scenario
uses them. Conventions:

- A **block** is whole lines of code, each ending with a newline, with no blank line before or after it.
  Solution blocks are indented for the body of `solution` (4 spaces), unless an `indent` says otherwise.
- `solution(*steps)` puts one blank line between two steps; `block(*parts)` joins parts with none.
  Steps and parts may be written as triple-quoted strings that start and end with a newline: those outer
  newlines are dropped, the blank lines inside are kept.
- The builder writes `dedent(source).strip()`: what these functions return is, line for line, the
  generated `solution.py` / `evaluation.py` of the task.
"""

from __future__ import annotations

from textwrap import dedent, indent as indent_lines

LINE_LENGTH = 120
"""Longest generated line before a call is wrapped (the repository's line length)."""
PAGE_LIMIT = 20
"""`page_limit` of every pagination loop (AppWorld's maximum; the default is 5)."""


def block(*parts: str) -> str:
    """`parts` one after the other, no blank line between them; empty parts are skipped."""
    return "".join(part.strip("\n") + "\n" for part in parts if part.strip("\n"))


def solution(*steps: str) -> str:
    """Source of `def solution(apis, requester):` made of `steps`, one blank line between two steps."""
    return "def solution(apis, requester):\n" + "\n".join(block(step) for step in steps)


# --- solutions: logging in -------------------------------------------------------------------------

PASSWORDS = '    passwords = {p["account_name"]: p["password"] for p in apis.supervisor.show_account_passwords()}\n'
"""The supervisor's app passwords, as `passwords[app]`."""


def login_name(app: str) -> str:
    """The supervisor's profile field an app logs in with: the phone app uses the phone number."""
    return "phone_number" if app == "phone" else "email"


def login(app: str, username: str, token: str = "token") -> str:
    """One line: log in to `app` as `username` (a code expression), keeping the access token in `token`."""
    return f'    {token} = apis.{app}.login(username={username}, password=passwords["{app}"])["access_token"]\n'


def login_preamble(app: str, token: str = "token", profile: bool = False) -> str:
    """The opening of most solutions: read the passwords and the supervisor's profile, log in to `app`.

    With `profile=False` the profile field the app needs is kept as a variable (`email` or `phone_number`);
    with `profile=True` the whole profile is (`profile["email"]`, `profile["phone_number"]`), for solutions
    that log in to a second app with the other field.
    """
    field = login_name(app)
    if profile:
        return block(PASSWORDS, "    profile = apis.supervisor.show_profile()",
                     login(app, f'profile["{field}"]', token))
    return block(PASSWORDS, f'    {field} = apis.supervisor.show_profile()["{field}"]', login(app, field, token))


# --- solutions: pagination -------------------------------------------------------------------------

def api_call(target: str, api: str, args: list[str], indent: int = 4, align: bool = False) -> str:
    """`<target> = apis.<api>(<args>)` as a block, wrapped when longer than `LINE_LENGTH`.

    Wrapped the way the formatter does it (arguments on one line of their own between the parentheses),
    or, with `align=True`, filling each line and aligning the next under the opening parenthesis.
    """
    head = f"{' ' * indent}{target} = apis.{api}("
    line = head + ", ".join(args) + ")"
    if len(line) <= LINE_LENGTH:
        return line + "\n"
    if not align:
        inner = " " * (indent + 4) + ", ".join(args)
        if len(inner) > LINE_LENGTH:
            raise ValueError(f"arguments of apis.{api} do not fit on one line: {inner.strip()}")
        return f"{head}\n{inner}\n{' ' * indent})\n"
    continuation = " " * len(head)
    lines, current, fresh = [], head, True
    for index, arg in enumerate(args):
        text = arg + (")" if index == len(args) - 1 else ",")
        if not fresh and len(current) + 1 + len(text) > LINE_LENGTH:
            lines.append(current)
            current, fresh = continuation, True
        current += text if fresh else " " + text
        fresh = False
    return "\n".join(lines + [current]) + "\n"


def page_loop(api: str, args: str = "", body: str = "", token: str = "token", indent: int = 4,
              align: bool = False, condition: str = "True") -> str:
    """Walk every page of a paginated API: `body` runs once per non-empty `page`.

    `api` is `app.api_name`; `args` its other arguments as source (`'relationship="coworker"'`); `body`
    the loop body as source (dedented here and indented under the loop); `token` the access-token variable;
    `indent` the loop's own indentation; `condition` the `while` condition (e.g. stop once something is found).
    """
    call_args = [arg.strip() for arg in _split_args(args)]
    call_args += ["page_index=page_index", f"page_limit={PAGE_LIMIT}", f"access_token={token}"]
    pad = " " * indent
    inner = " " * (indent + 4)
    return block(
        f"{pad}page_index = 0",
        f"{pad}while {condition}:",
        api_call("page", api, call_args, indent=indent + 4, align=align),
        f"{inner}if not page:",
        f"{inner}    break",
        indent_lines(dedent(body).strip("\n"), inner),
        f"{inner}page_index += 1",
    )


def paginate(var: str, api: str, args: str = "", token: str = "token", indent: int = 4, align: bool = False) -> str:
    """`<var>`: the list of the items of every page of `api` (see `page_loop` for the arguments)."""
    return block(f"{' ' * indent}{var} = []",
                 page_loop(api, args, f"{var} += page", token=token, indent=indent, align=align))


def _split_args(args: str) -> list[str]:
    """Top-level comma-separated arguments of `args` (commas inside brackets or strings do not split)."""
    parts, depth, quote, current = [], 0, "", ""
    for char in args:
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(current)
            current = ""
            continue
        current += char
    return [part for part in parts + [current] if part.strip()]


# --- evaluations -----------------------------------------------------------------------------------

EVALUATION_HEADER = '''
import json


def evaluate(test, public_data, private_data, main_user, models, ground_truth_answer):
    task = models.end.supervisor.Task.all()[0]
    try:
        predicted_answer = json.loads(task.answer)
    except json.JSONDecodeError:
        predicted_answer = task.answer
    test.task_completed = task.status == "success"
'''
"""The opening every evaluation shares: read the supervisor's task row and its answer."""

Check = tuple[str, str]
"""One test of an evaluation: its label and its `with test(...)` block (see `check`)."""


def check(label: str, requirement: str, body: str) -> Check:
    """One `with test(\"\"\"<requirement>\"\"\"):` block running `body`, labelled `"no_op_fail"` or `"no_op_pass"`.

    `requirement` and `body` are dedented here; the requirement keeps its line breaks (the builder takes
    `test_data.json` from them), the body its relative indentation.
    """
    text = indent_lines(dedent(requirement).strip("\n"), " " * 8)
    code = indent_lines(dedent(body).strip("\n"), " " * 8)
    return label, f'    with test("""\n{text}\n    """):\n{code}\n'


def checks(*parts: str | Check) -> dict[str, object]:
    """The `evaluation` and `test_labels` of a task, to unpack into it: `TaskDef(..., **checks(...))`.

    `parts` in source order: code strings (setup lines, no test) and `check(...)` tests. The evaluation is
    the shared header, a blank line, then the parts; the labels are the checks' labels, in the same order.
    """
    code = [part if isinstance(part, str) else part[1] for part in parts]
    labels = tuple(part[0] for part in parts if not isinstance(part, str))
    return {"evaluation": EVALUATION_HEADER + "\n" + block(*code), "test_labels": labels}


ANSWER_TEST_BODY = "test.answer(predicted_answer, ground_truth_answer)"
"""What an answer test runs (every task has one, an action task's expects null)."""

NULL_ANSWER_CHECK = check("no_op_fail", "assert the task was completed with no answer (null).", ANSWER_TEST_BODY)
"""The answer test of an action task (a no-op never completes the task)."""

NOTHING_CHANGED_CHECK = check("no_op_pass", "assert no model changed (a question must not modify anything).",
                              'test.case(models.changed_model_names(), "is_falsy")')
"""The collateral-damage test of a question task."""


def only_changed(*models: str) -> str:
    """The test line: no model changed but `models` (through an `allowed = {...}` line when too long)."""
    allowed = "{" + ", ".join(f'"{name}"' for name in models) + "}"
    rest = f'test.case(models.changed_model_names() - {allowed}, "is_falsy")'
    if 8 + len(rest) > LINE_LENGTH:
        rest = f'allowed = {allowed}\ntest.case(models.changed_model_names() - allowed, "is_falsy")'
    return rest


def added_only_check(requirement: str, model: str, *also_allowed: str) -> Check:
    """`no_op_pass`: no existing row of `model` was updated or removed, and no model changed but `model`
    and `also_allowed` (e.g. the thread rows an email updates). A no-op passes it: check the additions apart.
    """
    return check("no_op_pass", requirement, f'''
added, updated, removed = models.changed_records("{model}")
test.case(len(updated) + len(removed), "==", 0)
{only_changed(model, *also_allowed)}
''')


def kept_rows_check(requirement: str, model: str, *, before: str = "", after: str = "",
                    changed_only: tuple[str, ...] | None = None) -> Check:
    """`no_op_pass`: no row of `model` was added or removed, and no model changed but `changed_only`.

    The updated rows stay in `updated` for `after` (the tests of what an update may change); `before`
    runs first. `changed_only` defaults to `(model,)`; `()` leaves that test out. A no-op passes it.
    """
    kept = f'''
added, updated, removed = models.changed_records("{model}")
test.case(len(added) + len(removed), "==", 0)
'''
    allowed = (model,) if changed_only is None else changed_only
    changed = only_changed(*allowed) if allowed else ""
    return check("no_op_pass", requirement, block(dedent(before), kept, dedent(after), changed))


def one_added_check(requirement: str, model: str, row: str, more: str = "") -> Check:
    """`no_op_fail`: exactly one row of `model` was added, owned by the supervisor, titled `private_data.title`.

    The new row is kept as `row` for the tests after this one; `more` adds lines checking it further.
    """
    app = model.split(".")[0]
    return check("no_op_fail", requirement, block(f'''
added, updated, removed = models.changed_records("{model}")
test.case(len(added), "==", 1)
{row} = added[0]
owner = models.end.{app}.User.find_from(main_user)
test.case({row}.user_id, "==", owner.id)
test.case({row}.title, "==", private_data.title, normalize_text=True)
''', dedent(more)))


def answer_check(what: str, verb: str = "matches") -> Check:
    """The answer test of a question task: `assert the answer <verb> <what>.`"""
    return check("no_op_fail", f"assert the answer {verb} {what}.", ANSWER_TEST_BODY)


def question_checks(what: str, verb: str = "matches") -> dict[str, object]:
    """A question task's evaluation: the answer is `what` (`answer_check`), and nothing changed."""
    return checks(answer_check(what, verb), NOTHING_CHANGED_CHECK)


def action_checks(*parts: str | Check) -> dict[str, object]:
    """An action task's evaluation: the null-answer test, then `parts` (see `checks`).

    An evaluation with setup code before its first test uses `checks(setup, NULL_ANSWER_CHECK, ...)`.
    """
    return checks(NULL_ANSWER_CHECK, *parts)
