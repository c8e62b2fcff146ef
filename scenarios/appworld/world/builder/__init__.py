"""The offline world builder's steps (run in `.venv-appworld` only): validate, api_docs, base DBs, tasks."""
