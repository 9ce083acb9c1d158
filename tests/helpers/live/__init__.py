"""The live suite's harness pieces (tests/live imports them; its fixtures stay in its conftest)."""
