"""Tier-2 machinery: config, manifest loading, the poll cycle, hook intake."""
