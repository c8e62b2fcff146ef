"""How our server processes (gateway, built-in Blues) leave once their server loop has returned."""

from __future__ import annotations

import os


def exit_without_teardown(code: int = 0) -> None:
    """Leave a server process now that its server loop has returned: flush logs and stdio, then
    `os._exit`. Nothing is left to save (our servers write every record as it happens), and the
    interpreter's teardown of thousands of imported modules took ~0.4 s per process, paid at every
    slot and Blue stop."""
    import logging
    import sys

    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
