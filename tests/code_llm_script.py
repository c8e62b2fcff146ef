"""The scripted model of the code-mode LLM tests: it errs, talks without code, then solves f0a1c01_1.

f0a1c01_1 asks how many of the supervisor's Simple Note notes are tagged 'recipe' (the pack's reference
solution: log in, page through `search_notes(tags=["recipe"])`, `complete_task(answer=<count>)`). Reply 1
reads a key the profile does not have (a KeyError traceback comes back), reply 2 holds no code (the
corrective message comes back), reply 3 is the solution, reusing reply 1's `profile` variable (the REPL
keeps state).
"""

from __future__ import annotations

from typing import Any

TASK = "f0a1c01_1"
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
