"""A secret read from a file (`[notify.webhook] secret_file`, `[notify.ntfy] token_file`):
only from a regular file the user alone can read, as OpenSSH takes a private key.

A secret file that group or others may read is a secret they hold too (anyone on the
machine could sign a webhook delivery or post to the ntfy topic as you), and one they
may write is a secret they choose. So such a file is refused, never read, with the
words OpenSSH uses (`Permissions 0644 for '…' are too open`) and the chmod that fixes
it; a sink whose secret is refused sends nothing (an unsigned request must never go
out in place of a signed one). Refused rather than warned about: the daemon and the
hook path have nobody to warn, only the failure record and doctor.

The file is opened before it is looked at (O_NONBLOCK: a FIFO in its place does not
hang the caller, the daemon's loop or an agent's hook), and the mode is the open
file's, so a file swapped between a check and the read cannot slip through.
"""

from __future__ import annotations

import os
import shlex
import stat

#: group and other bits: any of them set and the file is not the user's alone
OPEN_BITS = 0o077
READ_MAX = 65536  # bytes read looking for the first line (a secret is one short line)


def too_open(path: str, mode: int, what: str) -> str:
    """OpenSSH's words for a key others can reach, and the fix."""
    return (f"Permissions {mode:04o} for '{path}' are too open: the {what} must be "
            f"readable by you alone (chmod 600 {shlex.quote(path)})")


def read_first_line(path: str, what: str) -> tuple[str, str]:
    """(the file's first line, stripped, and "") or ("", why it was refused). `path` is
    already expanded; `what` names the file in the refusal ("secret file")."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        return "", f"cannot read {path}: {exc.strerror or exc}"
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return "", f"{path} is not a regular file"
        mode = stat.S_IMODE(st.st_mode)
        if mode & OPEN_BITS:
            return "", too_open(path, mode, what)
        data = os.read(fd, READ_MAX)
    except OSError as exc:
        return "", f"cannot read {path}: {exc.strerror or exc}"
    finally:
        os.close(fd)
    try:
        text = data.split(b"\n", 1)[0].decode("utf-8").strip()
    except UnicodeDecodeError:
        return "", f"cannot read {path}: not UTF-8"
    if not text:
        return "", f"{path} is empty"
    return text, ""
