"""Our loopback launcher of AppWorld's servers (scenarios/appworld/world/serve.py) on the real world."""

from __future__ import annotations

import pytest
import requests

from green_agent.runtime.appworld_servers import AppWorldServers
from kernel.world_data import WorldData


@pytest.mark.e2e
def test_the_same_task_can_be_initialized_again_and_again(appworld_servers: AppWorldServers) -> None:
    """Regression: AppWorld 0.1.3's APIs server cached thread-bound sqlite connections, so a second
    /initialize of one task from another pool thread failed (500). serve.py shares them."""
    world = WorldData(appworld_servers.spec.appworld_root)
    task_id = world.split("dev")[0]
    env, guard = appworld_servers.spec.env_url, appworld_servers.credentials
    for attempt in range(4):
        reply = requests.post(f"{env}/initialize", headers=guard.guard_headers(), json={
            "task_id": task_id, "experiment_name": f"reinit_{attempt}",
            "remote_apis_url": guard.guarded_url(appworld_servers.spec.apis_url)}, timeout=300)
        assert reply.status_code == 200, (attempt, reply.text[:500], appworld_servers.apis.log_tail())
        assert reply.json()["output"]["task_id"] == task_id
        closed = requests.post(f"{env}/close", json={"task_id": task_id}, headers=guard.guard_headers(), timeout=60)
        assert closed.status_code == 200


@pytest.mark.e2e
def test_servers_answer_only_requests_that_carry_the_slot_guard(appworld_servers: AppWorldServers) -> None:
    """What the agent under test can try with ports and paths alone (AppWorld's own routes) gets a bare 404."""
    env, apis, guard = appworld_servers.spec.env_url, appworld_servers.spec.apis_url, appworld_servers.credentials
    task_id = WorldData(appworld_servers.spec.appworld_root).split("dev")[0]
    probes = [("GET", f"{apis}/supervisor/account_passwords"), ("GET", f"{apis}/supervisor/profile"),
              ("GET", f"{apis}/admin/users"), ("GET", f"{apis}/dbs"), ("GET", f"{env}/"), ("GET", f"{env}/tasks/{task_id}"),
              ("POST", f"{env}/execute"), ("POST", f"{env}/evaluate"), ("POST", f"{env}/close"),
              ("POST", f"{env}/initialize"), ("GET", f"{apis}/_guard/{'x' * 43}/supervisor/profile")]
    for method, url in probes:
        reply = requests.request(method, url, json={"task_id": task_id}, timeout=30,
                                 headers={"X-AppWorld-Guard": "not-the-secret"})
        assert (reply.status_code, reply.json()) == (404, {"detail": "Not Found"}), (method, url, reply.text[:200])
    assert requests.get(f"{env}/", headers=guard.guard_headers(), timeout=30).status_code == 200
    prefixed = requests.get(guard.guarded_url(apis) + "/dbs", timeout=30)  # the env server's own way in
    assert prefixed.status_code == 200


@pytest.mark.e2e
def test_servers_listen_on_loopback_only(appworld_servers: AppWorldServers) -> None:
    import psutil

    ports = {appworld_servers.spec.env_port, appworld_servers.spec.apis_port}
    listening = [c for c in psutil.net_connections(kind="tcp") if c.status == psutil.CONN_LISTEN and c.laddr.port in ports]
    assert listening and all(c.laddr.ip == "127.0.0.1" for c in listening)
