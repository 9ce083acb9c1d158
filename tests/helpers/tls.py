"""A certificate authority of the test's own and a server certificate it signed, made with
the real `openssl` CLI, for receivers that speak https on 127.0.0.1.

A sink trusts the CA the way a user's machine would be told to: `SSL_CERT_FILE=<ca>` in
the environment, which OpenSSL reads when Python builds its default context (tma has no
CA setting of its own). The certificates carry what a strict verifier asks for (a
CA with keyCertSign and key identifiers; a leaf with the IP in subjectAltName and
serverAuth), so they also pass Python 3.13's VERIFY_X509_STRICT.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest


class Certs:
    def __init__(self, ca: Path, cert: Path, key: Path) -> None:
        self.ca, self.cert, self.key = ca, cert, key


def need_openssl() -> str:
    """The openssl binary; skip without it, except under CI (.ci/run installs it)."""
    exe = shutil.which("openssl")
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("CI installs openssl, and it is missing")
        pytest.skip("openssl is not installed (apt-get install openssl)")
    return exe


def _run(*argv: str) -> None:
    res = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    if res.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed: {res.stderr.strip()}")


def make(where: Path) -> Certs:
    """A CA and a server certificate for 127.0.0.1 and localhost, valid for two days."""
    exe = need_openssl()
    where.mkdir(parents=True, exist_ok=True)
    ca, ca_key = where / "ca.pem", where / "ca.key"
    cert, key, csr = where / "server.pem", where / "server.key", where / "server.csr"
    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
    _run(exe, "req", "-x509", *ec, "-keyout", str(ca_key), "-out", str(ca), "-days", "2",
         "-subj", "/CN=tma test CA",
         "-addext", "basicConstraints=critical,CA:TRUE",
         "-addext", "keyUsage=critical,keyCertSign,cRLSign",
         "-addext", "subjectKeyIdentifier=hash")
    _run(exe, "req", *ec, "-keyout", str(key), "-out", str(csr), "-subj", "/CN=127.0.0.1")
    ext = where / "server.ext"
    ext.write_text("basicConstraints=critical,CA:FALSE\n"
                   "keyUsage=critical,digitalSignature\n"
                   "extendedKeyUsage=serverAuth\n"
                   "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
                   "subjectKeyIdentifier=hash\n"
                   "authorityKeyIdentifier=keyid\n")
    _run(exe, "x509", "-req", "-in", str(csr), "-CA", str(ca), "-CAkey", str(ca_key),
         "-CAcreateserial", "-out", str(cert), "-days", "2", "-extfile", str(ext))
    return Certs(ca, cert, key)
