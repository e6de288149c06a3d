"""Key files: openssl's PEM output loads, ids are stable, generation is exclusive with mode 0600."""

from __future__ import annotations

import shutil
import stat
import subprocess
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from gatestats.attest import KeyFileError, generate_key_pair, key_id, load_private_key, load_public_key

# RFC 8032 section 7.1, TEST 1: the public key of secret 9d61b19d...7f60.
RFC8032_SECRET = bytes.fromhex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
RFC8032_PUBLIC = bytes.fromhex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")


def test_key_id_is_sha256_of_the_raw_public_key() -> None:
    import hashlib

    key = Ed25519PrivateKey.from_private_bytes(RFC8032_SECRET)
    assert key_id(key) == key_id(key.public_key()) == "sha256:" + hashlib.sha256(RFC8032_PUBLIC).hexdigest()


def test_generate_writes_private_0600_and_public_pem_that_load(tmp_path: Path) -> None:
    pair = generate_key_pair(tmp_path / "release")
    assert (pair.private.name, pair.public.name) == ("release.key", "release.pub")
    assert stat.S_IMODE(pair.private.stat().st_mode) == 0o600
    assert pair.private.read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----")
    assert pair.public.read_bytes().startswith(b"-----BEGIN PUBLIC KEY-----")
    assert key_id(load_private_key(pair.private)) == key_id(load_public_key(pair.public)) == pair.key_id


def test_generate_never_replaces_a_key_file(tmp_path: Path) -> None:
    (tmp_path / "k.pub").write_text("mine")
    with pytest.raises(FileExistsError, match=r"k\.pub: exists; a key file is never replaced"):
        generate_key_pair(tmp_path / "k")
    assert not (tmp_path / "k.key").exists()
    assert (tmp_path / "k.pub").read_text() == "mine"
    (tmp_path / "dangling.key").symlink_to(tmp_path / "nowhere")
    with pytest.raises(FileExistsError):
        generate_key_pair(tmp_path / "dangling")
    assert not (tmp_path / "nowhere").exists()


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is not installed")
def test_keys_made_by_openssl_genpkey_load(tmp_path: Path) -> None:
    private, public = tmp_path / "k.pem", tmp_path / "k.pub.pem"
    subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", str(private)], check=True)
    subprocess.run(["openssl", "pkey", "-in", str(private), "-pubout", "-out", str(public)], check=True)
    assert key_id(load_private_key(private)) == key_id(load_public_key(public))


def _pem(key: object, *, private: bool, password: bytes | None = None) -> bytes:
    if private:
        encryption = (
            serialization.NoEncryption() if password is None else serialization.BestAvailableEncryption(password)
        )
        return key.private_bytes(  # type: ignore[attr-defined, no-any-return]
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption
        )
    return key.public_bytes(  # type: ignore[attr-defined, no-any-return]
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def test_unusable_private_keys_are_refused_with_the_reason(tmp_path: Path) -> None:
    ed = Ed25519PrivateKey.generate()
    cases = {
        "missing.key": (None, "no such private key file"),
        "public.key": (
            _pem(ed.public_key(), private=False),
            r"expected an Ed25519 private key .* \(got a public key\)",
        ),
        "rsa.key": (
            _pem(rsa.generate_private_key(public_exponent=65537, key_size=1024), private=True),
            r"expected an Ed25519 private key \(got an RSA key\)",
        ),
        "locked.key": (_pem(ed, private=True, password=b"pw"), "the private key is encrypted"),
        "garbage.key": (b"not a key\n", "not a PEM private key"),
    }
    for name, (data, message) in cases.items():
        path = tmp_path / name
        if data is not None:
            path.write_bytes(data)
        with pytest.raises(KeyFileError, match=message):
            load_private_key(path)


def test_unusable_public_keys_are_refused_with_the_reason(tmp_path: Path) -> None:
    ed = Ed25519PrivateKey.generate()
    cases = {
        "private.pub": (_pem(ed, private=True), r"expected an Ed25519 public key \(got a private key"),
        "ec.pub": (
            _pem(ec.generate_private_key(ec.SECP256R1()).public_key(), private=False),
            r"expected an Ed25519 public key \(got an EC key on secp256r1\)",
        ),
        "garbage.pub": (b"\x00" * 10, "not a PEM public key"),
        "huge.pub": (b"A" * 70_000, "larger than 65536 bytes"),
    }
    for name, (data, message) in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        with pytest.raises(KeyFileError, match=message):
            load_public_key(path)
    with pytest.raises(KeyFileError, match="a directory, not a public key file"):
        load_public_key(tmp_path)
