"""``prefetch(array, index)`` for compiled kernels: ask the CPU to start loading array[index]
into the caches now, because the kernel will touch it a few iterations later.

The coarsening kernels walk a list (edges, fine entries) and touch a per-vertex array at an
index read from that list: on large graphs each touch is a cache miss, and the out-of-order
window holds too few iterations to overlap many of them. Prefetching the element of the
iteration PREFETCH_DISTANCE ahead keeps that many misses in flight: delaunay 2^20, local
max's first keying pass (a random 16-byte record update per edge): 95 ms -> 37 ms.

A hint only (llvm.prefetch): no effect on results, never a fault, even for an index that
is out of bounds (callers still keep it in bounds).
"""
from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

# Iterations ahead: 16-32 were best on the kernels above (8 left misses exposed, 64 let
# prefetched lines be evicted before use on a loaded machine).
PREFETCH_DISTANCE = 16


@intrinsic
def prefetch(typingctx, array, index):
    """Prefetch array[index] (1-d array, integer index) for reading and writing."""
    if not isinstance(array, types.Array) or not isinstance(index, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        array_type = signature.args[0]
        ary = context.make_array(array_type)(context, builder, args[0])
        index_value = context.cast(builder, args[1], signature.args[1], types.intp)
        ptr = cgutils.get_item_pointer(context, builder, array_type, ary, [index_value],
                                       wraparound=False)
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0i8")
        # rw = 1 (the kernels update what they fetch), locality = 3 (keep in all caches),
        # cache type = 1 (data)
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(1), i32(3), i32(1)])
        return context.get_dummy_value()

    return types.void(array, index), codegen
