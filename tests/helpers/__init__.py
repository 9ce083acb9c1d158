"""Helpers the test modules share; a test imports these, never another test module.

tmux_sockets, tmux_matrix: private tmux servers and the tmux builds they run on;
tmux_formats: the format constructs tma writes; ptyclient: real clients on a PTY;
keyrecorder: fake agents (real processes that draw a screen and record keys);
manifests: the fake agent's manifest; live/: the live suite's harness, agents and fake LLM.
"""
