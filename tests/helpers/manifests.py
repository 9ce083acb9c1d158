"""The fake agent's manifest the integration servers install (process `fakeagent`):
hooks for every state and screen rules keyed on FAKE-* markers the tests print."""

TEST_MANIFEST = """
min_engine_version = "0.1"
[identity]
process_names = ["fakeagent"]
[hooks]
covers = ["working", "idle", "blocked", "lifecycle"]
[[hooks.map]]
event = "Start"
claim = { lifecycle = "start" }
[[hooks.map]]
event = "Work"
claim = { state = "working" }
[[hooks.map]]
event = "Ask"
claim = { state = "blocked", detail = "permission" }
[[hooks.map]]
event = "Stop"
claim = { state = "idle" }
turn_end = true
[[hooks.map]]
event = "Hint"
matcher = "VALID-7f3a"
claim = { state = "blocked", detail = "permission" }
[capture]
visible = ["working", "blocked"]
[[rules]]
state = "blocked"
detail = "permission"
priority = 100
region = "visible"
match = { contains = "FAKE-BLOCKED" }
[[rules]]
state = "working"
priority = 50
region = "visible"
match = { contains = "FAKE-WORKING" }
[[rules]]
state = "idle"
priority = 10
region = "visible"
match = { contains = "FAKE-IDLE" }
[[rules]]
state = "idle"
priority = 90
region = "visible"
skip_state_update = true
match = { contains = "FAKE-HISTORY" }
"""
