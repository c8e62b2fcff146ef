"""Step 10: close the task world and release the gateway, on every path (also after an error or Ctrl-C)."""

from __future__ import annotations

import logging

from green_agent.appworld_client import AppWorldClient
from kernel.errors import WrongActiveTaskError
from green_agent.gateway_client import GatewayClient
from green_agent.models.result import CleanupRecord

log = logging.getLogger(__name__)


def cleanup(client: AppWorldClient, task_id: str | None, world_opened: bool, initialize_attempted: bool,
            gateway: GatewayClient | None, gateway_battle_set: bool) -> CleanupRecord:
    """Step 10: `POST /close` and `DELETE /control/battle`; never raises, records what failed.

    Args:
        client: env server client.
        task_id: the battle's task (None if step 1 never produced one).
        world_opened: `/initialize` succeeded.
        initialize_attempted: `/initialize` was sent (it may have opened a world before failing).
        gateway: gateway control client, if the battle used one.
        gateway_battle_set: the gateway was told about this battle.
    """
    record = CleanupRecord(ok=True)
    if gateway is not None and gateway_battle_set:
        try:
            record.refused_calls = gateway.end_battle()
            record.gateway_released = True
        except Exception as exc:
            record.gateway_released = False
            record.errors.append(f"gateway: {exc}")
    if task_id is not None and initialize_attempted:
        try:
            client.close(task_id)
            record.closed = True
        except WrongActiveTaskError as exc:
            if world_opened:
                record.closed = False
                record.errors.append(f"close: {exc}")
            else:
                record.closed = None  # /initialize failed before opening a world: nothing to close
        except Exception as exc:
            record.closed = False
            record.errors.append(f"close: {exc}")
    record.ok = not record.errors
    if record.errors:
        log.warning("cleanup incomplete: %s", "; ".join(record.errors))
    return record
