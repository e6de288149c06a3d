"""The project's digests, one implementation: the runner's public :mod:`gatestats_runner.digests`.

Record checksums, run-set and case digests are written by the standard-library runner; the release
controller digests policies, record files, verdicts, calibrations and report data the same way
(``sha256:<hex>``; canonical JSON = sorted keys, compact separators, UTF-8 kept, no NaN).
"""

from __future__ import annotations

from gatestats_runner.digests import canonical_json, digest_bytes, digest_file, digest_json

__all__ = ["canonical_json", "digest_bytes", "digest_file", "digest_json", "digest_text"]


def digest_text(text: str) -> str:
    """``sha256:<hex>`` of ``text`` encoded as UTF-8.

    Parameters
    ----------
    text
        The text (any string: encoded as UTF-8 before hashing).

    Returns
    -------
    str
        Its digest.

    Examples
    --------
    >>> digest_text("")
    'sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'
    """
    return digest_bytes(text.encode("utf-8"))
