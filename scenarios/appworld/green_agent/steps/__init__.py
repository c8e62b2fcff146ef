"""Plan steps that are not modules of their own: setup (2), scope (3), report (10), cleanup (11).

The other steps live in `task_ids` (1), `task_message` (4), `dispatch` (5), `completion` (6),
`archive` (7), `metrics` (8) and `judge` (9); `plan` runs them all in order.
"""
