"""The line pass on every core answers exactly as the line pass in one process.

:func:`gatestats.records.lines.check_jsonl` hands the blocks of a large file to worker processes
(:mod:`gatestats.records.parallel`). Here the block size is made small (many blocks in a small
file) and every file is checked in parallel, so that hostile files put their defects in different
blocks and in several workers' blocks at once; each is checked by one process and by 2 and 3
workers, and the answers must be identical: accepted or refused, every problem (file, line, field,
message) in the same order, the same count, the same digest, lines, checksums, run set ids and
columns. A worker killed in the middle, or Ctrl-C, ends the pass with an error and leaves no process.

The tests that compare answers only take their workers from pools kept for the module (:func:`kept_pools`,
one per process count and kept columns; issue 28, item 3: ~100 worker starts were 9 of this file's ~16 CPU-s);
a kept worker is checked alive and idle before each pass. A clean file is checked by fresh workers, and the
tests of a worker's start, imports, death, failure and interruption start their own.
"""

from __future__ import annotations

import json
import os
import random
import select
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from gatestats.cli import app
from gatestats.errors import MAX_PROBLEMS, RecordFileError
from gatestats.records import lines, parallel
from gatestats.records.lines import KEY_HASH, check_jsonl
from gatestats_runner.runsets import encode_record, record_checksum
from tests.conftest import make_record

#: The block size of these tests (the reader's is 1 MiB): a 300 KB file is about 40 blocks.
BLOCK = 8 << 10
N_LINES = 700
KEEP = ("system", "case_id", "outcome", "trial", "attempt", "cost_usd", "machine_seconds")
KEY = ("system", "case_id", "case_version", "trial", "attempt")
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _small_blocks_in_parallel(monkeypatch: pytest.MonkeyPatch) -> None:
    """Small blocks, every file checked by workers (the reader's threshold is 1 GiB)."""
    monkeypatch.setattr(lines, "_BLOCK_BYTES", BLOCK)
    monkeypatch.setattr(lines, "PARALLEL_FROM_BYTES", 0)


class _KeptPool(parallel._Pool):
    """A pool whose workers outlive a pass that ends normally, for the next pass with as many and the same columns.

    A worker answers each block from its bytes, whether it is worth proving and the kept columns only
    (:func:`gatestats.records.block_worker.answer`; the block's lines numbered from 1), so a worker that
    answered another file's blocks before gives the same answers as a fresh one. A pass stopped by an
    error (``close(stopped=True)``) ends its workers as the product does and leaves the cache.
    """

    key: str

    def close(self, *, stopped: bool = False) -> None:
        """End the workers when the pass ``stopped`` (or at the module's end); otherwise keep them for the next pass."""
        if stopped:
            _POOLS.pop(self.key, None)
            super().close(stopped=True)


#: The kept pools of this process, by process count and kept columns (:func:`kept_pools`).
_POOLS: dict[str, _KeptPool] = {}


def _kept_pool(file: Path, workers: int, keep: list[list[str]] | None) -> _KeptPool:
    """The kept pool of ``workers`` workers proving ``keep``, each checked idle and alive; started on first use."""
    key = json.dumps([workers, keep])
    pool = _POOLS.get(key)
    if pool is None:
        pool = _POOLS[key] = _KeptPool(file, workers, keep)
        pool.key = key
    # no answer of an earlier pass left unread, no worker gone (its pipe would be readable: end of file)
    assert all(w.process.poll() is None for w in pool.workers)
    assert select.select([w.stdout for w in pool.workers], [], [], 0)[0] == []
    pool.file = file  # the file named in a worker's failure
    return pool


@pytest.fixture(scope="module")
def _pools_of_the_module() -> Iterator[None]:
    yield
    for pool in list(_POOLS.values()):
        parallel._Pool.close(pool)  # input closed: each worker ends at its end, and is reaped
    assert all(w.process.returncode == 0 for pool in _POOLS.values() for w in pool.workers)
    _POOLS.clear()


@pytest.fixture
def kept_pools(_pools_of_the_module: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The passes of a test take their workers from pools kept for the module (issue 28, item 3).

    For the tests that compare answers only: a worker started per pass cost ~0.1 CPU-s, about 100 of them
    in this file. The tests of a worker's start, death, failure and interruption start their own.
    """
    monkeypatch.setattr(parallel, "_Pool", _kept_pool)


def _record(i: int, **overrides: Any) -> dict[str, Any]:
    record = make_record(
        record_id=f"r-{i}",
        system=f"system-{i % 3}",
        case_id=f"case-{i // 6:04d}",
        trial=i % 2,
        case_version="sha256:" + f"{i // 6:064x}",
        graders=[{"name": "tests", "kind": "code", "verdict": "passed"}],
        slices=["security"],
        machine_seconds=1.5 + i,
        tokens_input=1200 + i,
        cost_usd=0.25 * (i % 7),
        started_at="2026-12-01T10:00:00.000+00:00",
        ended_at="2026-12-01T10:00:01.5Z",
        outcome="passed" if i % 4 else "failed",
    )
    record.update(overrides)
    return record


@pytest.fixture(scope="module")
def good() -> list[bytes]:
    """Runner lines (canonical, checksummed): a clean file of :data:`N_LINES` records."""
    return [encode_record(_record(i)) for i in range(N_LINES)]


def _sealed(record: dict[str, Any], text: str | None = None) -> bytes:
    """A line with its checksum recomputed (an attacker who knows the format): ``text`` is the JSON written."""
    record = {k: v for k, v in record.items() if k != "checksum"}
    body = text if text is not None else json.dumps(record, sort_keys=True, separators=(",", ":"))
    return body.replace("}", f',"checksum":"{record_checksum(record)}"}}', 1).encode() + b"\n"


def _edited(line: bytes) -> bytes:
    """The outcome flipped, the checksum left as it was."""
    record = json.loads(line)
    record["outcome"] = "failed" if record["outcome"] == "passed" else "passed"
    return (json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n").encode()


def _outcome(path: Path, workers: int | None, keep: tuple[str, ...] = KEEP) -> tuple[Any, ...]:
    try:
        check = check_jsonl(path, keep=keep, key=KEY, workers=workers)
    except RecordFileError as exc:
        return ("refused", exc.total, tuple(str(p) for p in exc.problems), exc.problems)
    frame = None
    if check.frame is not None:  # the key hashes differ between runs (Python's hash is seeded): their repeats do not
        hashes = check.frame.get_column(KEY_HASH)
        frame = (check.frame.drop(KEY_HASH).rows(), hashes.n_unique() == hashes.len())
    return (
        "accepted",
        check.n_records,
        check.checksums,
        check.digest,
        check.size,
        tuple(check.lines),
        check.run_set_ids,
        frame,
    )


def _alike(path: Path, counts: tuple[int, ...] = (3,)) -> tuple[Any, ...]:
    """The answer of one process; the same answer of each of ``counts`` worker processes is asserted."""
    alone = _outcome(path, 1)
    for workers in counts:
        assert _outcome(path, workers) == alone, f"{workers} workers answered otherwise"
    return alone


def _write(tmp_path: Path, rows: list[bytes], name: str = "records.jsonl") -> Path:
    path = tmp_path / name
    path.write_bytes(b"".join(rows))
    assert path.stat().st_size > 20 * BLOCK  # many blocks: the defects fall in several workers' blocks
    return path


def test_a_clean_runner_file_is_accepted_alike_with_its_columns(tmp_path: Path, good: list[bytes]) -> None:
    """Fresh workers (no kept pool): what a worker answers from its start is what one process answers."""
    answer = _alike(_write(tmp_path, good), (2, 3))
    assert answer[:3] == ("accepted", N_LINES, "verified")
    assert answer[-1] is not None  # every block proved: the columns came from the workers
    assert answer[-1][1] is True  # no key repeats


@pytest.mark.usefixtures("kept_pools")
@pytest.mark.parametrize("where", [1, N_LINES // 3, N_LINES // 2, N_LINES - 5])
@pytest.mark.parametrize("keep", [(), KEEP], ids=["validate", "columns"])
def test_a_key_repeated_in_the_parents_and_a_workers_blocks_is_seen(
    tmp_path: Path, good: list[bytes], where: int, keep: tuple[str, ...]
) -> None:
    """The parent proves every N-th block itself: its key hashes and its workers' agree (not Python's seeded hash)."""
    rows = [*good]
    rows.insert(where, encode_record(_record(0, record_id="r-again")))  # the key of line 1, in the parent's block 0
    path = _write(tmp_path, rows)
    for workers in (1, 2, 3):
        check = check_jsonl(path, keep=keep, key=KEY, workers=workers)
        assert check.frame is not None
        hashes = check.frame.get_column(KEY_HASH)
        assert hashes.n_unique() == hashes.len() - 1, f"{workers} processes: the repeated key was not seen"


@pytest.mark.usefixtures("kept_pools")
def test_a_repeated_key_repeats_its_hash_across_workers(tmp_path: Path, good: list[bytes]) -> None:
    """Equal keys in blocks of different workers hash alike (one seed; null keys hashed by value, not address)."""
    rows = [*good, encode_record(_record(0, record_id="r-again"))]
    answer = _alike(_write(tmp_path, rows))
    assert answer[0] == "accepted"
    assert answer[-1][1] is False


def _hostile(good: list[bytes]) -> dict[str, list[bytes]]:
    mid, late = N_LINES // 2, N_LINES - 3
    nan = json.dumps(_record(mid), sort_keys=True, separators=(",", ":")).replace(
        '"machine_seconds":351.5', '"machine_seconds":NaN'
    )
    nested = json.dumps(_record(mid, graders=[]), sort_keys=True, separators=(",", ":")).replace(
        '"graders":[]', '"graders":' + "[" * 40 + "]" * 40
    )
    duplicate = json.dumps(_record(mid), sort_keys=True, separators=(",", ":")).replace(
        '"outcome":', '"outcome":"passed","outcome":', 1
    )

    def at(*edits: tuple[int, bytes]) -> list[bytes]:
        rows = list(good)
        for i, line in edits:
            rows[i] = line
        return rows

    every_block = [(i, _edited(good[i])) for i in range(5, N_LINES, 17)]
    return {
        "edited line": at((mid, _edited(good[mid]))),
        "torn last line": [*good, good[0][:-40]],
        "torn last line that parses": [*good, encode_record(_record(N_LINES))[:-1]],
        "duplicate key, resealed": at((mid, _sealed(_record(mid), duplicate))),
        "NaN, resealed": at((mid, _sealed(_record(mid), nan))),
        "deep nesting, resealed": at((mid, _sealed(_record(mid), nested))),
        "bad type, resealed": at((mid, _sealed(_record(mid, trial="one")))),
        "unknown outcome, resealed": at((mid, _sealed(_record(mid, outcome="maybe")))),
        "defects in different blocks": at((3, _edited(good[3])), (mid, b"{not json}\n"), (late, _edited(good[late]))),
        "defects in every worker's blocks": at(*every_block),
        "more problems than are kept": at(*[(i, _edited(good[i])) for i in range(0, N_LINES, 5)]),
        "a line without its checksum": at(
            (mid, (json.dumps(json.loads(good[mid]) | {"checksum": None}) + "\n").encode())
        ),
        "checksums removed in many blocks": at(
            *[
                (i, (json.dumps({k: v for k, v in json.loads(good[i]).items() if k != "checksum"}) + "\n").encode())
                for i in range(1, N_LINES, 9)
            ]
        ),
        "blank lines and CRLF": at((10, b"\n"), (mid, b"  \n"), (late, good[late][:-1] + b"\r\n")),
        "a blank line in a file with a defect": at((10, b"\n"), (mid, _edited(good[mid]))),
        "a byte-order mark": [b"\xef\xbb\xbf" + good[0], *good[1:]],
        "invalid UTF-8": at((mid, good[mid].replace(b"security", b"secur\xffty"))),
        "a line longer than a block": at(
            (mid, _sealed(_record(mid, failed_check="x" * (3 * BLOCK), outcome="failed")))
        ),
        "an escaped character (left to the line pass)": at(
            (mid, encode_record(_record(mid, slices=['quoted "slice"', "tab\there"])))
        ),
        "another run set's line": at((mid, encode_record(_record(mid, run_set_id="set-2")))),
    }


#: The files of :func:`_hostile` the line pass accepts (a last line without newline that is a whole
#: record, a line left to the line pass that is valid, another run set's line: the seal refuses that).
ACCEPTED = {
    "torn last line that parses",
    "blank lines and CRLF",
    "an escaped character (left to the line pass)",
    "another run set's line",
}
HOSTILE = list(_hostile([encode_record(_record(i)) for i in range(N_LINES)]))


@pytest.mark.usefixtures("kept_pools")
@pytest.mark.parametrize("kind", HOSTILE)
def test_a_hostile_file_gets_the_same_answer_from_every_number_of_workers(
    tmp_path: Path, good: list[bytes], kind: str
) -> None:
    answer = _alike(_write(tmp_path, _hostile(good)[kind]))
    assert answer[0] == ("accepted" if kind in ACCEPTED else "refused"), answer[:3]


@pytest.mark.usefixtures("kept_pools")
def test_the_first_problem_and_the_count_are_the_sequential_ones(tmp_path: Path, good: list[bytes]) -> None:
    rows = _hostile(good)["more problems than are kept"]
    answer = _alike(_write(tmp_path, rows), (2, 3))
    assert answer[1] == N_LINES // 5
    assert len(answer[3]) == MAX_PROBLEMS
    assert answer[3][0].line == 1  # the first line named is the first line edited


@pytest.mark.usefixtures("kept_pools")
@pytest.mark.parametrize("seed", range(4))
def test_random_byte_edits_in_several_blocks_get_the_same_answer(tmp_path: Path, good: list[bytes], seed: int) -> None:
    rng = random.Random(seed)
    data = bytearray(b"".join(good))
    for _ in range(rng.randint(1, 6)):
        at = rng.randrange(len(data))
        data[at] = rng.choice(b'{}[]":,0a\\ \n\x00\xff')
    path = tmp_path / "records.jsonl"
    path.write_bytes(bytes(data))
    _alike(path)


@pytest.mark.usefixtures("kept_pools")
def test_a_file_from_another_tool_without_checksums_is_accepted_alike(tmp_path: Path) -> None:
    rows = [(json.dumps(_record(i)) + "\n").encode() for i in range(N_LINES)]
    answer = _alike(_write(tmp_path, rows))
    assert answer[:3] == ("accepted", N_LINES, "none")
    assert answer[-1] is None  # not proved: polars reads it after the pass


@pytest.mark.usefixtures("kept_pools")
def test_a_resealed_run_set_is_refused_by_its_seal_in_parallel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gatestats.gate import load_record_set
    from tests.gate.factory import write_run_set

    outcomes = {f"c{i:03d}": ["passed", "failed" if i % 5 == 0 else "passed"] for i in range(200)}
    run_set = write_run_set(tmp_path / "set", system="candidate", outcomes=outcomes)
    records = run_set / "records.jsonl"
    rows = records.read_bytes().splitlines(keepends=True)
    assert records.stat().st_size > 20 * BLOCK
    monkeypatch.setattr(parallel, "default_workers", lambda: 3)
    assert load_record_set([run_set]).n_records == len(rows)  # the honest set, read in parallel
    record = json.loads(rows[len(rows) // 2])
    record["outcome"] = "failed" if record["outcome"] == "passed" else "passed"
    rows[len(rows) // 2] = encode_record(record)  # edited, its checksum recomputed: only the seal can tell
    records.write_bytes(b"".join(rows))
    with pytest.raises(RecordFileError, match="records_seal"):
        load_record_set([run_set])


@pytest.mark.usefixtures("kept_pools")
@pytest.mark.parametrize("command", [["analyze", "--k", "1-2", "--json"], ["analyze", "--k", "1-2"], ["validate"]])
def test_the_commands_print_the_same_bytes_whatever_the_number_of_workers(
    tmp_path: Path, good: list[bytes], monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    path = _write(tmp_path, good)
    printed = set()
    for workers in (1, 2, 3):
        monkeypatch.setattr(parallel, "default_workers", lambda n=workers: n)
        result = CliRunner().invoke(app, [command[0], str(path), *command[1:]])
        assert result.exit_code == 0, result.output
        printed.add(result.output)
    assert len(printed) == 1


def test_workers_must_be_at_least_one(tmp_path: Path, good: list[bytes]) -> None:
    with pytest.raises(ValueError, match="workers must be at least 1"):
        check_jsonl(_write(tmp_path, good), workers=0)


def test_a_small_file_starts_no_worker(tmp_path: Path, good: list[bytes], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lines, "PARALLEL_FROM_BYTES", 64 << 20)

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a worker was started for a small file")

    monkeypatch.setattr(parallel, "_Pool", refuse)
    assert check_jsonl(_write(tmp_path, good), workers=2).n_records == N_LINES


def _kill_one_worker_after_the_first_answer(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """kill -9 of the last worker once the first block is merged (later blocks are sent to it after its death)."""
    killed: list[int] = []
    answer = parallel._Pool.answer

    def answer_then_kill(self: Any, worker: int) -> Any:
        part = answer(self, worker)
        if not killed:
            victim = self.workers[-1].process
            os.kill(victim.pid, signal.SIGKILL)
            victim.wait()
            killed.append(victim.pid)
        return part

    monkeypatch.setattr(parallel._Pool, "answer", answer_then_kill)
    return killed


def test_a_worker_killed_in_the_middle_refuses_the_file(
    tmp_path: Path, good: list[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(tmp_path, good)
    killed = _kill_one_worker_after_the_first_answer(monkeypatch)
    with pytest.raises(
        RecordFileError, match=r"worker process of the line pass \(pid \d+\) was killed by signal 9 \(SIGKILL\)"
    ) as info:
        check_jsonl(path, workers=2)
    assert killed
    assert "the file was not checked" in str(info.value)
    assert str(path) in str(info.value)


def test_analyze_with_a_worker_killed_exits_non_zero_and_says_why(
    tmp_path: Path, good: list[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(tmp_path, good)
    _kill_one_worker_after_the_first_answer(monkeypatch)
    monkeypatch.setattr(parallel, "default_workers", lambda: 2)
    result = CliRunner().invoke(app, ["analyze", str(path), "--json"])
    assert result.exit_code == 1, result.output
    assert "SIGKILL" in result.output
    assert "ok" not in result.output.split()


def test_a_worker_that_fails_refuses_the_file_and_says_why(tmp_path: Path, good: list[bytes]) -> None:
    """An exception in a worker (here: a column no proof keeps) is named; nothing is accepted."""
    pool = parallel._Pool(tmp_path / "records.jsonl", 2, (("nope",), ()))
    try:
        pool.send(0, True, b"".join(good))
        with pytest.raises(RecordFileError, match=r"\(pid \d+\) failed: ValueError: 'nope' is not a field"):
            pool.answer(0)
    finally:
        pool.close(stopped=True)
    assert all(w.process.returncode is not None for w in pool.workers)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ")[-1].split()[0]
    except OSError:
        return False
    return state not in {"Z", "X"}


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
@pytest.mark.parametrize(
    "how",
    ["Ctrl-C (the process group)", "SIGINT to the parent alone", "kill -9 of the parent"],
)
def test_an_interrupted_pass_leaves_no_worker_behind(tmp_path: Path, good: list[bytes], how: str) -> None:
    path = tmp_path / "records.jsonl"
    path.write_bytes(b"".join(good * 4))
    code = textwrap.dedent(
        f"""
        import time
        from gatestats.records import lines, parallel
        lines._BLOCK_BYTES = {BLOCK}
        lines.PARALLEL_FROM_BYTES = 0
        start, merge = parallel._Pool.__init__, parallel._merge
        def announce(self, *args):
            start(self, *args)
            print(*(w.process.pid for w in self.workers), flush=True)
        def slowly(*args):  # the pass is still at work when it is interrupted
            time.sleep(0.05)
            merge(*args)
        parallel._Pool.__init__, parallel._merge = announce, slowly
        lines.check_jsonl({str(path)!r}, workers=3)  # the parent and two workers
        """
    )
    child = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT, start_new_session=True
    )
    assert child.stdout is not None
    pids = [int(p) for p in child.stdout.readline().split()]
    assert len(pids) == 2
    assert all(map(_alive, pids))
    time.sleep(0.3)
    if how.startswith("Ctrl-C"):
        os.killpg(child.pid, signal.SIGINT)
    elif how.startswith("SIGINT"):
        child.send_signal(signal.SIGINT)
    else:
        child.kill()
    _, err = child.communicate(timeout=60)
    assert child.returncode != 0
    assert (b"KeyboardInterrupt" in err) == how.startswith(("Ctrl-C", "SIGINT"))
    deadline = time.monotonic() + 10
    while any(map(_alive, pids)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(map(_alive, pids)), "a worker outlived the interrupted pass"


def test_default_workers_follow_the_affinity_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    cpus = len(os.sched_getaffinity(0))
    for unknown_or_idle in (None, 0):
        monkeypatch.setattr(parallel, "_others_running", lambda n=unknown_or_idle: n)
        assert parallel.default_workers() == min(cpus, parallel.MAX_WORKERS)
    n = min(cpus, parallel.MAX_WORKERS)
    monkeypatch.setattr(parallel, "_others_running", lambda: 1)
    assert parallel.default_workers() == max(1, min(cpus - 1, parallel.MAX_WORKERS))
    monkeypatch.setattr(parallel, "_others_running", lambda: cpus + 7)
    assert parallel.default_workers() == 1  # every CPU taken by other work: this process alone
    assert 1 <= n <= parallel.MAX_WORKERS


def test_others_running_reads_the_runnable_tasks_besides_this_one(monkeypatch: pytest.MonkeyPatch) -> None:
    readings = iter([b"0.5 0.4 0.3 3/120 999\n", b"0.5 0.4 0.3 9/120 999\n", b"0.5 0.4 0.3 2/120 999\n"] * 3)

    class Fake:
        def __init__(self, *args: Any) -> None:
            pass

        def __enter__(self) -> Fake:
            return self

        def __exit__(self, *args: Any) -> None:
            pass

        def read(self) -> bytes:
            return next(readings)

    monkeypatch.setattr(parallel, "open", Fake, raising=False)
    assert parallel._others_running() == 2  # the median of 3, 9, 2, 3, 9 is 3: two besides this process
    monkeypatch.setattr(parallel, "open", lambda *a: (_ for _ in ()).throw(OSError("no /proc")), raising=False)
    assert parallel._others_running() is None
    monkeypatch.undo()
    real = parallel._others_running()
    assert real is None or real >= 0


def test_a_large_file_on_a_busy_machine_starts_no_worker(
    tmp_path: Path, good: list[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """By default, other work on every CPU means this process alone: the same answer, no process started."""
    path = _write(tmp_path, good)
    expected = _outcome(path, 1)
    monkeypatch.setattr(parallel, "_others_running", lambda: 64)

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a worker was started on a busy machine")

    monkeypatch.setattr(parallel.subprocess, "Popen", refuse)
    assert _outcome(path, None) == expected


def test_a_worker_imports_the_block_checker_without_polars(tmp_path: Path, good: list[bytes]) -> None:
    """What a worker loads (its command's import, then a block proved): msgspec and the checker, no polars."""
    code = (
        "import json, sys\n"
        "from gatestats.records.block_worker import answer\n"
        f"part = answer(open({str(tmp_path / 'block')!r}, 'rb').read(), True, [['system'], ['system']])\n"
        "heavy = ('polars', 'numpy', 'pandas', 'gatestats.records.io', 'gatestats.vocabulary')\n"
        "print(json.dumps([part[0], part[1], 'msgspec' in sys.modules, [m for m in heavy if m in sys.modules]]))\n"
    )
    (tmp_path / "block").write_bytes(b"".join(good))
    done = subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert json.loads(done.stdout) == [N_LINES, True, True, []]


def _spy_processes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The process counts :func:`parallel.read_parallel` is called with (it still runs), in call order."""
    seen: list[int] = []
    read_parallel = parallel.read_parallel

    def spy(scan: Any, handle: Any, processes: int) -> None:
        seen.append(processes)
        read_parallel(scan, handle, processes)

    monkeypatch.setattr(parallel, "read_parallel", spy)
    return seen


@pytest.mark.usefixtures("kept_pools")
def test_the_default_reads_the_machine_once_per_file(
    tmp_path: Path, good: list[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whether to use workers and how many are decided by one reading: a machine that gets busy between
    two readings must not start a pool of one worker beside the parent."""
    path = _write(tmp_path, good)
    expected = _outcome(path, 1, keep=(*KEY, "outcome"))  # the key hashed by polars: the default shares the pass
    answers = iter([2, 1])
    calls: list[int] = []

    def busier_each_time() -> int:
        calls.append(1)
        return next(answers)

    monkeypatch.setattr(parallel, "default_workers", busier_each_time)
    seen = _spy_processes(monkeypatch)
    assert _outcome(path, None, keep=(*KEY, "outcome")) == expected
    assert calls == [1]
    assert seen == [2]


@pytest.mark.usefixtures("kept_pools")
@pytest.mark.parametrize(
    ("keep", "workers", "shared"),
    [
        ((), None, False),  # validate: the key hashed in Python, block by block
        (KEEP, None, False),  # some key fields not kept: the same
        ((*KEY, "outcome"), None, True),  # analyze: the key hashed by polars in the whole frame
        (None, None, True),  # a run set's first pass: no key hashed
        ((), 2, True),  # asked for: obeyed
    ],
)
def test_the_default_shares_the_pass_only_where_no_key_is_hashed_in_python(
    tmp_path: Path,
    good: list[bytes],
    monkeypatch: pytest.MonkeyPatch,
    keep: tuple[str, ...] | None,
    workers: int | None,
    shared: bool,
) -> None:
    """A shared pass hashing the key in Python costs +19-24% CPU at 10M lines (portable hash, transfer)."""
    path = _write(tmp_path, good)
    monkeypatch.setattr(parallel, "default_workers", lambda: 3)
    seen = _spy_processes(monkeypatch)
    check = check_jsonl(path, keep=keep, key=KEY if keep is not None else (), workers=workers)
    assert check.n_records == N_LINES
    assert bool(seen) is shared
