"""Shards of a corpus run, so that lit runs one long check as several tests.

A script that checks every file of a corpus (the library, the bug corpus and
its twins) takes `--shard I/N` and keeps the inputs whose name falls into
shard I of N: CRC-32 of the name modulo N, so that the split is the same on
every machine, does not move when a file is added elsewhere, and keeps a bug
and its fixed twin (same name) in one shard. Together the N shard tests check
exactly what the unsharded run checks; each prints `shard I of N: K of T`
first, and the first shard test counts the shard tests (e.g.
barriers/forced-fallback.test, budget/undecided-never-decides.test).
"""
import zlib


def take(argv):
    """Removes `--shard I/N` from argv; returns (I, N), or None without it."""
    if "--shard" not in argv:
        return None
    at = argv.index("--shard")
    text = argv[at + 1]
    del argv[at : at + 2]
    i, n = (int(part) for part in text.split("/"))
    if not 1 <= i <= n:
        raise SystemExit(f"--shard {text}: I must be between 1 and N")
    return i, n


def holds(shard, name):
    """Whether the input called `name` belongs to `shard` (always without one)."""
    return shard is None or zlib.crc32(name.encode()) % shard[1] == shard[0] - 1


def header(shard, kept, total):
    """The first line a sharded run prints."""
    return f"shard {shard[0]} of {shard[1]}: {kept} of {total} inputs"
