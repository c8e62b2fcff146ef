"""What each pytest-xdist worker of the suite owns, so that two workers never collide (docs/testing.md).

`make test` runs the suite on two workers (`-n 2 --dist loadfile`, whose unit is `unit_of` below), then the
tests marked `serial` alone.
A worker (`PYTEST_XDIST_WORKER`: gw0, gw1, ...) owns:

- a port band: every `free_port()` of the worker and of its children (CLIs, servers, Blues, Ray nodes) draws
  from the worker's own slice of `SUITE_PORTS` (`kernel.ports.PORT_BAND_ENV`, set by tests/conftest.py). The
  slices lie below the kernel's ephemeral ports (32768-60999), so no outgoing connection takes one either;
- world slot indices (`slot_indices`): slot 0 (8000/9000/10000) is `world up`'s and only
  tests/test_world_service.py uses it (one file: one worker); slots 1..7 are dealt round-robin;
- scratch folders: pytest's per-worker basetemp (every `tmp_path`, `tmp_path_factory`); the slot locks and
  credentials are keyed by port, so disjoint bands never share one;
- Ray: every test cluster is its own, in a private network namespace (tests/ray_support.py), its nodes on
  the worker's band; the Ray tests are one file, so one worker runs them one after the other.

Outside xdist (the serial phase, one file run by hand) the process is worker 0 of 1 and keeps the kernel's
ephemeral ports, as before.
"""

from __future__ import annotations

import os

import pytest

from green_agent.runtime.slot import SlotSpec
from kernel.ports import PORT_BAND_ENV, PortBand, port_band, port_is_free
from kernel.settings import MAX_SLOTS

SUITE_PORTS = PortBand(20000, 31999)
"""Split among the workers (an explicit `APPWORLD_GREEN_PORT_BAND` is split instead). Ray's own worker ports are
10002-19999 by default, AppWorld's slots 8000-10070: neither is in it."""


SLOWEST_FIRST = (
    "test_ray_e2e", "test_trace_otlp_phoenix", "test_compare_e2e", "code_mode_evals", "enforced_evals", "shared_slot",
    "test_code_differential", "test_code_hostile", "test_a2a_e2e", "test_bench_smoke", "test_world_builder",
    "test_secrets_by_value_e2e", "test_reliability_e2e", "test_careful_blue_e2e", "test_runfolder_hostile",
    "test_agentbeats_e2e", "test_code_edges", "test_batch_e2e", "test_code_a2a_e2e", "test_agentbeats_launch",
    "test_cost_e2e", "test_hostile_purple", "test_leaderboard_e2e", "test_trace_hostile", "test_code_spares",
    "test_hostile_small", "test_code_sandbox", "test_appworld_forkserver", "test_trace_inspect",
)
"""Work units (a file's stem, or a name of `SHARED_UNITS`) the workers take first, slowest first (from
`--durations`; docs/testing.md); every other unit follows in collection order. Longest first, so that the last
unit to end is a short one and neither worker waits long for the other."""
SHARED_UNITS: dict[str, str] = {
    # the scripted llm Blue's code-mode eval and the enforced code-mode eval (conftest, shared_evals)
    "test_code_mode_e2e": "code_mode_evals", "test_trace_e2e": "code_mode_evals",
    # the enforced tools-mode eval (conftest, shared_evals)
    "test_rejudge_e2e": "enforced_evals", "test_scope_policy_e2e": "enforced_evals",
    # faults_support's one healthy world slot
    **dict.fromkeys(("test_faults_blue", "test_faults_signals", "test_hostile_blue", "test_hostile_render",
                     "test_security_secrets"), "shared_slot"),
}
"""Test files (stems) that share a session fixture worth making once -> the one work unit they go to together
(one worker then makes it once; on two workers each would make its own)."""


def unit_of(nodeid: str) -> str:
    """The work unit of a test: its file's stem, or the shared unit that file belongs to."""
    stem = nodeid.split("::", 1)[0].rsplit("/", 1)[-1].removesuffix(".py")
    return SHARED_UNITS.get(stem, stem)


def order(items: list[pytest.Item]) -> None:
    """Under xdist, the units of `SLOWEST_FIRST` first, in its order (the same order on every worker, as xdist
    requires; `--no-loadscope-reorder` keeps it); a plain run keeps pytest's order."""
    if worker_id() is not None:
        rank = {unit: i for i, unit in enumerate(SLOWEST_FIRST)}
        items.sort(key=lambda item: rank.get(unit_of(item.nodeid), len(rank)))


def make_scheduler(config: pytest.Config, log: object) -> object:
    """`--dist loadfile`, whose units are `unit_of`: a file, or the files of one `SHARED_UNITS` entry together.

    (xdist's own `loadgroup` tags node ids with the group, which pytest 9 no longer lets a plugin change.)"""
    from xdist.scheduler import LoadFileScheduling

    class SuiteScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return unit_of(nodeid)

    return SuiteScheduling(config, log)


def worker_id() -> str | None:
    """`gw0`, `gw1`, ... under pytest-xdist; None in a plain run."""
    return os.environ.get("PYTEST_XDIST_WORKER") or None


def worker_index() -> int:
    name = worker_id()
    return int(name.removeprefix("gw")) if name else 0


def worker_count() -> int:
    return int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) if worker_id() else 1


def band_of(index: int, count: int, whole: PortBand = SUITE_PORTS) -> PortBand:
    """Worker `index`'s slice of `whole` (`count` equal slices, the last one takes the remainder)."""
    width = (whole.high - whole.low + 1) // count
    if width < 100:
        raise ValueError(f"{count} workers on ports {whole.low}-{whole.high}: fewer than 100 ports each")
    low = whole.low + index * width
    return PortBand(low, whole.high if index == count - 1 else low + width - 1)


def claim_port_band() -> PortBand | None:
    """Give this worker (and its children, through the environment) its own port band; None outside xdist."""
    if worker_id() is None:
        return None
    band = band_of(worker_index(), worker_count(), port_band() or SUITE_PORTS)
    os.environ[PORT_BAND_ENV] = f"{band.low}-{band.high}"
    return band


def slot_indices() -> list[int]:
    """World slot indices this worker may use, highest first (slot 0 is `world up`'s, never dealt)."""
    count, index = worker_count(), worker_index()
    return [i for i in range(MAX_SLOTS - 1, 0, -1) if (i - 1) % count == index]


def free_slot() -> SlotSpec:
    """The highest of this worker's slots whose three ports are free now (for a `battle --slot K`)."""
    for index in slot_indices():
        spec = SlotSpec.for_index(index)
        if all(port_is_free(p) for p in (spec.env_port, spec.apis_port, spec.gateway_port)):
            return spec
    pytest.fail(f"none of this worker's world slots {slot_indices()} has free ports on this machine")
