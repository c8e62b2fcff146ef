"""Evaluate a whole split: a pool of world slots, resume, AppWorld's metrics, the HTML report.

The map of this folder (tau2-bench style layers; each module's docstring states its contract):
- the builder: `evaluate` (`run_eval`: request -> task set, manifest, executor, runner; outputs at the end);
- the batch layer: `runner` (N slots, one battle per slot at a time, infra retries, Ctrl-C safety),
  `attempts` (attempt numbers, earlier attempts kept as evidence, interrupted attempts);
- where battles run: `executor_plan` (the kind, the plan and the `Executor` protocol), `executor`
  (the local pool and the chooser), `live` (the real slots and battles: `WorldSlot`, `open_blue`,
  `run_on_slot`), `ray/` (the Ray executor: slot actors on a cluster, see its docstring);
- the run directory: `checkpoint` (layout, manifest fingerprint, atomic writes, event log),
  `run_lock` (one writer per run directory), `taskinfo` (each task's `task.json`), `world_digest`
  (digests of the world and of each task's folder: a Ray node's world, `compare`'s same-world check);
- results: `rows` (files on disk -> rows and results, for `eval` and `report` alike), `aggregate`
  (pure metrics: TGC, SGC, by difficulty, pass^k, means), `scenarios` (SGC's unit, judged against
  the task set);
- comparing runs: `compare` (two runs' paired figures; the statistics are `green_agent.stats`);
- what the operator sees: `progress` (the live line on stderr), `report_data`, `charts`,
  `report_html` (the self-contained HTML report), `compare_report`.
"""
