"""The tier-3 daemon. A leaf: nothing else in tma imports it."""
