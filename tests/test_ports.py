"""Port allocation for slots and agents, and HTTP sessions for loopback services.

CI once gave the APIs server and the gateway of one test slot the same port (three `free_port()`
calls in a row; the kernel offered a just-released port again), and every battle on that slot died
at /initialize with HTTP 500. These tests pin the two guards: `free_port` never repeats a port in
a process, and a slot refuses duplicate ports before starting anything. A process given a port band
(each pytest-xdist worker of the suite is) draws from that band only.
"""

from __future__ import annotations

import collections
import socket
import threading
from pathlib import Path

import pytest
from pydantic import ValidationError

from green_agent.batch.live import choose_slots, parse_slot_ports
from kernel.errors import BadInputError, InfrastructureError
from green_agent.http_sessions import is_loopback, session_for
from kernel.ports import PORT_BAND_ENV, free_port, port_band
from green_agent.runtime.slot import SlotSpec


def test_free_port_never_repeats_even_when_the_kernel_offers_the_same_port(monkeypatch: pytest.MonkeyPatch) -> None:
    offered = iter([47001, 47001, 47001, 47002, 47001, 47003])

    class RepeatingSocket(socket.socket):
        def getsockname(self):  # the kernel's answer for bind(("127.0.0.1", 0))
            return ("127.0.0.1", next(offered))

    monkeypatch.delenv(PORT_BAND_ENV, raising=False)  # the kernel's choice (a suite worker has a band)
    monkeypatch.setattr(socket, "socket", RepeatingSocket)
    monkeypatch.setattr("kernel.ports._RECENT_PORTS", collections.deque(maxlen=1024))
    assert [free_port(), free_port(), free_port()] == [47001, 47002, 47003]


def test_many_real_free_ports_are_distinct_and_bindable() -> None:
    ports = [free_port() for _ in range(300)]
    assert len(set(ports)) == 300
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", ports[-1]))


def test_a_port_band_is_kept_and_a_spent_one_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    low = (port_band() or (23000,))[0] + 40  # inside this worker's own band when it has one
    monkeypatch.setenv(PORT_BAND_ENV, f"{low}-{low + 29}")
    monkeypatch.setattr("kernel.ports._RECENT_PORTS", collections.deque(maxlen=1024))
    ports = [free_port(avoid={low}) for _ in range(10)]
    assert len(set(ports)) == 10 and all(low < p <= low + 29 for p in ports), ports
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", ports[-1]))
    monkeypatch.setenv(PORT_BAND_ENV, f"{low}-{low}")
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", low))
        holder.listen()
        with pytest.raises(InfrastructureError, match=rf"no fresh port band {low}-{low} on 127.0.0.1"):
            free_port()
    for bad in ("20000", "x-y", "80-90", "30000-20000"):
        monkeypatch.setenv(PORT_BAND_ENV, bad)
        with pytest.raises(InfrastructureError, match=PORT_BAND_ENV):
            free_port()


def test_free_port_is_distinct_across_threads() -> None:
    results: list[int] = []
    lock = threading.Lock()

    def take() -> None:
        mine = [free_port() for _ in range(50)]
        with lock:
            results.extend(mine)

    threads = [threading.Thread(target=take) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == len(set(results)) == 200


def test_a_slot_refuses_two_servers_on_one_port() -> None:
    with pytest.raises(ValidationError, match="three different ports"):
        SlotSpec(env_port=9100, apis_port=9200, gateway_port=9200)
    assert SlotSpec(env_port=9100, apis_port=9200, gateway_port=9300).apis_port == 9200


def test_slot_ports_option_names_the_duplicate() -> None:
    with pytest.raises(BadInputError, match=r"--slot-ports '9100:9200:9200'.*three different ports"):
        parse_slot_ports("9100:9201:9302, 9100:9200:9200")


def test_free_port_forgets_old_handouts_so_a_long_lived_green_never_runs_dry(monkeypatch: pytest.MonkeyPatch) -> None:
    offered = iter([47001, 47002, 47001])

    class RepeatingSocket(socket.socket):
        def getsockname(self):
            return ("127.0.0.1", next(offered))

    monkeypatch.delenv(PORT_BAND_ENV, raising=False)  # the kernel's choice (a suite worker has a band)
    monkeypatch.setattr(socket, "socket", RepeatingSocket)
    monkeypatch.setattr("kernel.ports._RECENT_PORTS", collections.deque(maxlen=1))
    assert [free_port(), free_port(), free_port()] == [47001, 47002, 47001]


def test_free_port_keeps_off_ports_promised_to_a_slot(monkeypatch: pytest.MonkeyPatch) -> None:
    offered = iter([47001, 47002])

    class RepeatingSocket(socket.socket):
        def getsockname(self):
            return ("127.0.0.1", next(offered))

    monkeypatch.delenv(PORT_BAND_ENV, raising=False)  # the kernel's choice (a suite worker has a band)
    monkeypatch.setattr(socket, "socket", RepeatingSocket)
    monkeypatch.setattr("kernel.ports._RECENT_PORTS", collections.deque(maxlen=1024))
    urls = SlotSpec(env_port=47001, apis_port=47005, gateway_port=47006).urls()
    assert urls.ports() == {47001, 47005, 47006}
    assert free_port(avoid=urls.ports()) == 47002


@pytest.mark.parametrize(("url", "loopback"), [
    ("http://127.0.0.1:8000", True), ("http://localhost:9000/x", True), ("http://[::1]:10000", True),
    ("http://127.5.0.1:80", True), ("https://api.agentbeats.org", False), ("http://10.0.0.5:8000", False),
])
def test_loopback_sessions_ignore_environment_proxies(url: str, loopback: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.invalid:3128")
    monkeypatch.delenv("NO_PROXY", raising=False)
    session = session_for(url)
    assert session.trust_env is (not loopback)
    settings = session.merge_environment_settings(url, {}, None, None, None)
    assert bool(settings["proxies"]) is (not loopback)


def test_a_host_that_is_no_address_is_not_loopback() -> None:
    assert not is_loopback("not a url") and not is_loopback("http://127.0.0.1.example.com/")


@pytest.mark.parametrize(("first", "workers"), [(8, 1), (6, 3), (-1, 1)])
def test_slots_past_the_last_index_are_a_usage_error_naming_the_way_out(first: int, workers: int) -> None:
    with pytest.raises(BadInputError, match=r"slots are numbered 0\.\.7: lower --first-slot, or give explicit ports"):
        choose_slots(workers, first)


def test_a_slot_another_run_holds_locked_is_skipped_and_a_resume_on_it_is_refused(
        tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    """Stand-in: every port is free (`port_is_free` -> True), so only the slot locks decide."""
    import green_agent.batch.live as live
    from green_agent.runtime.slot import WorldSlot
    from kernel.errors import SlotBusyError

    monkeypatch.setattr(live, "port_is_free", lambda port: True)
    other_run = WorldSlot(SlotSpec.for_index(0), appworld_root=tmp_path, appworld_python=tmp_path / "python",
                          log_dir=tmp_path, mcp_log_path=tmp_path / "calls.jsonl", lock_dir=tmp_path).lock
    other_run.acquire()  # what a battle on slot 0 holds while it runs (another fd: flock conflicts even in-process)
    try:
        assert [s.index for s in choose_slots(2, 0, lock_dir=tmp_path)] == [1, 2]
        with pytest.raises(SlotBusyError, match=r"--resume: slot 0 is busy \(its lock .*slot-loopback-8000\.lock"):
            choose_slots(1, 0, exact=True, wait_s=0.3, lock_dir=tmp_path)  # exact: never slot 1 instead
    finally:
        other_run.release()
    assert [s.index for s in choose_slots(2, 0, lock_dir=tmp_path)] == [0, 1]
    assert [s.index for s in choose_slots(1, 0, exact=True, wait_s=0.3, lock_dir=tmp_path)] == [0]


def test_when_locks_leave_too_few_slots_the_error_says_so(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    import green_agent.batch.live as live
    from green_agent.runtime.slot import SlotLock, slot_key
    from kernel.errors import InfrastructureError

    monkeypatch.setattr(live, "port_is_free", lambda port: True)
    held = [SlotLock(tmp_path, slot_key(SlotSpec.for_index(i).urls().env_url)).acquire() for i in range(1, 8)]
    try:
        with pytest.raises(InfrastructureError, match=r"only 1 of slots 0\.\.7 are free .*slot lock"):
            choose_slots(2, 0, lock_dir=tmp_path)
    finally:
        for lock in held:
            lock.release()


def test_suite_workers_own_disjoint_port_bands_and_slots(monkeypatch: pytest.MonkeyPatch) -> None:
    """tests/workers.py: what lets two pytest-xdist workers run side by side (docs/testing.md)."""
    import workers

    bands = [workers.band_of(k, 2) for k in range(2)]
    assert bands[0].low == workers.SUITE_PORTS.low and bands[1].high == workers.SUITE_PORTS.high
    assert bands[0].high < bands[1].low and bands[1].high < 32768  # below the kernel's ephemeral ports
    owned = []
    for k in range(2):
        monkeypatch.setenv("PYTEST_XDIST_WORKER", f"gw{k}")
        monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", "2")
        monkeypatch.setenv(PORT_BAND_ENV, "")  # none given: the suite's own ports are split (restored after)
        assert workers.claim_port_band() == bands[k] and port_band() == bands[k]
        owned.append(workers.slot_indices())
    assert owned == [[7, 5, 3, 1], [6, 4, 2]]
    monkeypatch.delenv("PYTEST_XDIST_WORKER")
    assert workers.claim_port_band() is None and workers.slot_indices() == [7, 6, 5, 4, 3, 2, 1]


def test_suite_work_units_name_real_files() -> None:
    """A renamed test file must not silently leave a shared unit or the slowest-first order (tests/workers.py)."""
    import workers

    stems = {p.stem for p in Path(__file__).parent.glob("test_*.py")}
    assert set(workers.SHARED_UNITS) <= stems, set(workers.SHARED_UNITS) - stems
    units = (stems - set(workers.SHARED_UNITS)) | set(workers.SHARED_UNITS.values())
    assert set(workers.SLOWEST_FIRST) <= units and len(set(workers.SLOWEST_FIRST)) == len(workers.SLOWEST_FIRST)
    assert workers.unit_of("tests/test_trace_e2e.py::test_x[a::b]") == "code_mode_evals"
    assert workers.unit_of("tests/test_ports.py::test_suite_work_units_name_real_files") == "test_ports"


@pytest.mark.parametrize(("where", "problem"), [
    (["--slot-ports", "23001:23002:23003,23004:23005:23006"], "a battle runs on one slot, give one ENV:APIS:GATEWAY"),
    (["--slot-ports", "23001:23002"], "--slot-ports expects ENV:APIS:GATEWAY"),
    (["--env-url", "http://127.0.0.1:9", "--slot-ports", "23001:23002:23003"], "--env-url attaches to running"),
    (["--first-slot", "8"], "slots are numbered 0..7"),
])
def test_a_battles_slot_options_are_checked_before_anything_starts(
        where: list[str], problem: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from green_agent.cli import main

    code = main(["--env-file", "/dev/null", "battle", "--task-id", "1", "--blue", "noop", "--out",
                 str(tmp_path / "run"), *where])
    assert code == 2 and problem in capsys.readouterr().err
    assert not (tmp_path / "run").exists()
