"""Turn what a lab scenario left behind into transcript fixtures (tools/lab_transcripts.sh).

    lab_transcripts_export.py jsonl AGENT SCENARIO HOME CWD DIR
        copy the session JSONL of gemini or pi under HOME to DIR/SCENARIO.jsonl (a gemini
        subagent's own session to DIR/SCENARIO-child.jsonl) and record where each was, in
        DIR/paths.json ({file: {"path": relative to HOME, "home": HOME, "cwd": CWD}})
    lab_transcripts_export.py sql DB OUT
        write OpenCode's database DB as SQL to OUT: its whole schema, and the rows of
        `project`, `session`, `message` and `part` (the event log, the migration journal
        and the rest are left out: the reader does not touch them)
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import sys
from pathlib import Path

KEEP = ("project", "session", "message", "part")


def jsonl(agent: str, scenario: str, home: Path, cwd: str, out: Path) -> None:
    if agent == "gemini":
        files = sorted((home / ".gemini" / "tmp").glob("*/chats/**/*.jsonl"))
    else:
        files = sorted((home / ".pi" / "agent" / "sessions").glob("*/*.jsonl"))
    if not files:
        sys.exit(f"no {agent} session file under {home}")
    paths_file = out / "paths.json"
    paths = json.loads(paths_file.read_text()) if paths_file.exists() else {}
    for f in files:
        child = agent == "gemini" and f.parent.name != "chats"
        name = f"{scenario}-child.jsonl" if child else f"{scenario}.jsonl"
        shutil.copyfile(f, out / name)
        paths[name] = {"path": str(f.relative_to(home)), "home": str(home), "cwd": cwd}
    paths_file.write_text(json.dumps(dict(sorted(paths.items())), indent=2) + "\n")


def sql(db: Path, out: Path) -> None:
    conn = sqlite3.connect(db)
    lines = ["PRAGMA foreign_keys=OFF;", "BEGIN TRANSACTION;"]
    for (ddl,) in conn.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL "
                               "AND name NOT LIKE 'sqlite_%' ORDER BY type = 'index', rowid"):
        lines.append(ddl + ";")
    for table in KEEP:
        cols = [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')]
        for row in conn.execute(f'SELECT * FROM "{table}" ORDER BY rowid'):
            values = ",".join(_literal(v) for v in row)
            lines.append(f'INSERT INTO "{table}" ({",".join(cols)}) VALUES({values});')
    lines.append("COMMIT;")
    out.write_text("\n".join(lines) + "\n")
    conn.close()


def _literal(value: object) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, bytes):
        return "X'" + value.hex() + "'"
    return "'" + str(value).replace("'", "''") + "'"


def main(argv: list[str]) -> None:
    if argv[:1] == ["jsonl"] and len(argv) == 6:
        jsonl(argv[1], argv[2], Path(argv[3]), argv[4], Path(argv[5]))
    elif argv[:1] == ["sql"] and len(argv) == 3:
        sql(Path(argv[1]), Path(argv[2]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
