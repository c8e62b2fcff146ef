"""An a2a-sdk 1.x client, run in its own virtualenv (.venv-a2a1, `make venvs`), that sends one assessment request.

    .venv-a2a1/bin/python tests/a2a1_client.py URL REQUEST_JSON [--no-streaming]

Resolves the agent card at URL with a2a-sdk 1.x's resolver (which maps a 0.3 card), creates the client
with 1.x's ClientFactory (which picks its 0.3 compatibility transport for a 0.3 card), sends the request
text, and prints one JSON object: the a2a-sdk version, every JSON-RPC method it posted with the
`A2A-Version` header it sent, the final task state, the status texts, the artifacts' data and texts.
It imports nothing from this repository (1.x and our 0.3 cannot share an interpreter).
"""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from importlib.metadata import version
from typing import Any

import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import Message, Part, Role, SendMessageRequest, TaskState
from google.protobuf.json_format import MessageToDict


async def main(url: str, text: str, streaming: bool) -> dict[str, Any]:
    posted: list[dict[str, Any]] = []

    async def record(request: httpx.Request) -> None:
        if request.method == "POST":
            body = json.loads(request.content or b"{}")
            posted.append({"method": body.get("method"), "a2a_version": request.headers.get("A2A-Version")})

    out: dict[str, Any] = {"a2a_sdk": version("a2a-sdk"), "posted": posted, "state": None, "statuses": [],
                           "data": [], "texts": [], "message": None}
    async with httpx.AsyncClient(timeout=600, event_hooks={"request": [record]}) as http:
        card = await A2ACardResolver(http, url).get_agent_card()
        out["card"] = {"name": card.name, "interfaces": [MessageToDict(i) for i in card.supported_interfaces],
                       "streaming": card.capabilities.streaming}
        client = ClientFactory(ClientConfig(streaming=streaming, httpx_client=http)).create(card)
        message = Message(role=Role.ROLE_USER, parts=[Part(text=text)], message_id=uuid.uuid4().hex)
        artifacts = []
        async for event in client.send_message(SendMessageRequest(message=message)):
            kind = event.WhichOneof("payload")
            if kind == "message":
                out["message"] = " ".join(p.text for p in event.message.parts)
            elif kind == "status_update":
                _status(out, event.status_update.status)
            elif kind == "artifact_update":
                artifacts.append(event.artifact_update.artifact)
            elif kind == "task":
                _status(out, event.task.status)
                artifacts.extend(event.task.artifacts)
    for artifact in artifacts:
        for part in artifact.parts:
            if part.HasField("data"):
                out["data"].append(MessageToDict(part.data))
            elif part.text:
                out["texts"].append(part.text)
    return out


def _status(out: dict[str, Any], status: Any) -> None:
    out["state"] = TaskState.Name(status.state).removeprefix("TASK_STATE_").lower()
    if status.HasField("message"):
        out["statuses"].append(" ".join(p.text for p in status.message.parts))


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1], open(sys.argv[2]).read(), "--no-streaming" not in sys.argv))))
