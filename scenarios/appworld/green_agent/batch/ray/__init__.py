"""The Ray executor (`eval --executor ray`): world slots as Ray actors on a cluster's nodes.

Imported only when that executor is chosen, so the local path never imports Ray (nothing here imports
Ray at module level but `executor`).
- `executor`: the driver side (`RayExecutor`: connect, place slot actors, land each battle's files);
- `slot`: the node side (`SlotActor`: one world slot and its Blue, one battle at a time); a node's world must be
  the driver's (`green_agent.batch.world_digest`: sha256 over `<root>/data`; built when missing);
- a killed actor's processes and scratch directory are ended by the slot reaper (`green_agent.runtime.reaper`);
- `local`: a local Ray instance on loopback only (a private network namespace when possible).
"""
