"""`python -m mcp_gateway ARGS` == `appworld-green mcp ARGS`."""

import sys

from green_agent.cli import main

if __name__ == "__main__":
    sys.exit(main(["mcp", *sys.argv[1:]]))
