"""The weighted searches' queue, compiled: a bucket queue, lowest priority first and first
come, first served among equals.

An entry is two int64s, compared in order: ``first``, the priority (the search loop's
``_priority``: the weighted cost, then the higher g first), and ``second``, the order it
was queued in (a running count in the high bits) with the state's row in the low bits.
Most children share their priority with many states already queued (a push one nearer a
goal keeps the weighted cost within a few values), and a child nearer the goals than its
parent comes before all of them: in a heap of entries every such push climbs the whole
heap, a cache miss a level. Here each priority has a *bucket*, its entries in the order
they came (so in ``second``'s order), and only the buckets that hold entries sit in a
small 4-ary heap: a push appends to its bucket and a pop takes the first bucket's first
entry, in the order the heap of entries gave.

The arrays (``queue`` in :func:`grid_envs.sokoban.compiled.loop.run`):

* ``entries`` (n, 2): an entry's ``second``, and the next entry of its bucket, or of the
  chain of free entries (numbers are kept plus one, so 0 is none and new rows are empty);
* ``buckets`` (m, 4): a bucket's priority, its first and last entry, whether it is in
  the heap; a bucket is kept when it empties, for its priority to come back;
* ``order``: the heap of the non-empty buckets, by priority;
* ``index``: an open-addressing table from priority to bucket (plus one), at most half
  full;
* ``kept``: the counts, at :data:`N_ENTRIES`, :data:`FREE`, :data:`N_BUCKETS`,
  :data:`N_ORDER`.
"""

from __future__ import annotations

import numpy as np

from grid_envs.core.jit import compiled, uncounted

N_ENTRIES, FREE, N_BUCKETS, N_ORDER, N_KEPT = range(5)
_MIX = np.int64(-7046029254386353131)  # 0x9E3779B97F4A7C15, Fibonacci hashing


@uncounted
def _slot(first, mask):
    return ((first * _MIX) >> np.int64(24)) & mask


@uncounted
def _bucket(buckets, index, kept, first):
    """The bucket of priority ``first``, made where there is none."""
    mask = index.shape[0] - 1
    slot = _slot(first, mask)
    while index[slot] != 0:
        b = index[slot] - 1
        if buckets[b, 0] == first:
            return b
        slot = (slot + 1) & mask
    b = kept[N_BUCKETS]
    kept[N_BUCKETS] += 1
    buckets[b, 0] = first
    buckets[b, 1] = 0
    buckets[b, 2] = 0
    buckets[b, 3] = 0
    index[slot] = b + 1
    return b


@uncounted
def _order_push(order, kept, buckets, b):
    n = kept[N_ORDER]
    key = buckets[b, 0]
    while n > 0:
        up = (n - 1) >> 2
        if buckets[order[up], 0] < key:
            break
        order[n] = order[up]
        n = up
    order[n] = b
    kept[N_ORDER] += 1


@uncounted
def _order_pop(order, kept, buckets):
    """Take the first bucket off the heap."""
    kept[N_ORDER] -= 1
    n = kept[N_ORDER]
    last = order[n]
    key = buckets[last, 0]
    i = 0
    while True:
        c = 4 * i + 1
        if c >= n:
            break
        best = c
        for k in range(c + 1, min(c + 4, n)):
            if buckets[order[k], 0] < buckets[order[best], 0]:
                best = k
        if key < buckets[order[best], 0]:
            break
        order[i] = order[best]
        i = best
    order[i] = last


@uncounted
def queue_push(entries, buckets, order, index, kept, first, second):
    """Queue an entry: last of its priority's bucket."""
    b = _bucket(buckets, index, kept, first)
    if kept[FREE] != 0:
        e = kept[FREE] - 1
        kept[FREE] = entries[e, 1]
    else:
        e = kept[N_ENTRIES]
        kept[N_ENTRIES] += 1
    entries[e, 0] = second
    entries[e, 1] = 0
    if buckets[b, 2] != 0:
        entries[buckets[b, 2] - 1, 1] = e + 1
    else:
        buckets[b, 1] = e + 1
    buckets[b, 2] = e + 1
    if buckets[b, 3] == 0:
        buckets[b, 3] = 1
        _order_push(order, kept, buckets, b)


@uncounted
def queue_pop(entries, buckets, order, kept):
    """Take the first entry off the queue: its ``(first, second)``."""
    b = order[0]
    e = buckets[b, 1] - 1
    after = entries[e, 1]
    buckets[b, 1] = after
    if after == 0:  # the bucket is empty: off the heap
        buckets[b, 2] = 0
        buckets[b, 3] = 0
        _order_pop(order, kept, buckets)
    entries[e, 1] = kept[FREE]
    kept[FREE] = e + 1
    return buckets[b, 0], entries[e, 0]


@compiled
def reindex(index, buckets, n):
    """Put buckets ``0..n-1`` into an empty ``index`` (made anew when the arrays grow)."""
    mask = index.shape[0] - 1
    for b in range(n):
        slot = _slot(buckets[b, 0], mask)
        while index[slot] != 0:
            slot = (slot + 1) & mask
        index[slot] = b + 1
