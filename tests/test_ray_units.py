"""The Ray executor's parts that need no cluster: world digest and check, the loopback rerun, shipping
battles back, the manifest's nodes, and that the local path never imports Ray."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from batch_fakes import make_result
from green_agent.engine.config import BattleChoices
from green_agent.batch.checkpoint import prepare_run, record_nodes
from green_agent.batch.evaluate import EvalRequest, build_manifest
from green_agent.batch.ray.local import NETNS_MARK, private_netns_argv
from green_agent.batch.ray.slot import BattleShipment, SlotActor, SlotJob, node_settings, pack_dir, unpack_into
from green_agent.batch.world_digest import WorldMismatchError, ensure_world, world_digest
from green_agent.models.eval_run import RunConfig, RunNode
from kernel.settings import Settings


def small_world(root: Path, text: str = "a") -> Path:
    (root / "data" / "tasks" / "t_1").mkdir(parents=True)
    (root / "data" / "tasks" / "t_1" / "specs.json").write_text(text)
    (root / "data" / ".built").write_text("{}")
    return root


def test_importing_the_batch_layer_and_the_cli_does_not_import_ray() -> None:
    code = ("import sys, green_agent.batch, green_agent.batch.evaluate, green_agent.batch.executor, "
            "green_agent.batch.ray.slot, green_agent.cli; green_agent.cli.build_parser(); "
            "print('ray' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_world_digest_follows_every_byte_and_path(tmp_path: Path) -> None:
    first, second = small_world(tmp_path / "a"), small_world(tmp_path / "b")
    assert world_digest(first) == world_digest(second)
    (second / "data" / "tasks" / "t_1" / "specs.json").write_text("b")
    assert world_digest(first) != world_digest(second)
    third = small_world(tmp_path / "c")
    (third / "data" / "tasks" / "t_1" / "specs.json").rename(third / "data" / "tasks" / "t_1" / "other.json")
    assert world_digest(first) != world_digest(third)


def test_a_missing_world_is_built_once_then_checked(tmp_path: Path) -> None:
    expected = world_digest(small_world(tmp_path / "driver"))
    builds: list[Path] = []

    def build(root: Path) -> None:  # stands for `world build`: deterministic, so it makes the driver's world
        builds.append(root)
        small_world(root)

    node_root = tmp_path / "node"
    assert ensure_world(node_root, expected, "node-a", build) == expected
    assert ensure_world(node_root, expected, "node-a", build) == expected
    assert builds == [node_root]


def test_a_different_world_is_refused_naming_the_node_and_both_digests(tmp_path: Path) -> None:
    expected = world_digest(small_world(tmp_path / "driver"))
    node_root = small_world(tmp_path / "node", text="changed")
    with pytest.raises(WorldMismatchError) as caught:
        ensure_world(node_root, expected, "node-b (10.0.0.2)", lambda root: pytest.fail("never rebuilds"))
    message = str(caught.value)
    assert "node-b (10.0.0.2)" in message and str(node_root) in message
    assert expected[:12] in message and world_digest(node_root)[:12] in message


def test_a_failed_build_is_refused_naming_the_node(tmp_path: Path) -> None:
    def build(root: Path) -> None:
        raise RuntimeError("no appworld here")

    with pytest.raises(WorldMismatchError, match="node-c: the world at .* is missing and building it failed"):
        ensure_world(tmp_path / "node", "0" * 64, "node-c", build)


def test_the_local_ray_rerun_happens_only_where_it_is_needed() -> None:
    argv = ["/venv/bin/appworld-green", "eval", "--executor", "ray"]
    both = lambda: ["eth0", "lo"]  # noqa: E731
    command = private_netns_argv(argv, environ={}, names=both)
    if command is not None:  # root with unshare and ip: the namespace command, then our own argv unchanged
        assert command[:3] == ["unshare", "--net", "--"] and command[-len(argv):] == argv
        assert "ip link set lo up" in command[5]
    assert private_netns_argv(argv, environ={}, names=lambda: ["lo"]) is None  # already loopback-only
    assert private_netns_argv(argv, environ={NETNS_MARK: "1"}, names=both) is None  # never twice


def test_a_shipment_lands_evidence_first_and_result_last_with_the_drivers_dir(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    from green_agent.batch.ray.executor import land

    node_dir = tmp_path / "node" / "b1"
    (node_dir / "appworld").mkdir(parents=True)
    (node_dir / "appworld" / "state.txt").write_text("state")
    (node_dir / "mcp_calls.jsonl").write_text('{"battle_id": "b1"}\n')
    result = make_result("t_1", "b1", "passed", node_dir)
    shipment = BattleShipment(result_json=result.model_dump_json(), files=pack_dir(node_dir, skip={"result.json"}),
                              calls=b'{"battle_id": "b1"}\n')
    driver_dir, calls_log = tmp_path / "run" / "tasks" / "t_1", tmp_path / "run" / "logs" / "mcp-calls-ray-slot0.jsonl"
    landed = land(shipment, driver_dir, calls_log)
    land(shipment.model_copy(update={"calls": b'{"battle_id": "b2"}\n'}), tmp_path / "run" / "tasks" / "t_2", calls_log)
    assert landed.run_dir == str(driver_dir) and landed.outcome == "passed"
    assert json.loads((driver_dir / "result.json").read_text())["run_dir"] == str(driver_dir)
    assert (driver_dir / "appworld" / "state.txt").read_text() == "state"
    assert calls_log.read_text().splitlines() == ['{"battle_id": "b1"}', '{"battle_id": "b2"}']


def test_unpacking_refuses_paths_outside_the_directory(tmp_path: Path) -> None:
    import io
    import tarfile

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        info = tarfile.TarInfo("../escape.txt")
        info.size = 1
        archive.addfile(info, io.BytesIO(b"x"))
    with pytest.raises(tarfile.TarError):
        unpack_into(buffer.getvalue(), tmp_path / "in")
    assert not (tmp_path / "escape.txt").exists()


def test_a_node_uses_its_own_world_and_appworld_python_where_it_sets_them(tmp_path: Path) -> None:
    settings = Settings(appworld_root=tmp_path / "driver", appworld_python=tmp_path / "py")
    assert node_settings(settings, environ={}).appworld_root == tmp_path / "driver"
    node_root, node_python = tmp_path / "node-world", tmp_path / "node-py"
    local = node_settings(settings, environ={"APPWORLD_ROOT": str(node_root), "APPWORLD_PYTHON": str(node_python)})
    assert (local.appworld_root, local.appworld_python) == (node_root, node_python)


def test_a_slot_actor_refuses_a_battle_before_start(tmp_path: Path) -> None:
    job = SlotJob(settings=Settings(appworld_root=tmp_path), config=RunConfig(blue="noop", predictor="none",
                  deadline_s=10), label="ray-slot0", world_digest="0" * 64)
    actor = SlotActor(job)
    with pytest.raises(Exception, match="not running"):
        actor.run_battle(("t_1", 1), "b1")
    assert actor.stop() == b""  # stopping a slot that never started is a no-op


def test_the_manifest_records_the_executor_and_every_node_once(tmp_path: Path) -> None:
    settings = Settings(appworld_root=tmp_path)
    request = EvalRequest(task_ids=["t_1"], choices=BattleChoices(blue="noop"), out=tmp_path, executor="local")
    prepare_run(tmp_path, build_manifest(request, settings, ["t_1"]), resume=False)
    local = RunNode(executor="local", node_id="local", address="127.0.0.1", hostname="h")
    far = RunNode(executor="ray", node_id="n2", address="10.0.0.2", hostname="h2")
    record_nodes(tmp_path, [local])
    resumed = prepare_run(tmp_path, build_manifest(request.model_copy(update={"executor": "ray", "resume": True}),
                                                   settings, ["t_1"]), resume=True)
    assert resumed.config.executor == "ray"  # a resume may change the executor: it is not fingerprinted
    manifest = record_nodes(tmp_path, [far, local])
    assert manifest is not None and manifest.nodes == [local, far]


def test_ray_address_without_the_ray_executor_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from green_agent.cli import main

    code = main(["eval", "--split", "dev", "--blue", "noop", "--out", str(tmp_path / "run"), "--ray-address", "h:1"])
    assert code == 2 and "--ray-address needs --executor ray" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()  # refused before anything was written
