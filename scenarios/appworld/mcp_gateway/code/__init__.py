"""Code mode's sandboxed REPL: `sandbox` (the isolation and its command line), `child` (the program run
inside it), `session` (one battle's REPL: start, execute with relayed API calls, teardown)."""
