"""The AppWorld MCP gateway: one MCP tool per AppWorld API, forwarded to an APIs server, every call logged.

Modules, one concern each: `tools` (docs -> tool specs), `forwarding` (HTTP to the APIs server),
`redaction`, `call_log` (atomic JSONL writer/reader), `scope` (active battle, access, scope,
completion signal), `gateway` (transport-free call handling), `server` (the Blue-facing MCP listener
and the Green's control listener), `models` (config and control JSON), `cli` (its command line).
Run it with `python -m mcp_gateway ...` or `appworld-green mcp ...`.
"""

from mcp_gateway.models import BattleScope, BattleState, CompletionReply, GatewayConfig, HealthReply

__all__ = ["BattleScope", "BattleState", "CompletionReply", "GatewayConfig", "HealthReply"]
