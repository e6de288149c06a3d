"""Ed25519 keys as PEM files: load, identify, generate.

A private key is PKCS #8 PEM (``-----BEGIN PRIVATE KEY-----``), a public key SubjectPublicKeyInfo
PEM (``-----BEGIN PUBLIC KEY-----``), exactly as ``openssl genpkey -algorithm ed25519 -out k.pem``
and ``openssl pkey -in k.pem -pubout -out k.pub`` write them. Encrypted private keys are refused
(signing runs unattended; protect the file instead). A key's id is ``sha256:`` of its raw 32-byte
public key, so the same key has the same id whichever file or format it came from.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import dsa, ec, ed448, rsa, x448, x25519
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from gatestats.attest.errors import KeyFileError

__all__ = [
    "MAX_KEY_FILE_BYTES",
    "KeyPairPaths",
    "generate_key_pair",
    "key_id",
    "load_private_key",
    "load_public_key",
]

#: Largest key file read; an Ed25519 PEM file is about 120 bytes.
MAX_KEY_FILE_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class KeyPairPaths:
    """The two files written by :func:`generate_key_pair` and the pair's key id."""

    private: Path
    public: Path
    key_id: str


def key_id(key: Ed25519PublicKey | Ed25519PrivateKey) -> str:
    """``sha256:<hex>`` of the raw 32-byte Ed25519 public key (of a private key: of its public half).

    Parameters
    ----------
    key
        A public or private Ed25519 key.

    Returns
    -------
    str
        The id of its public key.

    Examples
    --------
    >>> raw = bytes(range(32))
    >>> key_id(Ed25519PrivateKey.from_private_bytes(raw)) == key_id(
    ...     Ed25519PrivateKey.from_private_bytes(raw).public_key()
    ... )
    True
    """
    public = key.public_key() if isinstance(key, Ed25519PrivateKey) else key
    raw = public.public_bytes(encoding=serialization.Encoding.Raw, format=serialization.PublicFormat.Raw)
    return "sha256:" + hashlib.sha256(raw).hexdigest()


def _kind(key: object) -> str:
    """A key's algorithm in words, for "(got ...)" messages."""
    if isinstance(key, rsa.RSAPrivateKey | rsa.RSAPublicKey):
        return "an RSA key"
    if isinstance(key, ec.EllipticCurvePrivateKey | ec.EllipticCurvePublicKey):
        return f"an EC key on {key.curve.name}"
    if isinstance(key, dsa.DSAPrivateKey | dsa.DSAPublicKey):
        return "a DSA key"
    if isinstance(key, ed448.Ed448PrivateKey | ed448.Ed448PublicKey):
        return "an Ed448 key"
    if isinstance(key, x25519.X25519PrivateKey | x25519.X25519PublicKey | x448.X448PrivateKey | x448.X448PublicKey):
        return "a key-agreement (X25519/X448) key, which cannot sign"
    return f"a {type(key).__name__} key"


def _not_pem(where: Path, half: str, header: str) -> KeyFileError:
    """The error for a file that is not a PEM ``half`` key (``header``: the PEM block expected)."""
    return KeyFileError(f"{where}: not a PEM {half} key (expected {header}, as openssl writes)")


def _not_ed25519(where: Path, key: object, half: str) -> KeyFileError:
    """The error for a ``half`` key of another algorithm than Ed25519."""
    return KeyFileError(f"{where}: expected an Ed25519 {half} key (got {_kind(key)})")


def _read(path: Path, what: str) -> bytes:
    try:
        size = path.stat().st_size
        if size > MAX_KEY_FILE_BYTES:
            msg = f"{path}: not a key file: larger than {MAX_KEY_FILE_BYTES} bytes (got {size})"
            raise KeyFileError(msg)
        return path.read_bytes()
    except FileNotFoundError:
        msg = f"{path}: no such {what} file"
        raise KeyFileError(msg) from None
    except IsADirectoryError:
        msg = f"{path}: a directory, not a {what} file"
        raise KeyFileError(msg) from None
    except OSError as exc:
        msg = f"{path}: cannot read the {what} file: {exc.strerror}"
        raise KeyFileError(msg) from None


def load_private_key(path: str | os.PathLike[str]) -> Ed25519PrivateKey:
    """Read an unencrypted Ed25519 private key (PKCS #8 PEM).

    Parameters
    ----------
    path
        The private key's PEM file (``PREFIX.key``, kept secret).

    Returns
    -------
    Ed25519PrivateKey
        The signing key.

    Raises
    ------
    KeyFileError
        The file is missing or unreadable, not PEM, encrypted, a public key, or not Ed25519.
    """
    where = Path(path)
    data = _read(where, "private key")
    if b"-----BEGIN PUBLIC KEY-----" in data:
        msg = f"{where}: expected an Ed25519 private key (PKCS #8 PEM) (got a public key)"
        raise KeyFileError(msg)
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except TypeError:
        msg = f"{where}: the private key is encrypted; gatestats signs unattended and reads unencrypted keys only"
        raise KeyFileError(msg) from None
    except (ValueError, UnsupportedAlgorithm):
        raise _not_pem(where, "private", "PKCS #8 '-----BEGIN PRIVATE KEY-----'") from None
    if isinstance(key, Ed25519PrivateKey):
        return key
    raise _not_ed25519(where, key, "private")


def load_public_key(path: str | os.PathLike[str]) -> Ed25519PublicKey:
    """Read an Ed25519 public key (SubjectPublicKeyInfo PEM).

    Parameters
    ----------
    path
        The public key's PEM file (``PREFIX.pub`` of :func:`generate_key_pair`).

    Returns
    -------
    Ed25519PublicKey
        The public key, to verify signatures with.

    Raises
    ------
    KeyFileError
        The file is missing or unreadable, not PEM, a private key, or not Ed25519.
    """
    where = Path(path)
    data = _read(where, "public key")
    if b"PRIVATE KEY-----" in data:
        msg = (
            f"{where}: expected an Ed25519 public key (got a private key; give its public half, "
            "`openssl pkey -in KEY -pubout`, and keep the private key away from verifiers)"
        )
        raise KeyFileError(msg)
    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, UnsupportedAlgorithm):
        raise _not_pem(where, "public", "'-----BEGIN PUBLIC KEY-----'") from None
    if isinstance(key, Ed25519PublicKey):
        return key
    raise _not_ed25519(where, key, "public")


def _create(path: Path, data: bytes, mode: int) -> None:
    """Create ``path`` exclusively (never through a symlink) with ``mode`` and write ``data`` whole."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), mode)
    try:
        os.fchmod(fd, mode)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        path.unlink(missing_ok=True)
        raise
    os.close(fd)


def generate_key_pair(prefix: str | os.PathLike[str]) -> KeyPairPaths:
    """Generate an Ed25519 key pair: ``PREFIX.key`` (PKCS #8 PEM, mode 0600) and ``PREFIX.pub`` (PEM).

    Both files are created exclusively: an existing file (or symlink) at either path is refused and
    nothing is written; if the public key cannot be written, the private key just written is removed.

    Parameters
    ----------
    prefix
        The path both files start with.

    Returns
    -------
    KeyPairPaths
        The two files written and the key's id.

    Raises
    ------
    FileExistsError
        ``PREFIX.key`` or ``PREFIX.pub`` exists.
    """
    base = Path(prefix)
    private_path = base.with_name(base.name + ".key")
    public_path = base.with_name(base.name + ".pub")
    for target in (private_path, public_path):
        if target.exists() or target.is_symlink():
            msg = f"{target}: exists; a key file is never replaced (choose another --out prefix)"
            raise FileExistsError(msg)
    key = Ed25519PrivateKey.generate()
    private_pem = key.private_bytes(
        encoding=serialization.Encoding.PEM,
        format=serialization.PrivateFormat.PKCS8,
        encryption_algorithm=serialization.NoEncryption(),
    )
    public_pem = key.public_key().public_bytes(
        encoding=serialization.Encoding.PEM, format=serialization.PublicFormat.SubjectPublicKeyInfo
    )
    _create(private_path, private_pem, 0o600)
    try:
        _create(public_path, public_pem, 0o644)
    except BaseException:
        private_path.unlink(missing_ok=True)
        raise
    return KeyPairPaths(private=private_path, public=public_path, key_id=key_id(key))
