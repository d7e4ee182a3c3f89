"""Crash safety of the log: a writer killed with SIGKILL, round after round, on one directory.

Each round a child process opens the partition directory the way a broker restarting after a
crash does (``clean_shutdown=False``, recovery point 0 or the one it last checkpointed), appends
batches with ``flush.messages=1`` under a new leader epoch and, once ``append`` has returned,
acknowledges each batch on stdout. It is killed with SIGKILL, either by the parent after a random
delay or by itself at a chosen moment (in the middle of a write, a roll, an fsync, its own
recovery). The parent then recovers the directory (in place, or on a copy so that the next child
has to recover the crashed files itself) and checks:

- every acknowledged batch is in the log, byte for byte as appended, at the acknowledged offsets,
  with the expected keys, values and timestamps;
- offsets run from 0 to the log end offset without a gap or a duplicate; the one batch in flight
  at the kill may or may not be there, but if it is, it is whole and right;
- every segment file is a run of valid batches to its last byte, its first batch at its base
  offset, each segment starting where the previous one ends;
- the offset and time indexes point at batch boundaries with the right offsets and timestamps,
  and reads by offset find the batch holding the offset;
- the leader epoch cache names only true epoch starts;
- the next child, recovering the same files, finds the same log end offset.

Batch contents derive from a seed and the batch number, so the parent recomputes them.
"""

import inspect
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from broker_lite.config.topic import LogConfig
from broker_lite.log import Log
from broker_lite.log.checkpoints import OffsetCheckpointFile
from broker_lite.log.files import (
    INDEX_SUFFIX,
    LEADER_EPOCH_CHECKPOINT,
    LOG_SUFFIX,
    RECOVERY_POINT_CHECKPOINT,
    TIME_INDEX_SUFFIX,
    parse_segment_file,
)
from broker_lite.records import BatchReader, CompressionType, build_batch

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")

REPO = Path(__file__).resolve().parents[3]
TOPIC = "crash"
READ_BYTES = 1 << 20
# A child runs its recovery, then appends for 10 s at most (60 s when the parent kills it, which
# it does within 0.3 s of the log being open); past this, it is stuck and is killed.
CHILD_LIMIT_S = 120

CODECS = (CompressionType.NONE, CompressionType.GZIP, CompressionType.LZ4, CompressionType.ZSTD)
TIMESTAMP_BASE = 1_700_000_000_000


# What batch ``number`` holds, derived from the seed and the number alone. The child runs the
# source of these two functions (see CHILD), so both sides build the same batches.
def batch_content(seed, number, max_value):
    """(records as (key, value) pairs, codec, timestamp) of batch ``number``."""
    rng = random.Random(f"{seed}/{number}")
    count = rng.randint(1, 50)
    codec = rng.choice(CODECS)
    # Now and then a large batch (up to about 1 MB), whose write a kill may tear.
    largest = min(max_value * 20, 20_000) if rng.random() < 0.03 else max_value
    records = []
    for i in range(count):
        size = rng.randint(0, largest)
        value = None if rng.random() < 0.02 else (
            rng.randbytes(size // 2) + bytes([number % 251]) * (size - size // 2))
        records.append((b"%d/%d" % (number, i), value))
    return records, codec, TIMESTAMP_BASE + number


def batch_bytes(seed, number, max_value):
    records, codec, timestamp = batch_content(seed, number, max_value)
    return build_batch(records, timestamp=timestamp, compression=codec)


CONTENT = f"""
import random

from broker_lite.records import CompressionType, build_batch

CODECS = tuple(CompressionType[name] for name in {[codec.name for codec in CODECS]!r})
TIMESTAMP_BASE = {TIMESTAMP_BASE}


{inspect.getsource(batch_content)}

{inspect.getsource(batch_bytes)}"""

CHILD = CONTENT + r'''
import os
import signal
import sys
import time
from dataclasses import replace
from pathlib import Path

from broker_lite.config.topic import LogConfig
from broker_lite.log import Log, LogSegment
from broker_lite.log.checkpoints import OffsetCheckpointFile
from broker_lite.log.leader_epochs import LeaderEpochCache

(root, seed, number, max_value, segment_bytes, index_interval, index_bytes, from_checkpoint,
 epoch, kill_point, kill_at, seconds) = sys.argv[1:]
root, number, max_value, epoch, kill_at = (
    Path(root), int(number), int(max_value), int(epoch), int(kill_at))
out = sys.stdout.buffer


def die():
    out.write(b"kill %s\n" % kill_point.encode())
    out.flush()
    os.kill(os.getpid(), signal.SIGKILL)


def kill_on_call(owner, name, *, after=False, before=None):
    """SIGKILL this process on call number ``kill_at`` of ``owner.name``: before the call
    (after running ``before``, if given) or right after it."""
    original = getattr(owner, name)
    calls = 0

    def hooked(*args, **kwargs):
        nonlocal calls
        calls += 1
        if calls == kill_at and not after:
            if before is not None:
                before(*args)
            die()
        result = original(*args, **kwargs)
        if calls == kill_at and after:
            die()
        return result

    setattr(owner, name, hooked)


def write_a_prefix(fd, chunks, position):
    data = b"".join(bytes(c) for c in chunks)
    cut = random.Random(f"{seed}/cut/{epoch}").randint(1, len(data) - 1)
    os.pwrite(fd, data[:cut], position)


hooks = {
    "none": lambda: None,
    "torn-write": lambda: kill_on_call(os, "pwritev", before=write_a_prefix),
    "fsync": lambda: kill_on_call(os, "fsync"),
    "rename": lambda: kill_on_call(os, "replace"),  # index rewrites, checkpoints
    "truncate": lambda: kill_on_call(os, "ftruncate", after=True),  # recovery cutting a tail
    "roll": lambda: kill_on_call(LogSegment, "on_become_inactive", after=True),
    "new-segment": lambda: kill_on_call(Log, "roll", after=True),
    # right after a batch reached its segment, before the append returns
    "epoch": lambda: kill_on_call(LogSegment, "append", after=True),
}
hooks[kill_point]()

checkpoint = OffsetCheckpointFile(root / "recovery-point-offset-checkpoint")
recovery_point = checkpoint.read().get(("TOPIC", 0), 0) if from_checkpoint == "1" else 0
config = replace(LogConfig(), flush_messages=1, segment_bytes=int(segment_bytes),
                 index_interval_bytes=int(index_interval), segment_index_bytes=int(index_bytes))
log = Log(root / "TOPIC-0", config, recovery_point=recovery_point, clean_shutdown=False)
out.write(b"open %d\n" % log.log_end_offset)
out.flush()
deadline = time.monotonic() + float(seconds)  # never outlive a parent that failed to kill
while time.monotonic() < deadline:
    appended = log.append(batch_bytes(seed, number, max_value), partition_leader_epoch=epoch)
    out.write(b"%d %d %d\n" % (number, appended.first_offset, appended.last_offset))
    out.flush()
    if from_checkpoint == "1" and number % 4 == 0:
        checkpoint.write({("TOPIC", 0): log.recovery_point})
    number += 1
'''.replace("TOPIC", TOPIC)
assert RECOVERY_POINT_CHECKPOINT in CHILD


def stored_form(original: bytes, first_offset: int, epoch: int) -> bytes:
    """The batch as the log stores it: baseOffset and partitionLeaderEpoch assigned."""
    return (struct.pack(">q", first_offset) + original[8:12] + struct.pack(">i", epoch)
            + original[16:])


class CrashRun:
    """The parent's side: start a child, have it killed, recover, check, keep the expected log."""

    def __init__(self, root: Path, *, seed: int, max_value: int, segment_bytes: int,
                 index_interval_bytes: int, segment_index_bytes: int):
        self.root = root
        self.directory = root / f"{TOPIC}-0"
        self.seed = seed
        self.rng = random.Random(seed)
        self.max_value = max_value
        self.config = replace(LogConfig(), flush_messages=1, segment_bytes=segment_bytes,
                              index_interval_bytes=index_interval_bytes,
                              segment_index_bytes=segment_index_bytes, file_delete_delay_ms=0)
        self.expected: list[bytes] = []  # every batch of the log, in stored form, in order
        self.end_offset = 0
        self.next_number = 0
        self.stats = {"rounds": 0, "acked": 0, "in_flight_kept": 0, "torn_tails": 0,
                      "killed_before_open": 0, "copies": 0}

    # -- one round ------------------------------------------------------------------------------
    def round(self, kill_point: str = "none", kill_at: int = 1, *,
              from_checkpoint: bool | None = None, on_copy: bool | None = None,
              check_from_checkpoint: bool | None = None) -> None:
        """One child, killed by the parent after a random delay (``kill_point`` "none") or by
        itself on call ``kill_at`` of the hooked function; then recovery and checks. The child
        recovers from the checkpointed recovery point or from 0 (``from_checkpoint``), and so
        does the parent (``check_from_checkpoint``); the parent recovers a copy of the files or
        the files themselves (``on_copy``). Unset, each is drawn at random."""
        if from_checkpoint is None:
            from_checkpoint = self.rng.random() < 0.5
        if on_copy is None:
            on_copy = self.rng.random() < 0.5
        if check_from_checkpoint is None:
            check_from_checkpoint = self.rng.random() < 0.5
        # One random kill in five runs its delay from the start of the child, so it may land
        # before or during the child's recovery; the others from the moment the log is open.
        early_kill = kill_point == "none" and self.stats["rounds"] % 5 == 2
        delay = self.rng.uniform(0.0, 0.3) if early_kill else self.rng.uniform(0.02, 0.3)
        epoch = self.stats["rounds"] + 1  # each restart is a new leader epoch
        stderr_path = self.root.parent / "child.stderr"
        with open(stderr_path, "wb") as stderr:
            child = subprocess.Popen(
                [sys.executable, "-c", CHILD, str(self.root), str(self.seed),
                 str(self.next_number), str(self.max_value), str(self.config.segment_bytes),
                 str(self.config.index_interval_bytes), str(self.config.segment_index_bytes),
                 "1" if from_checkpoint else "0", str(epoch), kill_point, str(kill_at),
                 "60" if kill_point == "none" else "10"],
                cwd=REPO, stdout=subprocess.PIPE, stderr=stderr,
            )
            stuck = threading.Event()
            watchdog = threading.Timer(CHILD_LIMIT_S, lambda: (stuck.set(), child.kill()))
            watchdog.daemon = True
            watchdog.start()
            try:
                output = b""
                if kill_point == "none":
                    if not early_kill:
                        output = child.stdout.readline()  # the log is open: appends start now
                    time.sleep(delay)
                    child.send_signal(signal.SIGKILL)
                output += child.stdout.read()
            finally:
                watchdog.cancel()
                child.kill()
                child.wait(30)
                child.stdout.close()
        assert not stuck.is_set(), (
            f"the child (kill point {kill_point} {kill_at}) still ran after {CHILD_LIMIT_S} s; "
            f"{output[-200:]!r}:\n{stderr_path.read_text()}")
        assert child.returncode == -signal.SIGKILL, (
            f"the child ended by itself ({child.returncode}), not killed at {kill_point} "
            f"{kill_at}; {output[-200:]!r}:\n{stderr_path.read_text()}")
        lines = output.split(b"\n")[:-1]  # a line without its newline was not acknowledged
        if kill_point != "none":
            assert lines and lines[-1] == b"kill " + kill_point.encode(), (
                f"the child was not killed at {kill_point}: {lines[-3:]}")
            lines.pop()
        acks = self.check_acknowledgements(lines)
        self.stats["rounds"] += 1
        self.stats["acked"] += len(acks)
        torn = last_segment_is_torn(self.directory)
        self.stats["torn_tails"] += torn
        if kill_point == "torn-write":
            assert torn

        in_flight = self.next_number + len(acks)
        if on_copy:
            # Check a copy: the next child must recover the crashed files itself.
            copy = self.root.parent / f"{self.root.name}-copy"
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(self.root, copy)
            self.stats["copies"] += 1
            self.recover_and_check(copy, acks, in_flight, epoch, check_from_checkpoint)
            shutil.rmtree(copy)
        else:
            self.recover_and_check(self.root, acks, in_flight, epoch, check_from_checkpoint)
        self.next_number = in_flight + 1

    def check_acknowledgements(self, lines: list[bytes]) -> list[tuple[int, int, int]]:
        if not lines:
            self.stats["killed_before_open"] += 1
            return []
        word, opened_at = lines[0].split()
        # The child's own recovery of the files found exactly the log the parent expects.
        assert word == b"open" and int(opened_at) == self.end_offset
        acks = [tuple(map(int, line.split())) for line in lines[1:]]
        offset = self.end_offset
        for i, (number, first, last) in enumerate(acks):
            records, _, _ = batch_content(self.seed, number, self.max_value)
            assert number == self.next_number + i
            assert (first, last) == (offset, offset + len(records) - 1)
            offset = last + 1
        return acks

    # -- recovery and checks --------------------------------------------------------------------
    def open(self, root: Path, *, from_checkpoint: bool, clean_shutdown: bool = False) -> Log:
        recovery_point = 0
        if from_checkpoint:
            checkpoint = OffsetCheckpointFile(root / RECOVERY_POINT_CHECKPOINT)
            recovery_point = checkpoint.read().get((TOPIC, 0), 0)
        return Log(root / f"{TOPIC}-0", self.config, recovery_point=recovery_point,
                   clean_shutdown=clean_shutdown)

    def recover_and_check(self, root: Path, acks, in_flight: int, epoch: int,
                          from_checkpoint: bool) -> None:
        new = []
        offset = self.end_offset
        for number, first, last in acks:
            original = batch_bytes(self.seed, number, self.max_value)
            new.append((number, stored_form(original, first, epoch)))
            offset = last + 1
        flight = (in_flight, stored_form(batch_bytes(self.seed, in_flight, self.max_value),
                                         offset, epoch))

        log = self.open(root, from_checkpoint=from_checkpoint)
        try:
            batches = read_log(log)
            known = len(self.expected) + len(new)
            assert len(batches) in (known, known + 1), (
                f"{len(batches)} batches after recovery; {known} acknowledged")
            assert batches[:len(self.expected)] == self.expected, "an earlier batch changed"
            if len(batches) > known:
                new.append(flight)
                self.stats["in_flight_kept"] += 1
            for i, (number, stored) in enumerate(new):
                assert batches[len(self.expected) + i] == stored, f"batch {number} differs"
                check_records(batches[len(self.expected) + i], *batch_content(
                    self.seed, number, self.max_value))
            self.expected = batches
            self.end_offset = log.log_end_offset
            check_leader_epochs(log.leader_epochs.entries, batches, complete=False)
            # Reads by offset: each new batch from its first and from an inner offset, and a
            # sample of the older ones.
            ranges = offset_ranges(batches)
            sample = list(range(len(batches) - len(new), len(batches)))
            sample += self.rng.sample(range(len(batches)), min(100, len(batches)))
            check_reads(log, [ranges[i] for i in sample], self.rng)
        finally:
            log.close()
        check_files(root / f"{TOPIC}-0", self.expected)

    def final_check(self) -> None:
        """Recover everything from offset 0, then reopen cleanly: the same log both times."""
        for clean in (False, True):
            log = self.open(self.root, from_checkpoint=False, clean_shutdown=clean)
            try:
                assert read_log(log) == self.expected
                assert log.log_end_offset == self.end_offset
                check_reads(log, offset_ranges(self.expected), self.rng)
            finally:
                log.close()
            check_files(self.directory, self.expected)


# -- checks -------------------------------------------------------------------------------------
def segment_bases(directory: Path) -> list[int]:
    return sorted(p[0] for name in os.listdir(directory)
                  if (p := parse_segment_file(name)) and p[1] == LOG_SUFFIX and not p[2])


def last_segment_is_torn(directory: Path) -> bool:
    """Whether the active segment ends in a partial batch (before any recovery)."""
    if not directory.exists() or not (bases := segment_bases(directory)):
        return False
    reader = BatchReader((directory / f"{bases[-1]:020d}{LOG_SUFFIX}").read_bytes())
    for _ in reader:
        pass
    return reader.incomplete


def read_log(log: Log) -> list[bytes]:
    """Every batch, read through the log by offset, checked valid and contiguous."""
    batches = []
    offset = log.log_start_offset
    assert offset == 0
    end = log.log_end_offset
    while offset < end:
        region = log.read(offset, READ_BYTES)
        assert region is not None, f"nothing read at {offset} below the log end {end}"
        count = 0
        for batch in BatchReader(region.read(), validate=True):
            assert batch.base_offset == offset, f"expected a batch at {offset}, got {batch}"
            batches.append(bytes(batch.raw()))
            offset = batch.last_offset + 1
            count += 1
        assert count, f"the read at {offset} returned no whole batch"
    assert offset == end
    assert log.read(end, READ_BYTES) is None
    return batches


def offset_ranges(batches: list[bytes]) -> list[tuple[int, int]]:
    """(first, last) offset of each stored batch."""
    return [(struct.unpack_from(">q", b)[0],
             struct.unpack_from(">q", b)[0] + struct.unpack_from(">i", b, 23)[0])
            for b in batches]


def epoch_starts(batches: list[bytes]) -> list[tuple[int, int]]:
    """(epoch, first offset) wherever the batches' partitionLeaderEpoch goes up."""
    starts = []
    for stored in batches:
        base, _, epoch = struct.unpack_from(">qii", stored)
        if not starts or epoch > starts[-1][0]:
            starts.append((epoch, base))
    return starts


def check_leader_epochs(entries, batches: list[bytes], *, complete: bool) -> None:
    """Every entry of the cache is a true epoch start; with ``complete``, every start is in it
    (as after Kafka's recovery, which re-reads the epochs of the batches it checks)."""
    starts = epoch_starts(batches)
    if complete:
        assert entries == starts
    else:
        assert set(entries) <= set(starts) and entries == sorted(entries), (entries, starts)


def check_records(stored: bytes, records, codec, timestamp) -> None:
    (batch,) = list(BatchReader(stored, validate=True))
    assert batch.compression is codec
    got = [(r.offset, r.key, r.value, r.timestamp, r.headers) for r in batch]
    assert got == [(batch.base_offset + i, key, value, timestamp, ())
                   for i, (key, value) in enumerate(records)]


def check_reads(log: Log, ranges: list[tuple[int, int]], rng: random.Random) -> None:
    """A read from a batch's first offset, or from one inside it, starts with that batch."""
    for first, last in ranges:
        for offset in {first, rng.randint(first, last)}:
            region = log.read(offset, 1)  # one batch: the first is always whole
            batch = next(iter(BatchReader(region.read(), validate=True)))
            assert (batch.base_offset, batch.last_offset) == (first, last), (
                f"reading offset {offset} returned {batch}")


def check_files(directory: Path, expected: list[bytes]) -> None:
    """The files on disk: valid batches to the end of every segment, chained segments, indexes
    pointing at the right batches, and nothing else left in the directory."""
    bases = segment_bases(directory)
    names = sorted(os.listdir(directory))
    assert names == sorted([LEADER_EPOCH_CHECKPOINT] * bool(expected) + [
        f"{base:020d}{suffix}" for base in bases
        for suffix in (LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX)]), names
    on_disk = []
    next_offset = 0
    for i, base in enumerate(bases):
        data = (directory / f"{base:020d}{LOG_SUFFIX}").read_bytes()
        reader = BatchReader(data, validate=True)
        batches = list(reader)
        assert not reader.incomplete and reader.position == len(data), f"segment {base}"
        assert base == next_offset, f"segment {base} should start at {next_offset}"
        assert batches or i == len(bases) - 1, f"empty segment {base} before the last"
        by_position = {}
        for batch in batches:
            assert batch.base_offset == next_offset
            next_offset = batch.last_offset + 1
            by_position[batch.position] = batch
            on_disk.append(bytes(batch.raw()))

        index = np.frombuffer((directory / f"{base:020d}{INDEX_SUFFIX}").read_bytes(),
                              dtype=[("offset", ">i4"), ("position", ">i4")])
        assert (np.diff(index["offset"].astype(np.int64)) > 0).all()
        for relative, position in index.tolist():
            assert position in by_position, f"index of {base} points inside a batch"
            assert by_position[position].last_offset == base + relative

        last_offsets = {b.last_offset: b.max_timestamp for b in batches}
        times = np.frombuffer((directory / f"{base:020d}{TIME_INDEX_SUFFIX}").read_bytes(),
                              dtype=[("timestamp", ">i8"), ("offset", ">i4")])
        assert (np.diff(times["timestamp"].astype(np.int64)) > 0).all()
        assert (np.diff(times["offset"].astype(np.int64)) > 0).all()
        for timestamp, relative in times.tolist():
            assert last_offsets.get(base + relative) == timestamp, f"time index of {base}"
    assert on_disk == expected


# -- the tests ------------------------------------------------------------------------------------
def new_run(tmp_path: Path, **settings) -> CrashRun:
    root = tmp_path / "logdir"
    root.mkdir()
    return CrashRun(root, **settings)


def finish(run: CrashRun) -> dict:
    run.final_check()
    stats = dict(run.stats, batches=len(run.expected), offsets=run.end_offset,
                 segments=len(segment_bases(run.directory)))
    print(stats)
    return stats


@pytest.mark.slow
def test_acknowledged_batches_survive_repeated_sigkill(tmp_path):
    run = new_run(tmp_path, seed=20240611, max_value=400, segment_bytes=64 << 10,
                  index_interval_bytes=256, segment_index_bytes=10 << 20)
    # As below: at least 25 rounds, more on a machine that appends less before each kill.
    for _ in range(100):
        run.round()
        if run.stats["rounds"] >= 25 and run.stats["acked"] >= 125 and \
                len(segment_bases(run.directory)) > 10:
            break
    stats = finish(run)
    assert stats["acked"] >= 125, "most kills should land after some appends"
    assert stats["segments"] > 10


@pytest.mark.slow
def test_acknowledged_batches_survive_sigkill_while_rolling_constantly(tmp_path):
    # Segments of 4 KiB and indexes of 24 bytes (3 offset entries, 2 time entries): most
    # appends roll, by size or by a full index, so kills land in the middle of rolls.
    run = new_run(tmp_path, seed=7, max_value=120, segment_bytes=4 << 10,
                  index_interval_bytes=64, segment_index_bytes=24)
    # A random kill lands after as many appends as the machine managed in its delay: a slow
    # machine needs more rounds to roll as often, so rounds go on until the log has rolled
    # more than 100 times (at least 10 rounds, at most 40).
    for _ in range(40):
        run.round()
        if run.stats["rounds"] >= 10 and len(segment_bases(run.directory)) > 100:
            break
    stats = finish(run)
    assert stats["acked"] >= 50 and stats["segments"] > 100


@pytest.mark.slow
def test_acknowledged_batches_survive_sigkill_at_chosen_moments(tmp_path):
    """Kills placed where random ones rarely land: inside a write (a torn batch), inside the
    next child's recovery of it, in the middle of index rewrites, rolls and fsyncs."""
    run = new_run(tmp_path, seed=3, max_value=300, segment_bytes=16 << 10,
                  index_interval_bytes=128, segment_index_bytes=10 << 20)
    run.round(on_copy=False)  # some data first: a few segments, their indexes on disk
    run.round(on_copy=False)
    rng = random.Random(3)
    for _ in range(2):
        run.round("torn-write", rng.randint(1, 40), on_copy=True)  # the child finds it torn
        # Killed just after cutting the torn tail, the indexes it reset not yet rebuilt. The
        # parent recovers the files in place and wholly, so that the next child has indexes to
        # rebuild (from the checkpoint, segments below it would keep their empty indexes).
        run.round("truncate", 1, on_copy=False, check_from_checkpoint=False)
        run.round("rename", rng.randint(1, 4), from_checkpoint=False)  # inside index rebuilds
        run.round("roll", rng.randint(1, 3))
        run.round("new-segment", rng.randint(1, 3))
        run.round("fsync", rng.randint(1, 60))
        run.round("epoch", 1)
    stats = finish(run)
    assert stats["torn_tails"] >= 2


def test_a_crash_right_after_a_write_does_not_lose_its_epoch(tmp_path):
    run = new_run(tmp_path, seed=5, max_value=100, segment_bytes=1 << 20,
                  index_interval_bytes=4096, segment_index_bytes=10 << 20)
    run.round(from_checkpoint=False, on_copy=False)  # epoch 1
    run.round("epoch", 1, on_copy=False)  # epoch 2: its first batch is written, then the kill
    assert epoch_starts(run.expected)[-1][0] == 2  # that batch survived
    log = run.open(run.root, from_checkpoint=False)
    try:
        check_leader_epochs(log.leader_epochs.entries, run.expected, complete=True)
    finally:
        log.close()


RESTART_AND_CRASH = r'''
import os
import signal
import sys
from dataclasses import replace
from pathlib import Path

from broker_lite.config.topic import LogConfig
from broker_lite.log import Log
from broker_lite.log.checkpoints import OffsetCheckpointFile
from broker_lite.records import build_batch

root = Path(sys.argv[1])
config = replace(LogConfig(), segment_bytes=4096, index_interval_bytes=100)
# A restart after a crash, with no recovery point checkpointed yet: every segment is recovered.
log = Log(root / "crash-0", config, recovery_point=0, clean_shutdown=False)
log.append(build_batch([(b"k", b"v")], timestamp=99))
log.flush()
OffsetCheckpointFile(root / "recovery-point-offset-checkpoint").write(
    {("crash", 0): log.recovery_point})
os.kill(os.getpid(), signal.SIGKILL)
'''


def test_indexes_rebuilt_by_recovery_survive_a_crash_after_the_next_checkpoint(tmp_path):
    root = tmp_path / "logdir"
    config = replace(LogConfig(), segment_bytes=4096, index_interval_bytes=100)
    log = Log(root / f"{TOPIC}-0", config)
    for i in range(40):
        log.append(build_batch([(b"k%d" % i, b"v" * 300)], timestamp=i))
    entries = {s.base_offset: len(s.offset_index) for s in log.segments[:-1]}
    log.close()
    assert len(entries) >= 3 and all(entries.values())

    done = subprocess.run([sys.executable, "-c", RESTART_AND_CRASH, str(root)], cwd=REPO,
                          capture_output=True, timeout=60, check=False)
    assert done.returncode == -signal.SIGKILL, done.stderr.decode()
    recovery_point = OffsetCheckpointFile(root / RECOVERY_POINT_CHECKPOINT).read()[(TOPIC, 0)]
    reopened = Log(root / f"{TOPIC}-0", config, recovery_point=recovery_point)
    try:
        assert {s.base_offset: len(s.offset_index) for s in reopened.segments
                if s.base_offset in entries} == entries
    finally:
        reopened.close()
