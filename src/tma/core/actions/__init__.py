"""The bundled action manifests (TOML data; tma.runtime.actions loads them)."""
