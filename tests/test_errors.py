"""ValidationError crosses process boundaries intact: a worker that raises it (a figure that
cannot be drawn, a bad argument) hands the parent the same error, and the pool stays usable.
The default exception pickling calls ``__init__(message)``, which fails for its signature and
broke the process pool ("a child process terminated abruptly")."""

from __future__ import annotations

import pickle
import threading

import pytest

from verify import errors
from verify.errors import ValidationError


class _Sub(ValidationError):
    pass


@pytest.mark.parametrize(
    "err",
    [
        ValidationError("N", "an integer >= 1", 0),
        ValidationError("x", "a thing"),  # no got
        ValidationError("table", "length a power of two", 3, "use a truth table"),
        _Sub("y", "finite values", float("nan")),
    ],
)
def test_validation_error_pickles_with_its_fields_and_message(err: ValidationError) -> None:
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is type(err) and str(back) == str(err) and back.args == err.args
    assert (back.argument, back.expected, back.hint) == (err.argument, err.expected, err.hint)
    if err.got is errors._MISSING:
        assert back.got is errors._MISSING  # "nothing given" stays the sentinel
    else:
        assert repr(back.got) == repr(err.got)


def test_a_got_that_does_not_pickle_travels_as_its_repr() -> None:
    lock = threading.Lock()
    back = pickle.loads(pickle.dumps(ValidationError("lock", "a number", lock)))
    assert back.got == repr(lock) and str(back) == f"lock: expected a number, got {lock!r}"


def _raise_validation_error(n: int) -> None:
    raise ValidationError("N", "an integer >= 1", n)


def test_a_worker_raising_it_leaves_the_pool_usable() -> None:
    from verify.sweep.executors import local_executor

    ex = local_executor(1)
    try:
        with pytest.raises(ValidationError, match="N: expected an integer >= 1, got -3"):
            ex.submit(_raise_validation_error, -3).result()
        assert ex.submit(abs, -2).result() == 2  # not broken
    finally:
        ex.shutdown(wait=True)
