"""Write the benchmark layout as a runner-format JSONL record file (checksummed canonical lines).

    .venv/bin/python benchmarks/make_jsonl.py --cases 10000 --out /tmp/h28/records_1m.jsonl

The records are those of :mod:`make_synthetic` (``--systems`` x ``--cases`` x ``--trials`` plus
~0.5% retries, the same seed), each written as the runner writes it
(:func:`gatestats_runner.store.encode_record`: canonical JSON with a ``checksum``; fields the
synthetic layout leaves null are absent). With ``--torn``, ``--edited`` and ``--broken-seal``
it also writes the three damaged copies the integrity benchmark names (``FILE.torn.jsonl``: a last
line cut mid-record; ``FILE.edited.jsonl``: one outcome flipped in the middle of the file, its
checksum left as it was; ``FILE.resealed.jsonl``: the same line edited *and* its checksum
recomputed, which only a run set's seal can catch). The damaged copies are written by copying the
file and patching it in place, so a 3 GB file needs no 3 GB in memory.

With ``--copies K`` the file is written K times over from one encoding of the records, each copy's
case ids and record ids prefixed with ``kN-`` and each line's checksum recomputed (the line is
already canonical: sha256 of the line without its checksum member): 10 million records in about
a minute instead of the ~15 minutes of encoding each one.

    .venv/bin/python benchmarks/make_jsonl.py --cases 10000 --copies 10 --out /work/bigdata/jsonl_runner_10m.jsonl
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "runner"))

from gatestats_runner.store import MANIFEST_FORMAT, encode_record, seal_records  # noqa: E402


def write_jsonl(parquet: Path, out: Path) -> int:
    """Encode every row of ``parquet`` as a runner line into ``out``; return the number of records."""
    n = 0
    with out.open("wb") as handle:
        for batch in pl.scan_parquet(parquet).collect_batches(chunk_size=100_000):
            lines = [
                encode_record({k: v for k, v in row.items() if v is not None}) for row in batch.iter_rows(named=True)
            ]
            handle.write(b"".join(lines))
            n += len(lines)
    return n


def damaged_copies(path: Path) -> None:
    """The torn, edited and resealed copies of ``path`` (see the module docstring)."""
    torn = path.with_suffix(".torn.jsonl")
    shutil.copyfile(path, torn)
    with torn.open("ab") as handle:
        handle.write(b'{"attempt":0,"case_id":"torn-')
    size = path.stat().st_size
    with path.open("rb") as handle:
        handle.seek(size // 2)
        handle.readline()
        middle = handle.tell()
        line = handle.readline()
    flipped = line.replace(b'"outcome":"failed"', b'"outcome":"passed"', 1)
    if flipped == line:
        flipped = line.replace(b'"outcome":"passed"', b'"outcome":"failed"', 1)
    record = json.loads(flipped)
    record.pop("checksum")
    for suffix, patch in ((".edited.jsonl", flipped), (".resealed.jsonl", encode_record(record))):
        assert len(patch) == len(line)  # "failed" and "passed" have one length: patched in place
        target = path.with_suffix(suffix)
        shutil.copyfile(path, target)
        with target.open("r+b") as handle:
            handle.seek(middle)
            handle.write(patch)


_MEMBER = len(b'"checksum":"sha256:",') + 64


def write_copies(source: Path, out: Path, copies: int) -> int:
    """``source`` written ``copies`` times into ``out``, ids prefixed per copy, checksums recomputed."""
    n = 0
    sha256 = hashlib.sha256
    with out.open("wb") as sink:
        for k in range(copies):
            prefix_case, prefix_record = f'"case_id":"k{k}-'.encode(), f'"record_id":"k{k}-'.encode()
            with source.open("rb") as handle:
                while lines := handle.readlines(1 << 24):
                    block = []
                    for original in lines:
                        line = original.replace(b'"case_id":"', prefix_case, 1)
                        line = line.replace(b'"record_id":"', prefix_record, 1)
                        at = line.index(b'"checksum":"')
                        body = line[:at] + line[at + _MEMBER :]
                        digest = sha256(body[:-1]).hexdigest().encode()
                        block.append(line[:at] + b'"checksum":"sha256:' + digest + line[at + _MEMBER - 2 :])
                    sink.write(b"".join(block))
                    n += len(block)
    return n


def run_sets(path: Path, root: Path) -> None:
    """Two run sets under ``root``: ``sealed/`` (``path`` with the runner's seal) and ``broken-seal/``.

    ``broken-seal/`` holds the resealed copy (one line edited, its checksum recomputed) beside the
    manifest of the original: only the seal can tell.
    """
    for name, source in (("sealed", path), ("broken-seal", path.with_suffix(".resealed.jsonl"))):
        target = root / name
        target.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target / "records.jsonl")
        with path.open("rb") as handle:
            run_set_id = json.loads(handle.readline())["run_set_id"]  # one system: one run set id
        manifest = {
            "format": MANIFEST_FORMAT,
            "run_set_id": run_set_id,
            "complete": True,
            "records_seal": seal_records(target),
        }
        (target / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
        shutil.copyfile(source, target / "records.jsonl")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--systems", type=int, default=10)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--damaged", action="store_true", help="also write the torn, edited and resealed copies")
    parser.add_argument("--run-sets", type=Path, default=None, help="write a sealed and a broken-seal run set here")
    parser.add_argument("--copies", type=int, default=1, help="write the records this many times (ids prefixed)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        parquet = Path(tmp) / "records.parquet"
        make = [sys.executable, str(ROOT / "benchmarks" / "make_synthetic.py"), "--cases", str(args.cases)]
        make += ["--systems", str(args.systems)]
        subprocess.run([*make, "--out", str(parquet)], check=True)
        if args.copies == 1:
            n = write_jsonl(parquet, args.out)
        else:
            once = Path(tmp) / "once.jsonl"
            write_jsonl(parquet, once)
            n = write_copies(once, args.out, args.copies)
    print(f"{args.out}: {n} records, {args.out.stat().st_size / 1e6:.0f} MB")
    if args.damaged or args.run_sets:
        damaged_copies(args.out)
    if args.run_sets:
        run_sets(args.out, args.run_sets)


if __name__ == "__main__":
    main()
