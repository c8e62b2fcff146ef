"""Hold a Ray cluster of several nodes on this host; run inside a loopback-only network namespace.

`python ray_cluster_holder.py NODES SLOTS_PER_NODE`: starts `ray.cluster_utils.Cluster` with NODES
nodes (one CPU each, SLOTS_PER_NODE units of `appworld_slot` each), prints one JSON line `{"address": ...}` on stdout, waits until stdin closes
(or SIGTERM), then shuts the cluster down. `tests/ray_support.py` starts it and reads that line.
"""

from __future__ import annotations

import json
import signal
import sys

from ray.cluster_utils import Cluster

from green_agent.batch.ray.executor import SLOT_RESOURCE


def main() -> None:
    nodes, slots = int(sys.argv[1]), int(sys.argv[2])
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 1, "resources": {SLOT_RESOURCE: slots}, "include_dashboard": False})
    try:
        for _ in range(nodes - 1):
            cluster.add_node(num_cpus=1, resources={SLOT_RESOURCE: slots})
        cluster.wait_for_nodes()
        print(json.dumps({"address": cluster.address}), flush=True)
        sys.stdin.read()
    finally:
        cluster.shutdown()


if __name__ == "__main__":
    main()
