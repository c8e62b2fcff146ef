"""Purples we ship: A2A agents that play AppWorld through the in-band protocol `appworld-a2a-tools/1`.

They are agents under test like the Blues (they import the kernel, never the Green): `reference`
replays the task's reference solution (`reference-traced`, `traced`: the same, with OpenTelemetry spans of its
own under the battle's trace context), `noop` completes at once, `llm` asks an OpenAI-compatible chat
model with function calling. Run one with `appworld-green purple --kind K --port P`.
"""
