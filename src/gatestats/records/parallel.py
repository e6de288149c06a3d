"""The strict line pass of a large JSONL file on every core: blocks proved in worker processes.

:func:`gatestats.records.lines.check_jsonl` reads a file in blocks of whole lines and proves each
(:func:`gatestats.records.canonical_block.proves_block`) or checks it line by line. A block's
answer depends on its bytes only (and on whether it is worth proving, which the parent decides as
the sequential pass does), so the blocks of a large file are shared among processes: the parent
keeps what is sequential - it reads the file, digests every byte (the digest a verdict binds), and
merges the answers in line order, numbering each block's lines after those merged before it
(:func:`read_parallel`) - and proves every N-th block itself; worker processes prove the others.
Every block, in the parent or in a worker, is answered by the very code the sequential pass runs
(``_Scan.block`` on one block, :func:`gatestats.records.block_worker.answer`), and its answer is
what that block adds to the pass: lines, problems (the first :data:`~gatestats.errors.MAX_PROBLEMS`
and their count), blank lines, the lines with and without a checksum, run set ids, and for a
proved block the kept columns' values and key hashes. Merged in order, these are exactly what the
sequential pass holds, so every answer, message, line number and count, and the first problem
named, is the same whatever the number of processes. The torn last line is checked by the parent,
after every block.

The workers are fresh interpreters (``subprocess``: no fork of a process whose polars threads run)
that import the block checker and msgspec, not polars (:mod:`gatestats.records.block_worker`). A
worker that dies, or fails, stops the pass with an error naming the file: nothing is accepted.
Python's string hash is seeded per process, so the key hashes of a shared pass hash each string
of the key by its CRC-32 and Adler-32 (:func:`gatestats.records.lines._key_hashes`, ``portable``):
alike in the parent and every worker (they only prove that no key repeats; a collision costs time,
never an answer).
"""

from __future__ import annotations

import contextlib
import io
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, cast

from gatestats.errors import RecordFileError, RecordProblem
from gatestats.records.block_worker import ANSWER, BLOCK, FAILED, PART, answer

if TYPE_CHECKING:
    from gatestats.records.lines import _Scan

__all__ = ["MAX_WORKERS", "default_workers", "read_parallel"]

#: At most this many workers by default: the parent (reading, digesting, merging) keeps up with about as many.
MAX_WORKERS = 8
#: Blocks handed to each worker and not yet merged, at most (each about a MiB): enough to keep it busy.
_IN_FLIGHT = 3
#: The size asked for each pipe to and from a worker (``F_SETPIPE_SZ``, Linux): a block in fewer writes.
_PIPE_BYTES = 1 << 20


def default_workers() -> int:
    """The CPUs this process may run on (its affinity, at most :data:`MAX_WORKERS`) that no other task takes now.

    A worker only pays on a CPU nothing else runs on: where other work already takes every core,
    the workers share the same cores and add their start and the blocks' transfer to the CPU time
    (+18% at 1M lines) without shortening the wait (measured: benchmarks/RESULTS.md, issue 28 item
    1, sessions 37 and 38). So the CPUs are counted less the tasks running on the machine at this
    moment besides this one (:func:`_others_running`, Linux); 1 means the calling process alone.
    The answer is the same whatever the number.
    """
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - a platform without affinity
        cpus = os.cpu_count() or 1
    others = _others_running()
    free = cpus if others is None else cpus - others
    return max(1, min(free, MAX_WORKERS))


#: How many times :func:`_others_running` reads the count of running tasks (2 ms apart; the median is taken).
_SAMPLES = 5


def _others_running() -> int | None:
    """The tasks running or waiting for a CPU now, besides this process (``None``: not known here).

    The fourth field of ``/proc/loadavg`` (Linux) counts the runnable tasks at the moment it is read,
    this one included; the median of a few readings over ~10 ms smooths a task that merely passes.
    (The load averages lag by a minute: a command just ended still counts there.)
    """
    counts = []
    for sample in range(_SAMPLES):
        if sample:
            time.sleep(0.002)
        try:
            with open("/proc/loadavg", "rb") as handle:
                running = int(handle.read().split()[3].split(b"/")[0])
        except (OSError, ValueError, IndexError):
            return None
        counts.append(running)
    return max(0, sorted(counts)[len(counts) // 2] - 1)


def read_parallel(scan: _Scan, handle: BinaryIO, workers: int) -> None:
    """Every line of ``handle`` into ``scan``, as :meth:`_Scan.read` does, the blocks checked by ``workers`` processes.

    This process is one of them: it proves every ``workers``-th block itself, between reading
    and merging, and hands the others to ``workers - 1`` worker processes, round robin (one
    process less to start, and that share of the blocks sent through no pipe and answered by no
    message). Every block's part is made by the same function (:func:`block_worker.answer
    <gatestats.records.block_worker.answer>`), with key hashes that are alike in every process.

    Parameters
    ----------
    scan
        The pass's state (:class:`gatestats.records.lines._Scan`), fresh.
    handle
        The file, open for reading at its start.
    workers
        How many processes check the blocks, this one included (at least 2).

    Raises
    ------
    RecordFileError
        A worker died or failed before it answered (the file is not accepted).
    """
    keep = None if scan.frames is None else [list(scan.frames.keep), list(scan.frames.key)]
    pool = _Pool(scan.file, workers - 1, keep)
    try:
        # each entry: a worker's number (its next answer) or this process's own part, in line order
        pending: deque[int | list[Any]] = deque()
        torn: bytes | None = None
        turn = 0
        for block, last in scan.blocks(handle):
            if block:
                worth = scan.worth(block)
                if turn:
                    pool.send(turn - 1, worth, block)
                    pending.append(turn - 1)
                else:
                    pending.append(answer(block, worth, keep))
                turn = (turn + 1) % workers
                if len(pending) >= workers * _IN_FLIGHT:
                    _merge(scan, pool.answer(pending.popleft()))
            torn = last
        while pending:
            _merge(scan, pool.answer(pending.popleft()))
    except BaseException:  # a worker gone, Ctrl-C, ...: the others are ended at once
        pool.close(stopped=True)
        raise
    pool.close()
    if torn is not None:
        scan.line(torn)


def _merge(scan: _Scan, part: Sequence[Any]) -> None:
    """Add what one block added to the pass to ``scan``, in line order.

    ``part`` is a worker's answer (:func:`gatestats.records.block_worker.answer`). The worker
    numbers the block's lines from 1; they follow the lines merged so far.
    """
    n_lines, proved, problems, total, blank, with_checksum, without_checksum, run_set_ids, columns, hashes = part
    before = scan.number
    scan.number += n_lines
    scan.problems.extend([_problem(scan.file, before + line, *p) for line, *p in problems], total=total)
    scan.blank.extend(before + line for line in blank)
    for sample, (count, first) in ((scan.with_checksum, with_checksum), (scan.without_checksum, without_checksum)):
        sample.merge(count, [before + line for line in first])
    scan.run_set_ids.update(run_set_ids)
    if scan.frames is not None:
        if proved:
            scan.frames.add_values(columns, hashes)
        else:
            scan.frames = None


def _problem(file: Path, line: int, field: str, message: str) -> RecordProblem:
    return RecordProblem(file=str(file), line=line, field=field, message=message)


class _Worker:
    """One worker process, and the thread that writes its blocks (so that a full pipe never blocks the merge)."""

    def __init__(self, command: list[str], env: dict[str, str]) -> None:
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0, env=env)
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.stdin = self.process.stdin
        self.stdout = cast("io.RawIOBase", self.process.stdout)  # bufsize=0: the raw pipe
        for pipe in (self.stdin, self.stdout):
            with contextlib.suppress(OSError, AttributeError):  # a bigger pipe: fewer switches (Linux only)
                import fcntl  # noqa: PLC0415 - POSIX only

                fcntl.fcntl(pipe.fileno(), fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
        self.blocks: queue.SimpleQueue[tuple[bytes, bytes] | None] = queue.SimpleQueue()
        self.writer = threading.Thread(target=self._write, daemon=True)
        self.writer.start()

    def _write(self) -> None:
        """Write each block queued to the worker; at ``None`` (or a worker gone), close its input."""
        try:
            while (message := self.blocks.get()) is not None:
                for part in message:
                    view = memoryview(part)
                    while view:  # a raw write may be partial (a signal in the middle)
                        view = view[self.stdin.write(view) or 0 :]
        except OSError:
            pass  # the worker is gone: the merge finds no answer and names it
        finally:
            with contextlib.suppress(OSError):
                self.stdin.close()

    def read(self, n: int) -> bytes | None:
        """Exactly ``n`` bytes of the worker's answers (``None``: it ended first)."""
        buffer = bytearray(n)
        view = memoryview(buffer)
        got = 0
        while got < n:
            count = self.stdout.readinto(view[got:])
            if not count:
                return None
            got += count
        return bytes(buffer)


class _Pool:
    """The worker processes of one pass (started by the constructor, ended by :meth:`close`)."""

    def __init__(self, file: Path, workers: int, keep: list[list[str]] | None) -> None:
        import msgspec  # noqa: PLC0415 - the proof imported it already

        import gatestats_runner  # noqa: PLC0415

        self.file = file
        self.decode = msgspec.msgpack.Decoder().decode
        # the directories holding the gatestats and gatestats_runner packages (src/ and runner/ in a checkout)
        package = Path(__file__).resolve().parents[1]
        roots = dict.fromkeys(str(p.parent) for p in (package, Path(gatestats_runner.__file__ or "").parent))
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([*roots, *filter(None, [env.get("PYTHONPATH")])])
        spec = msgspec.json.encode(keep).decode()
        command = [sys.executable, "-P", "-c", "from gatestats.records.block_worker import serve; serve()", spec]
        self.workers: list[_Worker] = []
        try:
            for _ in range(workers):
                self.workers.append(_Worker(command, env))
        except BaseException:
            self.close(stopped=True)
            raise

    def send(self, worker: int, worth: bool, block: bytes) -> None:
        """Hand ``block`` (whole lines; ``worth``: proved if it can be) to worker ``worker``."""
        self.workers[worker].blocks.put((BLOCK.pack(worth, len(block)), block))

    def answer(self, worker: int | list[Any]) -> Sequence[Any]:
        """The next answer of worker ``worker`` (its blocks answer in order); a part made in this process as it is."""
        if isinstance(worker, list):
            return worker
        source = self.workers[worker]
        header = source.read(ANSWER.size)
        kind, length = ANSWER.unpack(header) if header is not None else (FAILED, -1)
        body = source.read(length) if length >= 0 else None
        if kind == PART and body is not None:
            part: Sequence[Any] = self.decode(body)
            return part
        why = body.decode("utf-8", "replace") if body is not None else _ended(source.process)
        msg = f"a worker process of the line pass (pid {source.process.pid}) {why}: the file was not checked"
        raise RecordFileError.single(self.file, "<file>", msg)

    def close(self, *, stopped: bool = False) -> None:
        """End and reap every worker: its input closed (it exits at its end), or killed when the pass ``stopped``."""
        for worker in self.workers:
            if stopped and worker.process.poll() is None:
                worker.process.kill()
            worker.blocks.put(None)
        for worker in self.workers:
            try:
                worker.process.wait(timeout=10)
            except subprocess.TimeoutExpired:  # pragma: no cover - a worker that does not see its input end
                worker.process.kill()
                worker.process.wait()
            worker.stdout.close()
            worker.writer.join()


def _ended(process: subprocess.Popen[bytes]) -> str:
    """How a worker that stopped answering ended, in words."""
    try:
        code = process.wait(timeout=5)
    except subprocess.TimeoutExpired:  # pragma: no cover - it closed its output and lives on
        process.kill()
        return "closed its output before it answered"
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"was killed by signal {-code} ({signal.Signals(-code).name}) before it answered"
        return f"was killed by signal {-code} before it answered"
    return f"ended with exit code {code} before it answered"
