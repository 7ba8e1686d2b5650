"""A bundle signed with a key that lives only in a PKCS#11 token, the way docs/images.md
documents it for release keys: the key folder holds `signing.key.uri` (a `pkcs11:` URI)
instead of `signing.key.pem`, `rauc bundle --key` gets the URI as it is (meta-rauc's
RAUC_KEY_FILE), RAUC loads the module named by RAUC_PKCS11_MODULE and logs in with
RAUC_PKCS11_PIN. The token is SoftHSM2's, in a temporary folder (SOFTHSM2_CONF); the keys
are made by tools/rauc-dev-keys. The bundle is then checked as a board checks it: against
the CA with `check-purpose=codesign`.

RAUC 1.8 reaches the token through OpenSSL's `pkcs11` engine (libp11), which is why the
engine package is needed besides SoftHSM2.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEV_KEYS = ROOT / "tools/rauc-dev-keys"
TOKEN, OBJECT, PIN, SO_PIN = "foosball", "signer-1", "3141", "27182818"
URI = f"pkcs11:token={TOKEN};object={OBJECT};type=private"  # docs/images.md's example
# Where Debian's libsofthsm2 puts the module (multiarch first; the docs name the amd64 one)
MODULE_GLOBS = ("/usr/lib/*-linux-gnu/softhsm/libsofthsm2.so", "/usr/lib/softhsm/libsofthsm2.so")


def openssl_engines_dir() -> Path | None:
    try:
        said = subprocess.run(["openssl", "version", "-e"], capture_output=True, text=True,
                              timeout=10).stdout
    except OSError:
        return None
    match = re.search(r'ENGINESDIR: "([^"]*)"', said)
    return Path(match.group(1)) if match else None


def softhsm_module() -> Path | None:
    for pattern in MODULE_GLOBS:
        found = sorted(glob.glob(pattern))
        if found:
            return Path(found[0])
    return None


def pkcs11_skip_reason() -> str | None:
    for tool, package in (("rauc", "rauc"), ("mksquashfs", "squashfs-tools"),
                          ("openssl", "openssl"), ("softhsm2-util", "softhsm2")):
        if shutil.which(tool) is None:
            return f"needs `{tool}` (apt package {package}; ./tools/setup installs it as root)"
    if softhsm_module() is None:
        return ("needs SoftHSM2's PKCS#11 module libsofthsm2.so (apt package softhsm2; "
                "./tools/setup installs it as root)")
    engines = openssl_engines_dir()
    if engines is None or not (engines / "pkcs11.so").exists():
        return (f"needs OpenSSL's pkcs11 engine, through which RAUC 1.8 loads PKCS#11 keys: no "
                f"pkcs11.so in {engines or 'the ENGINESDIR of `openssl version -e`'} (apt "
                f"package libengine-pkcs11-openssl; ./tools/setup installs it as root)")
    return None


pytestmark = pytest.mark.skipif(pkcs11_skip_reason() is not None,
                                reason=pkcs11_skip_reason() or "")


def run(command: list[str | Path], env: dict[str, str] | None = None,
        cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(c) for c in command], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=60)


def checked(command: list[str | Path], env: dict[str, str] | None = None,
            cwd: Path | None = None) -> str:
    result = run(command, env, cwd)
    if result.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, command))} failed ({result.returncode}):\n"
                             f"{result.stdout}{result.stderr}")
    return result.stdout + result.stderr


@dataclass(frozen=True)
class Token:
    keys: Path  # the key folder as a lab keeps it: certificates and signing.key.uri
    env: dict[str, str]  # SOFTHSM2_CONF and the module: what the bundle task has
    work: Path


@pytest.fixture(scope="module")
def token(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Token]:
    work = tmp_path_factory.mktemp("pkcs11")
    keys = work / "foosball-rauc"
    checked([DEV_KEYS, keys])
    (work / "tokens").mkdir()
    conf = work / "softhsm2.conf"
    conf.write_text(f"directories.tokendir = {work / 'tokens'}\n"
                    "objectstore.backend = file\nlog.level = ERROR\n")
    env = {**os.environ, "SOFTHSM2_CONF": str(conf),
           "RAUC_PKCS11_MODULE": str(softhsm_module())}
    env.pop("RAUC_PKCS11_PIN", None)
    checked(["softhsm2-util", "--init-token", "--free", "--label", TOKEN,
             "--so-pin", SO_PIN, "--pin", PIN], env)
    # softhsm2-util imports PKCS#8; the key then leaves the folder: only the token has it.
    pkcs8 = work / "signing.key.p8"
    checked(["openssl", "pkcs8", "-topk8", "-nocrypt", "-in", keys / "signing.key.pem",
             "-out", pkcs8], env)
    checked(["softhsm2-util", "--import", pkcs8, "--token", TOKEN, "--label", OBJECT,
             "--id", "01", "--pin", PIN], env)
    pkcs8.unlink()
    (keys / "signing.key.pem").unlink()
    (keys / "signing.key.uri").write_text(URI + "\n")
    yield Token(keys, env, work)


def bundle_dir(parent: Path, version: str) -> Path:
    content = parent / f"bundle-{version}"
    content.mkdir()
    (content / "rootfs.img").write_bytes(os.urandom(64 * 1024))
    (content / "manifest.raucm").write_text(
        f"[update]\ncompatible=foosball-sim-pole\nversion={version}\n\n"
        "[bundle]\nformat=plain\n\n[image.rootfs]\nfilename=rootfs.img\n")
    return content


def sign(token: Token, version: str, pin: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    """`rauc bundle` as meta-rauc's do_bundle runs it for a key folder with signing.key.uri."""
    out = token.work / f"pole-{version}.raucb"
    uri = (token.keys / "signing.key.uri").read_text().strip()
    result = run(["rauc", "bundle", "--cert", token.keys / "signing.cert.pem", "--key", uri,
                  bundle_dir(token.work, version), out],
                 env={**token.env, "RAUC_PKCS11_PIN": pin})
    return result, out


def test_a_bundle_signed_in_the_token_passes_the_boards_keyring(token: Token) -> None:
    assert not (token.keys / "signing.key.pem").exists()
    result, bundle = sign(token, "1.0", PIN)
    assert result.returncode == 0, result.stderr
    # As the boards check it (image-config/*/system.conf): the CA and a code-signing leaf.
    conf = token.work / "system.conf"
    conf.write_text("[system]\ncompatible=foosball-sim-pole\nbootloader=noop\n\n"
                    "[keyring]\ncheck-purpose=codesign\n")
    info = checked(["rauc", "--conf", conf, "--keyring", token.keys / "ca.cert.pem",
                    "info", bundle])
    assert "Compatible: \t'foosball-sim-pole'" in info, info
    # the signer whose key is in the token
    assert re.search(r"Verified detached signature by '[^']*CN = foosball DEV bundle signer'",
                     info), info
    # A CA that did not issue the signer refuses the same bundle.
    stranger = token.work / "stranger"
    checked([DEV_KEYS, stranger])
    refused = run(["rauc", "--conf", conf, "--keyring", stranger / "ca.cert.pem", "info",
                   bundle])
    assert refused.returncode != 0 and "signature verification failed" in refused.stderr


def test_a_wrong_pin_fails_and_says_so(token: Token) -> None:
    result, bundle = sign(token, "1.1", "0000")
    assert result.returncode != 0
    assert "failed to load PKCS11 private key" in result.stderr, result.stderr
    assert "PIN incorrect" in result.stderr, result.stderr
    assert not bundle.exists()
