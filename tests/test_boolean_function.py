"""BooleanFunction, all_bit_strings and input validation."""

from __future__ import annotations

import numpy as np
import pytest

from verify.boolean import MAX_EXHAUSTIVE_N, BooleanFunction, all_bit_strings, bits_to_index
from verify.errors import ValidationError


def test_all_bit_strings_order_matches_model_spec():
    bits = all_bit_strings(3)
    assert bits.shape == (8, 3) and bits.dtype == np.uint8
    for i in range(8):
        assert sum(int(bits[i, n]) << n for n in range(3)) == i  # x_1 = column 0 = LSB
    assert bits[1].tolist() == [1, 0, 0]
    np.testing.assert_array_equal(bits_to_index(bits), np.arange(8))


def test_all_bit_strings_slices_agree_with_whole():
    whole = all_bit_strings(10)
    np.testing.assert_array_equal(all_bit_strings(10, 100, 300), whole[100:300])


@pytest.mark.parametrize("n", [0, -1, 25, 2.0, True])
def test_all_bit_strings_rejects(n):
    with pytest.raises(ValidationError, match="N"):
        all_bit_strings(n)


def test_from_table_and_from_callable_agree():
    table = np.array([0, 1, 1, 0, 1, 0, 0, 1], dtype=np.int64)
    f = BooleanFunction(table)
    g = BooleanFunction.from_callable(3, lambda b: b.sum(axis=1) % 2, chunk=3)
    assert f == g and f.n == 3 and f.table.dtype == np.uint8
    assert BooleanFunction(table.astype(bool)) == f
    assert f(np.array([1, 1, 1])) == 1
    np.testing.assert_array_equal(f(all_bit_strings(3)), table)


def test_table_is_a_read_only_copy():
    table = np.zeros(4, dtype=np.uint8)
    f = BooleanFunction(table)
    table[0] = 1
    assert f.table[0] == 0
    with pytest.raises(ValueError):
        f.table[0] = 1


@pytest.mark.parametrize(
    ("table", "match"),
    [
        (np.zeros(3), "power of two"),
        (np.zeros(1), "power of two"),
        (np.array([0, 2, 1, 0]), r"\{0, 1\}"),
        (np.array([0, 0.5, 1, 0]), r"\{0, 1\}"),
        (np.array([0, -1, 1, 0]), r"\{0, 1\}"),
        (np.zeros((2, 2)), "one-dimensional"),
        (np.array(["a", "b"]), "bool or 0/1"),
    ],
)
def test_bad_tables_are_rejected_not_clipped(table, match):
    with pytest.raises(ValidationError, match=match) as info:
        BooleanFunction(table)
    assert info.value.argument == "table"


def test_from_callable_rejects_bad_outputs():
    with pytest.raises(ValidationError, match="fn"):
        BooleanFunction.from_callable(3, lambda b: b.sum(axis=1))  # values up to 3
    with pytest.raises(ValidationError, match="fn"):
        BooleanFunction.from_callable(3, lambda b: b[:2, 0])  # wrong length
    with pytest.raises(ValidationError, match="n"):
        BooleanFunction.from_callable(MAX_EXHAUSTIVE_N + 1, lambda b: b[:, 0])


def test_evaluation_rejects_wrong_width():
    f = BooleanFunction(np.array([0, 1, 1, 0]))
    with pytest.raises(ValidationError, match="bits"):
        f(np.zeros((2, 3), dtype=np.uint8))


def test_pickle_round_trip_keeps_table_read_only():
    import pickle

    from verify.boolean import make_family

    f = make_family("majority", 5)
    g = pickle.loads(pickle.dumps(f))
    assert g == f and g.name == f.name and g.params == f.params
    assert not g.table.flags.writeable
