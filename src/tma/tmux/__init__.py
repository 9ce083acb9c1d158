"""The one choke point that talks to tmux: spawning, reading, guarded writes."""
