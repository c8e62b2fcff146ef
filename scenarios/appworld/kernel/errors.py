"""The error tree. Library code raises these; only the CLI maps them to exit codes.

Messages say what went wrong and what to do about it.
"""

from __future__ import annotations


class GreenError(Exception):
    """Base of every error this package raises on purpose."""

    exit_code = 1


class BadInputError(GreenError):
    """The caller gave input we refuse (task id, battle message, arguments). Exit code 2."""

    exit_code = 2


class UnknownTaskError(BadInputError):
    """A well-formed task id that the AppWorld data does not contain."""


class BrokenTaskError(BadInputError):
    """A task folder of the world is incomplete or corrupt; the message names the task and the file."""


class RunDirLockedError(BadInputError):
    """Another live process is writing the run directory (`eval --out`); the message names it."""


class OutputPathError(BadInputError):
    """An output path (`--out`, the call log) cannot be created or written; the message names it and why."""


class RunFolderError(BadInputError):
    """A run folder holds something its reader refuses (too large, too deep, a path out of it, a count past its
    bound, not the record it should be); the message names the file and the problem. A run folder is untrusted."""


class VerdictsDifferError(GreenError):
    """A saved run's verdicts differ from what AppWorld's evaluator gives its saved end states (`rejudge`). Exit 4."""

    exit_code = 4


class InfrastructureError(GreenError):
    """Something we depend on failed; the battle cannot be judged. Exit code 3."""

    exit_code = 3


class AppWorldUnavailableError(InfrastructureError):
    """An AppWorld server is down, unreachable or answered with an unexpected error."""


class WrongActiveTaskError(InfrastructureError):
    """AppWorld's env server has no active world for the task id we named (0.1.3 answers 500)."""


class WorldChangedError(WrongActiveTaskError):
    """The world this Green opened is gone: closed (or replaced) by someone other than this Green.

    Nothing the Blue can reach can do this (the servers are guarded), so it names a fault of the slot
    (another process using it, a crashed env server): the battle is not scored, and the result says why.
    """


class BlueUnreachableError(InfrastructureError):
    """The Blue Agent could not be reached or rejected the task over A2A."""


class BridgeFaultError(InfrastructureError):
    """The Green's in-band bridge could not play the battle (the purple unreachable before delivery, our gateway,
    the bridge itself): ours, retried, never the purple's loss."""


class GatewayError(InfrastructureError):
    """The AppWorld MCP gateway is down or misbehaved."""


class DiskFullError(InfrastructureError):
    """A write failed for lack of space (ENOSPC, EDQUOT); the message names the path and what is intact."""


class SlotBusyError(InfrastructureError):
    """A world slot is already running a battle; two tasks never share a slot."""


class TaskMessageError(BadInputError):
    """The Green's task message does not carry a usable task id or MCP endpoint (a Blue's complaint)."""
