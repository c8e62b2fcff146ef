"""Evaluate a whole split: a pool of world slots, resume, AppWorld's metrics, the HTML report.

Layers (tau2-bench style), each module's docstring states its contract:
- `runner`: the batch layer (N slots, one battle per slot at a time, infra retries, Ctrl-C safety);
- `live`: the real slots and battles it drives (the core's `WorldSlot`, `open_blue`, `run_on_slot`);
- `evaluate`: the builder (`run_eval`: task set, manifest, resume, outputs);
- `checkpoint`: run directory layout, manifest fingerprint, atomic writes, event log;
- `aggregate`: pure metrics (TGC, SGC, by difficulty, pass^k); `rows`: files on disk -> results;
- `progress`, `report_data`, `charts`, `report_html`: the live line and the HTML report.
"""
