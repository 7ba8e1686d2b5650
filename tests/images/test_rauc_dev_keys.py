"""tools/rauc-dev-keys: the development RAUC keys a developer makes once (the build reads
them from FOOSBALL_RAUC_DEV_KEY_DIR and never makes new ones)."""

from __future__ import annotations

import shutil
import stat
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "tools/rauc-dev-keys"

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl")


def make(folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SCRIPT, str(folder)], capture_output=True, text=True, timeout=60)


def openssl(*args: str) -> str:
    return subprocess.run(["openssl", *args], check=True, capture_output=True, text=True).stdout


def test_makes_a_ca_and_a_code_signing_leaf_under_it(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    assert make(keys).returncode == 0
    ca, leaf = str(keys / "ca.cert.pem"), str(keys / "signing.cert.pem")
    assert "OK" in openssl("verify", "-CAfile", ca, leaf)
    # The boards' RAUC checks the signer with check-purpose=codesign (its own check;
    # OpenSSL 3.0's verify has no such purpose): the leaf must carry that usage.
    assert "Code Signing" in openssl("x509", "-noout", "-ext", "extendedKeyUsage", "-in", leaf)
    assert "DEVELOPMENT ONLY" in openssl("x509", "-noout", "-subject", "-in", leaf)
    for private in ("signing.key.pem", "ca.key.pem"):
        assert stat.S_IMODE((keys / private).stat().st_mode) == 0o600
    assert stat.S_IMODE(keys.stat().st_mode) == 0o700


def test_refuses_to_replace_existing_keys(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    make(keys)
    before = (keys / "ca.cert.pem").read_bytes()
    again = make(keys)
    assert again.returncode == 1 and "made once" in again.stderr
    assert (keys / "ca.cert.pem").read_bytes() == before


def test_needs_the_folder(tmp_path: Path) -> None:
    assert subprocess.run([SCRIPT], capture_output=True, timeout=10).returncode == 2
