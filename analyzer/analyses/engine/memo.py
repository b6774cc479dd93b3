"""Results the analysis keeps per process, each with what computing it read.

    memoized(analyzer, memo, key, compute)
    @per_function_cache          # a pure function of one IR function, kept per project

A result computed while one file was checked is reused for the files checked after it;
each such file depends on what the result was computed from (files, and the questions
asked of the module index) exactly as if it had computed the result itself, so that its
cache entry goes stale when any of those changes. A memo that keeps only the result
gives the later files too few dependencies: the cache then answers what a run without
it would not.
"""

from __future__ import annotations

from functools import lru_cache

_FUNCTION_CACHES: list = []


def memoized(analyzer, memo: dict, key, compute):
    """``compute()`` once per ``key``, with what it read recorded for every reader; a key
    reached again while its own answer is computed gets None."""
    if key in memo:
        found, reads = memo[key]
        analyzer._reads[-1] |= reads
        return found
    memo[key] = (None, frozenset())
    analyzer._begin_reads()
    try:
        found = compute()
    finally:
        reads = analyzer._end_reads()
    memo[key] = (found, reads)
    return found


def per_function_cache(compute):
    """``compute(fn)`` once per IR function, for up to 4096 of them; forgotten with the
    project's IR (`forget_function_caches`), which the entries would otherwise keep."""
    cached = lru_cache(maxsize=4096)(compute)
    _FUNCTION_CACHES.append(cached)
    return cached


def forget_function_caches() -> None:
    for cached in _FUNCTION_CACHES:
        cached.cache_clear()
