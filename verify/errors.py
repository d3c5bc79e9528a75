"""One error type for bad input, naming the argument and what was expected.

Every public function validates its input and raises :class:`ValidationError`; the command line
turns it into a one-line message and exit code 2. Nothing is silently clipped.
"""

from __future__ import annotations


class _Missing:
    """The default of ``got`` (nothing given); pickled by reference, so it stays the one."""

    def __reduce__(self) -> str:
        return "_MISSING"


_MISSING = _Missing()


class ValidationError(ValueError):
    """Bad input: ``argument`` names what was wrong, ``expected`` what was wanted.

    >>> str(ValidationError("N", "an integer >= 1", 0))
    'N: expected an integer >= 1, got 0'
    """

    def __init__(
        self, argument: str, expected: str, got: object = _MISSING, hint: str = ""
    ) -> None:
        self.argument = argument
        self.expected = expected
        self.got = got
        self.hint = hint
        message = f"{argument}: expected {expected}"
        if got is not _MISSING:
            message += f", got {got!r}"
        if hint:
            message += f" ({hint})"
        super().__init__(message)

    def __reduce__(self) -> tuple:
        """Pickled (to or from a worker process) as its class, fields and message: the default
        would call ``__init__(message)`` and fail, which breaks a process pool. ``got`` goes
        as given when it pickles, else as its repr."""
        import pickle

        got = self.got
        try:
            pickle.dumps(got)
        except Exception:  # an object that does not pickle: its repr, as the message has it
            got = repr(got)
        return _restore, (type(self), self.argument, self.expected, got, self.hint, str(self))


def _restore(
    cls: type[ValidationError], argument: str, expected: str, got: object, hint: str, message: str
) -> ValidationError:
    """A ValidationError from its pickled fields, with the very message it had."""
    err = cls.__new__(cls)
    err.argument, err.expected, err.got, err.hint = argument, expected, got, hint
    ValueError.__init__(err, message)
    return err


class ModelMismatchError(Exception):
    """The user's model and the spec model read from its weights compute different outputs
    (``check-model``'s comparison, ``verify.torch.compare``). Here, not in ``verify.torch``,
    so that catching it does not import PyTorch (3 s) for a checkpoint that needs none."""


class PluginError(RuntimeError):
    """A family or statement from a plugin (``--import``, an entry point) broke its contract,
    e.g. returned something other than a BooleanFunction. The message names the plugin and
    what it returned; the command line prints it on one line with exit code 1."""
