"""Today's AgentBeats front door: the A2A assessment server, its request and artifact, the in-band bridge."""
