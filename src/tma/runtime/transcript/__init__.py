"""Agents' transcripts read from disk (I/O): the stores tma.core.transcript's modules map."""
