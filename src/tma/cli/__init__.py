"""Command-line dispatch: one module per command, each with main(argv) -> int."""
