"""The AppWorld MCP gateway: one MCP tool per AppWorld API, forwarded to an APIs server, every call logged.

Modules, one concern each: `tools` (docs -> tool specs), `forwarding` (HTTP to the APIs server),
`redaction`, `call_log` (atomic JSONL writer/reader), `scope` (active battle, scope, completion
signal), `gateway` (transport-free call handling), `server` (MCP transports + control endpoints),
`client` (in-process client for the Green and Blue agents), `models` (config and control JSON).
Run it with `appworld-green mcp ...`.
"""

from mcp_gateway.client import GatewayClient
from mcp_gateway.models import BattleScope, BattleState, CompletionReply, GatewayConfig, HealthReply

__all__ = ["BattleScope", "BattleState", "CompletionReply", "GatewayClient", "GatewayConfig", "HealthReply"]
