"""Test doubles that ship with the package (offline stand-ins for external services)."""
