"""The in-band bridge: the Green's built-in Blue that plays a battle by talking to a purple (docs/a2a.md)."""
