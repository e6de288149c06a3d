"""Errors of the attestation layer: a file that cannot be read as what it claims, and an unusable key."""

from __future__ import annotations

from gatestats.errors import GatestatsError

__all__ = ["AttestationError", "KeyFileError"]


class AttestationError(GatestatsError, ValueError):
    """A verdict, envelope or statement cannot be read strictly (the message names file and field)."""


class KeyFileError(GatestatsError, ValueError):
    """A key file is missing, unreadable, not PEM, not Ed25519, encrypted, or the wrong half of a pair."""
