"""A paraphrase arm's wording in AppWorld's own answer: `supervisor.show_active_task` says what the agent was asked.

The Green hands the gateway the battle's wording with the battle (`BattleScope.instruction`, None: the original).
The call is forwarded as any call (the world is untouched: AppWorld's evaluator judges as always), and the answer's
`instruction` is replaced by the battle's wording before anything is logged, traced or returned, so the agent, the
call log's trace and the battle page all see what the agent received, in tools and code mode alike. Every other
answer, and every failed one, is left as it is.
"""

from __future__ import annotations

from mcp_gateway.forwarding import ApiReply

SHOW_ACTIVE_TASK_TOOL = "supervisor__show_active_task"
INSTRUCTION_KEY = "instruction"


def reworded(tool: str, reply: ApiReply, instruction: str | None) -> ApiReply:
    """`reply`, its instruction replaced by the battle's wording when `tool` is show_active_task and it answered."""
    if instruction is None or tool != SHOW_ACTIVE_TASK_TOOL or not reply.ok or not isinstance(reply.body, dict) \
            or INSTRUCTION_KEY not in reply.body:
        return reply
    return reply.model_copy(update={"body": {**reply.body, INSTRUCTION_KEY: instruction}})
