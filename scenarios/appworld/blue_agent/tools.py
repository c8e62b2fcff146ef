"""AgentBeats tool file of the LLM Blue (`agentbeats run_agent ... --tool tools.py`).

AgentBeats imports this file by path, outside any package: it must import our installed
`blue_agent` package, never a sibling module. Each tool is a thin adapter over
`blue_agent.llm_tools`; names avoid `__` so they never clash with the gateway's MCP tools.
"""

from __future__ import annotations

import os

import agentbeats as ab

from blue_agent import code_llm_blue, llm_tools, sdk_log
from kernel.scrubber import register_secrets, scrub_process_output, secrets_in_environment

# The agent process prints what its model endpoint answers (errors and tracebacks included): keep
# the values of its API keys out of its output and logs, whatever the endpoint echoes.
register_secrets(secrets_in_environment(dict(os.environ)))
scrub_process_output()
sdk_log.silence()  # the Green posts this Blue's calls from the gateway's log, under the Blue's name
code_llm_blue.install()  # a code-mode battle (the gateway lists only `execute`) runs our ReAct loop


@ab.tool
def read_api_doc(app_name: str, api_name: str) -> str:
    """Read the documentation of one AppWorld API: parameters (types, required, defaults) and response shape.

    Args:
        app_name: the app, e.g. "spotify" (the part before "__" in a tool name).
        api_name: the API, e.g. "login" (the part after "__").
    """
    return llm_tools.read_api_doc(app_name, api_name)


@ab.tool
async def call_appworld_tool(tool_name: str, arguments_json: str = "{}", mcp_url: str = "") -> str:
    """Call an AppWorld tool through the gateway when it is not available to you as a direct MCP tool.

    Passwords come back as {{password:<app>}} and access tokens as {{access_token:<app>}}: pass
    these placeholders as argument values and they are filled in for you.

    Args:
        tool_name: the tool, "<app>__<api>", e.g. "simple_note__search_notes".
        arguments_json: the arguments as a JSON object, e.g. {"page_index": 0, "access_token": "{{access_token:simple_note}}"}.
        mcp_url: the "MCP endpoint (Streamable HTTP)" URL from the task message; empty for the default gateway.
    """
    return await llm_tools.call_appworld_tool(tool_name, arguments_json, mcp_url)
