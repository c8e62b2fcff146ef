"""The reliability profile: how much of an agent's score survives a flaky world, and (issue 58) how it is asked,
how consistent it is over trials, how safe it is.

One package, as `green_agent/rejudge/` is one. Its modules, bottom up:
- `faults`: a battle's injected faults as a results row's block, and a run's totals by kind (read from the
  trajectory, where `green_agent.trajectory.faults` counts them per battle as every other trajectory figure);
- `ratio`: the paired, scenario-clustered ratio of two runs over the same scenarios, and its interval;
- `r_fault`: two runs (without and with faults) -> their `Reliability` block (`compare` uses it too);
- `report`: that block in words, for the terminal and a page section;
- `run`: `appworld-green reliability`, the runs and the files.
The records stay in `green_agent.models.reliability` (every record on disk lives in `green_agent/models`, as
re-judging's do), and the gateway keeps what only it can do: the fault plan and the answers (`mcp_gateway.faults`).
This module imports nothing, so that a batch module can import one of the modules above without loading the rest.
"""
