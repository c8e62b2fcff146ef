"""The active battle of a gateway: attribution, tool scope, and the completion signal.

One gateway serves one world slot, so at most one battle is active at a time. The Green sets it
(`PUT /control/battle`), Blue's calls are attributed to it and scoped, and a successful
`supervisor__complete_task` wakes the Green's long-poll at once (asyncio.Event).
All methods run on the server's event loop.

Policies of a scoped battle: `advise` lists the scope, AppWorld's api_docs tools and `call_api`,
and serves every tool (a call outside the scope is served and marked out of scope); `enforce`
lists and serves only the scope. An unscoped battle (scope None) lists and serves every tool.

Access (`authorize`): a call belongs to the running battle only if it came through that battle's
token URL (or the plain launch URL, where the battle allows it). With no battle set, every call is
refused; clearing the battle revokes its token at once, so a Blue left over from an earlier battle
can touch nothing, and nothing it does is attributed to the next battle. Refusals are counted on the
running battle's state (`refused`), never attributed to it.

A battle's calls stay in the battle (`generation`): every set or clear starts a new generation, and a
call is forwarded only if its generation is still the running one *and* its episode is not over at the
moment it is sent upstream (`admits`, checked under the forwarder's one-at-a-time lock, from the
forwarding thread). A call queued behind the lock when its battle ends is refused there, never sent
into the next battle. The episode ends at the first successful `complete_task` (closed under the same
lock, so a call queued behind it is refused) or when the Green ends it (`end_episode`, at the deadline).
In code mode AppWorld's step is an execution: a `complete_task` inside one leaves the episode open for the
rest of that execution (its later calls, a second `complete_task` included, act on the world as in AppWorld's
REPL) while every later `execute` is refused; it closes when that execution ends (`complete_in_execution`,
`end_execution`). The tokens of recently ended battles are remembered (as digests), so a late call of one is
logged as that battle's, never the next one's;
`drain` waits until the generation's calls in flight have been answered and logged, so a trajectory
copied after it holds every call that changed the world. At most `MAX_IN_FLIGHT` calls of one battle are
in flight at once; more are refused.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
from collections import OrderedDict
from collections.abc import Collection
from datetime import datetime, timezone
from typing import Literal

from mcp_gateway.call_api import DOCS_TOOLS
from mcp_gateway.models import DRAIN_TIMEOUT_S, BattleScope, BattleState, CompletionReply, EpisodeEndedReply, RefusalReason

COMPLETE_TASK_TOOL = "supervisor__complete_task"
_KEPT_BATTLES = 64
"""Completion records kept for finished battles (late long-polls still get the answer)."""
MAX_IN_FLIGHT = 32
"""Calls of one battle in flight at once (the APIs server takes one at a time; more only queue)."""



def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class _Completion:
    def __init__(self) -> None:
        self.event = asyncio.Event()
        self.at: datetime | None = None
        self.status: Literal["success", "fail"] | None = None


class ScopeController:
    """Holds the active battle and per-battle completion state."""

    def __init__(self, tool_names: Collection[str]) -> None:
        self.tool_names = frozenset(tool_names)
        self.battle: BattleState | None = None
        self._allowed: frozenset[str] | None = None
        self._advise = False
        self._completions: OrderedDict[str, _Completion] = OrderedDict()
        self.generation = 0
        self._episode_over: int | None = None
        self._completing: int | None = None
        self._executing: dict[int, int] = {}
        self._in_flight: dict[int, int] = {}
        self._ended_tokens: OrderedDict[str, tuple[str, str | None]] = OrderedDict()
        self._settled = asyncio.Condition()

    def set_battle(self, request: BattleScope) -> BattleState:
        """Make `request` the active battle; its completion flag starts cleared."""
        if self.battle is not None:
            self.clear_battle()
        self.generation += 1
        unknown = sorted(set(request.scope or ()) - self.tool_names)
        self.battle = BattleState(**{**request.model_dump(), "faults": request.faults},  # the spec keeps its salt
                                  set_at=datetime.now(timezone.utc), unknown_tools=unknown)
        self._allowed = None if request.scope is None else frozenset(request.scope) & self.tool_names
        self._advise = request.scope is not None and request.policy == "advise"
        self._completions.pop(request.battle_id, None)
        self._completions[request.battle_id] = _Completion()
        while len(self._completions) > _KEPT_BATTLES:
            self._completions.popitem(last=False)
        return self.battle

    def authorize(self, token: str | None) -> RefusalReason | None:
        """None if a call presented with `token` (None: the plain launch URL) belongs to the running battle."""
        battle = self.battle
        if battle is None:
            return "no_battle"
        if token is None:
            refusal: RefusalReason | None = None if battle.launch_url_allowed else "token_required"
        elif battle.token is not None and hmac.compare_digest(token.encode(), battle.token.encode()):
            refusal = None
        else:
            refusal = "wrong_token"
        if refusal is None and self.generation in (self._episode_over, self._completing):
            return "episode_over"
        return refusal

    def ended_battle_of(self, token: str | None) -> tuple[str, str | None] | None:
        """(battle id, task id) of a recently ended battle whose token this is (its late calls are its own)."""
        return self._ended_tokens.get(_digest(token)) if token else None

    # -- the battle's calls in flight (event loop), and admission upstream (forwarding thread) ---------
    def begin_call(self) -> int | RefusalReason:
        """Register an authorized call of the running battle: its generation, or why it is refused."""
        if self._in_flight.get(self.generation, 0) >= MAX_IN_FLIGHT:
            return "too_many_calls"
        self._in_flight[self.generation] = self._in_flight.get(self.generation, 0) + 1
        return self.generation

    async def end_call(self, generation: int) -> None:
        """The call of `generation` is answered and logged."""
        left = self._in_flight.get(generation, 1) - 1
        if left > 0:
            self._in_flight[generation] = left
            return
        self._in_flight.pop(generation, None)
        async with self._settled:
            self._settled.notify_all()

    def admits(self, generation: int) -> RefusalReason | None:
        """May a call of `generation` be sent upstream now? Called under the forwarder's lock, from its thread."""
        if generation != self.generation:
            return "battle_ended"
        if self._episode_over == generation:
            return "episode_over"
        return None

    def episode_is_over(self, generation: int) -> bool:
        """True once `generation`'s episode is over (complete_task succeeded, the Green ended it, or a newer battle runs)."""
        return generation != self.generation or self._episode_over == generation

    def close_episode(self, generation: int) -> None:
        """complete_task of `generation` succeeded (under the forwarder's lock): its later calls are refused."""
        if generation == self.generation:
            self._episode_over = generation

    # -- code mode: the episode ends when the execution that completed the task ends (AppWorld's step) --------
    def complete_in_execution(self, generation: int) -> None:
        """complete_task of `generation` succeeded inside an execution (under the forwarder's lock): that execution's
        later calls still go upstream, every later `execute` is refused; `end_execution` closes the episode."""
        if generation == self.generation and self._episode_over != generation:
            self._completing = generation

    def completing(self, generation: int) -> bool:
        """True while the execution that completed `generation`'s task runs (or the episode is over)."""
        return self.episode_is_over(generation) or self._completing == generation

    def begin_execution(self, generation: int) -> None:
        self._executing[generation] = self._executing.get(generation, 0) + 1

    async def end_execution(self, generation: int) -> None:
        """An execution of `generation` ended: if it completed the task, the episode is over now."""
        left = self._executing.get(generation, 1) - 1
        if left > 0:
            self._executing[generation] = left
        else:
            self._executing.pop(generation, None)
        if self._completing == generation:
            self._completing = None
            self.close_episode(generation)
        async with self._settled:
            self._settled.notify_all()

    async def wait_executions(self, generation: int, timeout_s: float) -> bool:
        """Wait until no execution of `generation` runs (at most `timeout_s`); True if none does."""
        async with self._settled:
            try:
                await asyncio.wait_for(self._settled.wait_for(lambda: not self._executing.get(generation)),
                                       timeout=timeout_s)
            except asyncio.TimeoutError:
                pass
        return not self._executing.get(generation)

    async def end_episode(self, battle_id: str, timeout_s: float = DRAIN_TIMEOUT_S) -> EpisodeEndedReply:
        """The Green ends the running battle's episode (deadline or completion) and waits for its calls to settle."""
        if self.battle is None or self.battle.battle_id != battle_id:
            return EpisodeEndedReply(battle_id=battle_id, ended=False, drained=True, in_flight=0)
        self._episode_over = self.generation
        left = await self.drain(self.generation, timeout_s)
        return EpisodeEndedReply(battle_id=battle_id, ended=True, drained=left == 0, in_flight=left)

    async def drain(self, generation: int, timeout_s: float = DRAIN_TIMEOUT_S) -> int:
        """Wait until no call of `generation` is in flight (at most `timeout_s`); the calls still in flight."""
        async with self._settled:
            try:
                await asyncio.wait_for(self._settled.wait_for(lambda: not self._in_flight.get(generation)),
                                       timeout=timeout_s)
            except asyncio.TimeoutError:
                pass
        return self._in_flight.get(generation, 0)

    def count_refusal(self, reason: RefusalReason) -> None:
        if self.battle is not None:
            self.battle.refused[reason] = self.battle.refused.get(reason, 0) + 1

    def clear_battle(self) -> BattleState | None:
        """Forget the active battle (back to every tool, no attribution; its queued calls are refused); return it."""
        previous, self.battle, self._allowed, self._advise = self.battle, None, None, False
        self.generation += 1
        if previous is not None and previous.token:
            self._ended_tokens[_digest(previous.token)] = (previous.battle_id, previous.task_id)
            while len(self._ended_tokens) > _KEPT_BATTLES:
                self._ended_tokens.popitem(last=False)
        return previous

    def visible_tools(self) -> frozenset[str]:
        """Gateway tool names listed now (`call_api` aside: see `offers_call_api`)."""
        if self._allowed is None:
            return self.tool_names
        return self._allowed | (frozenset(DOCS_TOOLS) & self.tool_names) if self._advise else self._allowed

    @property
    def offers_call_api(self) -> bool:
        """True under an advised scope: `call_api` is listed and reaches any tool."""
        return self._advise

    def in_scope(self, tool_name: str) -> bool:
        """The tool is listed now (an unscoped battle lists every tool)."""
        return tool_name in self.visible_tools()

    def allows(self, tool_name: str) -> bool:
        """The tool may be called now: listed, or any tool under advise."""
        return tool_name in self.tool_names if self._advise else self.in_scope(tool_name)

    def mark_completed(self, battle_id: str | None, status: str) -> None:
        """Record a successful complete_task call of `battle_id` and wake its waiters."""
        completion = self._completions.get(battle_id) if battle_id else None
        if completion is None or completion.event.is_set():
            return
        completion.at = datetime.now(timezone.utc)
        completion.status = "fail" if status == "fail" else "success"
        completion.event.set()

    def completion(self, battle_id: str) -> CompletionReply:
        item = self._completions.get(battle_id)
        if item is None or not item.event.is_set():
            return CompletionReply(battle_id=battle_id, completed=False)
        return CompletionReply(battle_id=battle_id, completed=True, at=item.at, status=item.status)

    async def wait_completion(self, battle_id: str, wait_s: float) -> CompletionReply:
        """Return as soon as `battle_id` completed, or after `wait_s` seconds.

        A battle the gateway never heard of answers at once (completed false): waiting would be
        a Green bug (it must set the battle first).
        """
        item = self._completions.get(battle_id)
        if item is not None and wait_s > 0 and not item.event.is_set():
            try:
                await asyncio.wait_for(item.event.wait(), timeout=wait_s)
            except asyncio.TimeoutError:
                pass
        return self.completion(battle_id)
