"""Read a verdict file for verification: the gate's one strict reader, its errors as attestation errors.

A verdict that is verified must mean one thing: duplicate keys, ``NaN``, wrong types, unknown
fields or a decision outside the vocabulary are errors that name the field
(:func:`gatestats.gate.read_verdict`). The digest and the derived fields are not checked here:
``gatestats verify`` reports each disagreement as a failed check of its own.
"""

from __future__ import annotations

import os

from gatestats.attest.errors import AttestationError
from gatestats.gate import VerdictFile, VerdictFileError, read_verdict

__all__ = ["VerdictFile", "read_verdict_file"]


def read_verdict_file(path: str | os.PathLike[str]) -> VerdictFile:
    """Read and type-check a ``gatestats-verdict/1`` file without stopping at its digest.

    Parameters
    ----------
    path
        The verdict file (written by ``gatestats gate -o``).

    Returns
    -------
    VerdictFile
        Its bytes, their digest, the parsed body and the typed verdict.

    Raises
    ------
    AttestationError
        Unreadable, not strict JSON (duplicate keys, NaN, ...), an unknown field, or a missing or
        mistyped field (named, with what was expected and got).
    """
    try:
        return read_verdict(path, check_digest=False)
    except VerdictFileError as exc:
        raise AttestationError(str(exc)) from None
