"""The one reader of a run folder: a run folder is untrusted input (it may come from anyone).

Every command that reads a run folder (`eval --resume`, `report`, `rejudge`, `trace`, `export`, `compare`) reads it
through this package, one floor below all of them (it imports only the records, `green_agent.models`, and the
kernel), so a hostile folder is refused in one place: task ids by the task-id rule and every path built from the
folder's content resolved and kept inside it (`layout`, `files.inside`), counts bounded (`limits.MAX_TASKS`,
`limits.MAX_TRIALS`), every file's size checked before it is read and its JSON's depth before it is parsed
(`limits`, `files`). A folder that breaks a rule gets a `kernel.errors.RunFolderError` naming the file and the
problem (the CLI's exit 2), never a traceback. `reader.RunFolder` is the entry point.
"""
