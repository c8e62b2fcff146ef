"""The 11 steps of a battle, one module each, named after the step; `green_agent.engine.sequencer` runs them.

1 `task_id`, 2 `setup`, 3 `scope`, 4 `task_message`, 5 `dispatch`, 6 `wait`, 7 `archive`,
8 `metrics`, 9 `judge`, 10 `cleanup`, 11 `report`.
"""
