"""How much memory one analysing process may keep between files.

    budget = MemoryBudget.from_env()
    if budget.exceeded(): ...    # a worker retires; this process calls project.release()

A check keeps what it learnt of the project (parsed IR, summaries, class tables) for the
files after it: on a tree whose files share code, that is most of its speed. Kept to the
end, it grows with the tree (3.3 GB on transformers). So once a process' resident memory
passes the budget after a file, it lets go of all of it, and what the next files ask for
is derived again from the same files: the findings are the same.

A worker process lets go by ending: the parent starts a fresh one (`analyzer.workers`),
and everything goes back to the system. A release in place (`Project.release`, for the
few files a run analyses without workers) gives back much less: the allocator keeps
freed memory resident while a live object or two pins each 1 MB arena (550 MB resident
for 40 MB live, measured with tracemalloc on transformers), so `released` moves the next
threshold above what stayed.

The budget is per process (one per job); ``UNTRACE_MEMORY_MB`` sets it. A process' peak
is the budget plus what its last file added (the first file of a fresh worker derives
the base modules it imports).
"""

from __future__ import annotations

import os

DEFAULT_MB = 768

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def resident_bytes() -> int | None:
    """This process' resident memory now, or None where the system does not say
    (Linux's /proc only: ``getrusage`` gives the peak, which never comes down)."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return None


def give_back() -> None:
    """Return the heap's free pages to the system after a release: glibc keeps freed
    memory for reuse, and without this the resident figure a budget reads stays at
    its peak (a third of what a release frees, measured on transformers files)."""
    try:
        import ctypes

        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass  # not glibc: the memory is reused by the files after, which is what matters


class MemoryBudget:
    def __init__(self, megabytes: float):
        self.limit = int(megabytes * 2**20)
        self._threshold = self.limit
        self.releases = 0

    @classmethod
    def from_env(cls) -> MemoryBudget:
        try:
            megabytes = float(os.environ.get("UNTRACE_MEMORY_MB", DEFAULT_MB))
        except ValueError:
            megabytes = DEFAULT_MB
        return cls(megabytes if megabytes > 0 else DEFAULT_MB)

    def exceeded(self) -> bool:
        resident = resident_bytes()
        return resident is not None and resident > self._threshold

    def released(self) -> None:
        """After a release: what the process still holds (the interpreter, the module
        index, and free space the allocator keeps because a live object or two pins
        each 1 MB arena: 550 MB resident for 40 MB live, measured with tracemalloc on
        transformers) is the new floor, and the next release comes when the project has
        grown by half the budget above it. A next release at the same limit instead
        came after every few files, as the floor stays within a few MB of it: a cold
        check of transformers took over twice as long."""
        self.releases += 1
        resident = resident_bytes() or 0
        self._threshold = max(self.limit, resident + self.limit // 2)
