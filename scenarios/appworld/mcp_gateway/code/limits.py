"""AppWorld's limits on one REPL, counted by the gateway outside the agent's process, refused in AppWorld's words.

AppWorld keeps its limits inside the process that runs the agent's code (its requester's call count, the
environment's execution count); our child mirrors them for an honest REPL, but code can reset a counter,
forge protocol lines or replace a function, so the session counts again where the code cannot reach:
- calls per execution (AppWorld's `max_api_calls_per_interaction`, 1000): the call past the limit is not
  relayed (nor logged); it raises inside the code with the sentence of AppWorld's `NumRequestsLimitError`;
- executions (`max_interactions`): an execution past the limit never reaches the REPL; its output is
  AppWorld's for the code it runs instead, `raise Exception(f"Maximum number of executions (N) reached.")`.
  An execution counts unless the child says it did not (AppWorld counts neither a syntax error nor code its
  guard refused) AND it made no API call and was not ended: a child that lies gains no call by it;
- output: cut to `max_output_chars` with the child's own note (AppWorld has no cap; 20,000 is ours).
Calls in total are bounded by the two: executions times calls per execution.
"""

from __future__ import annotations


def calls_exceeded(limit: int) -> str:
    """AppWorld's `NumRequestsLimitError` message."""
    return (f"Number of requests exceeded the limit of {limit}. "
            "This potentially means that you have an infinite loop in your code.")


def executions_exceeded(limit: int) -> str:
    """The output of an execution past `max_interactions`, as AppWorld's REPL shows it."""
    return ('Execution failed. Traceback:\n  File "<python-input>", line 1, in <module>\n'
            f'    raise Exception(f"Maximum number of executions ({limit}) reached.")\n'
            f"Exception: Maximum number of executions ({limit}) reached.")


def cut_output(output: str, limit: int) -> str:
    """`output` cut to `limit` characters with the note the child adds (so a cut looks the same from either)."""
    if len(output) <= limit:
        return output
    return output[:limit] + f"\n[output cut: {len(output) - limit} more characters over the {limit}-character limit]"


def counts(claimed: object, api_calls: int, killed: bool) -> bool:
    """Whether an execution counts toward `max_interactions` (module docstring)."""
    return claimed is not False or api_calls > 0 or killed
