"""The battle trace, Green side: write the Green's events, gather the gateway's, read and show the trace.

`battle_trace` writes (task message, reply, end, verdict, world changes), `gather` merges the gateway's
and the bridge's records into the battle folder at archive time, `reader` reads a trace back bounded, and
`page`, `terminal` and `inspect_export` show it. The record is `kernel.trace_record.TraceRecord`
(docs/trace.md).
"""
