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
"""

from __future__ import annotations

import asyncio
import hmac
from collections import OrderedDict
from collections.abc import Collection
from datetime import datetime, timezone
from typing import Literal

from mcp_gateway.call_api import DOCS_TOOLS
from mcp_gateway.models import BattleScope, BattleState, CompletionReply, RefusalReason

COMPLETE_TASK_TOOL = "supervisor__complete_task"
_KEPT_BATTLES = 64
"""Completion records kept for finished battles (late long-polls still get the answer)."""


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

    def set_battle(self, request: BattleScope) -> BattleState:
        """Make `request` the active battle; its completion flag starts cleared."""
        unknown = sorted(set(request.scope or ()) - self.tool_names)
        self.battle = BattleState(**request.model_dump(), set_at=datetime.now(timezone.utc), unknown_tools=unknown)
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
            return None if battle.launch_url_allowed else "token_required"
        if battle.token is not None and hmac.compare_digest(token.encode(), battle.token.encode()):
            return None
        return "wrong_token"

    def count_refusal(self, reason: RefusalReason) -> None:
        if self.battle is not None:
            self.battle.refused[reason] = self.battle.refused.get(reason, 0) + 1

    def clear_battle(self) -> BattleState | None:
        """Forget the active battle (back to every tool, no attribution); return it."""
        previous, self.battle, self._allowed, self._advise = self.battle, None, None, False
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
