"""The partition file's bytes: the numpy digit writer against Python's own formatting."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from matchpart.io.partfile import partition_bytes


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=10**12), max_size=60))
def test_partition_bytes_are_one_decimal_id_per_line(ids):
    p = np.array(ids, dtype=np.int64)
    assert partition_bytes(p) == "".join(f"{v}\n" for v in ids).encode()


def test_partition_bytes_edge_values():
    ids = [0, 9, 10, 99, 100, 101, 999, 1000, 7, 31]
    assert partition_bytes(np.array(ids)) == "".join(f"{v}\n" for v in ids).encode()
    assert partition_bytes(np.array([], dtype=np.int64)) == b""
    assert partition_bytes(np.array([-3, 4])) == b"-3\n4\n"
