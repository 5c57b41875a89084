"""Fill of a symmetric ordering: elimination tree, postorder and column counts of the
Cholesky factor L (Gilbert, Ng and Peyton's skeleton / least-common-ancestor method, near O(m))."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import GraphError
from ..jit import njit


@dataclass
class FillResult:
    """nnz of L (diagonal included), the factorization's flop count sum_j c_j^2 (c_j: nonzeros of
    column j of L, diagonal included), the column counts in the new order, the elimination tree
    (parent per new index, -1 at roots) and its height."""

    nnz: int
    flops: int
    colcounts: np.ndarray
    parent: np.ndarray
    height: int


@njit(cache=True)
def etree(indptr, indices, perm, iperm):
    """Parent of each column of L in the new order (-1: a root): Liu's algorithm with path
    compression over the rows of the permuted pattern."""
    n = perm.shape[0]
    parent = np.full(n, -1, dtype=np.int64)
    ancestor = np.full(n, -1, dtype=np.int64)
    for k in range(n):
        v = perm[k]
        for e in range(indptr[v], indptr[v + 1]):
            i = iperm[indices[e]]
            # climb from i to the root of its current subtree, pointing the path at k
            while i != -1 and i < k:
                nxt = ancestor[i]
                ancestor[i] = k
                if nxt == -1:
                    parent[i] = k
                i = nxt
    return parent


@njit(cache=True, internal=True)
def postorder(parent):
    """A postorder of the forest ``parent`` (children visited in increasing order)."""
    n = parent.shape[0]
    head = np.full(n, -1, dtype=np.int64)
    nxt = np.full(n, -1, dtype=np.int64)
    for j in range(n - 1, -1, -1):
        p = parent[j]
        if p != -1:
            nxt[j] = head[p]
            head[p] = j
    post = np.empty(n, dtype=np.int64)
    stack = np.empty(n, dtype=np.int64)
    k = 0
    for root in range(n):
        if parent[root] != -1:
            continue
        top = 0
        stack[0] = root
        while top >= 0:
            j = stack[top]
            c = head[j]
            if c == -1:
                top -= 1
                post[k] = j
                k += 1
            else:
                head[j] = nxt[c]   # consume the child
                top += 1
                stack[top] = c
    return post


@njit(cache=True)
def column_counts(indptr, indices, perm, iperm, parent):
    """Nonzeros of each column of L (diagonal included), new order.

    Column j of L holds row i > j iff j lies in the row subtree of i (the subtree of the
    elimination tree spanned by the columns k < i with a_ik != 0 and their paths up to i).
    Counting over the leaves of the row subtrees: each leaf j of the subtree of row i adds
    one to j, and the least common ancestor of j and the previous leaf of the same subtree
    (found with a union-find over the postorder) takes one away; summing these over subtrees
    gives the column counts.
    """
    n = perm.shape[0]
    post = postorder(parent)
    first = np.full(n, -1, dtype=np.int64)     # first descendant of each node in the postorder
    delta = np.zeros(n, dtype=np.int64)
    for k in range(n):
        j = post[k]
        delta[j] = 1 if first[j] == -1 else 0  # a leaf of the tree starts with its diagonal
        while j != -1 and first[j] == -1:
            first[j] = k
            j = parent[j]
    maxfirst = np.full(n, -1, dtype=np.int64)
    prevleaf = np.full(n, -1, dtype=np.int64)
    ancestor = np.arange(n)
    for k in range(n):
        j = post[k]
        if parent[j] != -1:
            delta[parent[j]] -= 1
        v = perm[j]
        for e in range(indptr[v], indptr[v + 1]):
            i = iperm[indices[e]]
            if i <= j or first[j] <= maxfirst[i]:
                continue                        # j is not a new leaf of row i's subtree
            maxfirst[i] = first[j]
            jprev = prevleaf[i]
            prevleaf[i] = j
            delta[j] += 1
            if jprev != -1:
                q = jprev                       # least common ancestor of jprev and j
                while q != ancestor[q]:
                    q = ancestor[q]
                s = jprev
                while s != q:                   # path compression
                    nx = ancestor[s]
                    ancestor[s] = q
                    s = nx
                delta[q] -= 1
        if parent[j] != -1:
            ancestor[j] = parent[j]
    counts = delta
    for k in range(n):
        j = post[k]
        if parent[j] != -1:
            counts[parent[j]] += counts[j]
    return counts


@njit(cache=True, internal=True)
def tree_height(parent):
    n = parent.shape[0]
    depth = np.zeros(n, dtype=np.int64)
    best = 0
    for j in range(n - 1, -1, -1):   # parents have larger indices
        if parent[j] != -1:
            depth[j] = depth[parent[j]] + 1
        best = max(best, depth[j] + 1)
    return best


def check_permutation(perm, n, name="perm"):
    """``perm`` as an int64 array if it is a permutation of 0..n-1, else a GraphError."""
    p = np.asarray(perm)
    if p.ndim != 1 or p.shape[0] != n or (p.size and p.dtype.kind not in "iu"):
        raise GraphError(f"{name} must be a 1-d integer array of length {n}, got shape {p.shape} "
                         f"and dtype {p.dtype}", kind="invalid")
    p = p.astype(np.int64)
    if n and (p.min() < 0 or p.max() >= n or np.bincount(p, minlength=n).max() != 1):
        raise GraphError(f"{name} is not a permutation of 0..{n - 1}", kind="invalid")
    return p


def fill(graph, perm):
    """Fill of ordering ``perm`` (perm[i] = the vertex eliminated i-th, as METIS and pymetis
    define it): nnz(L) and flops of the Cholesky factor of the graph's pattern (with a
    diagonal) permuted as A[perm][:, perm]. Returns a FillResult. Edge and vertex weights
    play no part."""
    from ..io import as_graph
    g = as_graph(graph).to("cpu")
    p = check_permutation(perm, g.n)
    iperm = np.empty(g.n, dtype=np.int64)
    iperm[p] = np.arange(g.n)
    indptr = np.ascontiguousarray(g.indptr, dtype=np.int64)
    indices = np.ascontiguousarray(g.indices, dtype=np.int64)
    parent = etree(indptr, indices, p, iperm)
    counts = column_counts(indptr, indices, p, iperm, parent)
    c = counts.astype(np.int64)
    return FillResult(nnz=int(c.sum()), flops=int((c * c).sum()), colcounts=counts, parent=parent,
                      height=int(tree_height(parent)) if g.n else 0)
