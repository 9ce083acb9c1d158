"""Hook installers, one module per agent (the hook tier)."""
