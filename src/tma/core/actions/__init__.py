"""The actions' pure half: the bundled action manifests (TOML data, which
tma.runtime.act.registry loads), their schema (`schema`), the gates an action passes
(`gate`) and how a question's answers are placed (`answers`). Pure, like all of
tma.core."""
