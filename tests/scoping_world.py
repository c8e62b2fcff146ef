"""A tiny AppWorld data folder for scoping unit tests.

Stands for AppWorld's native on-disk format: standard API docs
`api_docs/standard/<app>.json` ({api: {path, method, description, parameters}}), task folders with
`specs.json` and `ground_truth/required_apis.json`, and split files `datasets/<split>.txt`.
"""

from __future__ import annotations

import json
from pathlib import Path

APIS: dict[str, dict[str, str]] = {
    "supervisor": {"show_active_task": "Show the active task.", "complete_task": "Mark the task complete.",
                   "show_profile": "Show the supervisor's profile.",
                   "show_account_passwords": "Show the supervisor's app account passwords."},
    "spotify": {"login": "Login to your account.", "search_songs": "Search for songs with a query.",
                "create_playlist": "Create a new playlist.", "add_song_to_playlist": "Add a song to a playlist.",
                "show_playlist_library": "Get a list of playlists in the user's playlist library."},
    "simple_note": {"login": "Login to your account.", "create_note": "Create a new note.",
                    "search_notes": "Search your notes."},
    "api_docs": {"show_api_doc": "Show the doc of an API."},
}

TASKS: dict[str, tuple[str, str, list[str]]] = {
    "aaaaaaa_1": ("train", "Create a note titled 'Groceries' in Simple Note.",
                  ["simple_note.create_note", "simple_note.login", "supervisor.complete_task",
                   "supervisor.show_account_passwords"]),
    "bbbbbbb_1": ("dev", "Make a Spotify playlist called 'Calm' with every song by Enya.",
                  ["spotify.add_song_to_playlist", "spotify.create_playlist", "spotify.login", "spotify.search_songs",
                   "supervisor.complete_task", "supervisor.show_account_passwords"]),
}


def write_tiny_world(root: Path) -> Path:
    """Write the folder under `root` and return `root` (the AppWorld root)."""
    data = root / "data"
    (data / "api_docs" / "standard").mkdir(parents=True)
    for app, apis in APIS.items():
        docs = {name: {"app_name": app, "api_name": name, "path": f"/{app}/{name}", "method": "POST",
                       "description": text, "parameters": []} for name, text in apis.items()}
        (data / "api_docs" / "standard" / f"{app}.json").write_text(json.dumps(docs))
    (data / "datasets").mkdir()
    splits: dict[str, list[str]] = {}
    for task_id, (split, instruction, gold) in TASKS.items():
        task = data / "tasks" / task_id
        (task / "ground_truth").mkdir(parents=True)
        (task / "specs.json").write_text(json.dumps({"instruction": instruction, "supervisor": {},
                                                     "datetime": "2023-05-18T12:00:00"}))
        (task / "ground_truth" / "required_apis.json").write_text(json.dumps(gold))
        splits.setdefault(split, []).append(task_id)
    for split, ids in splits.items():
        (data / "datasets" / f"{split}.txt").write_text("\n".join(ids) + "\n")
    return root
