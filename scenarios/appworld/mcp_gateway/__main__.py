"""`python -m mcp_gateway ARGS` == `appworld-green mcp ARGS` (the command line is `mcp_gateway.cli`)."""

import sys

from mcp_gateway.cli import main

if __name__ == "__main__":
    sys.exit(main())
