"""Every record written to disk or sent to the backend, one module per record kind."""

from green_agent.models.call_record import CALL_RECORD_SCHEMA_VERSION, CallRecord

__all__ = ["CALL_RECORD_SCHEMA_VERSION", "CallRecord"]
