"""The exceptions and warnings raised for bad or lossy input, and for unconverged runs.

Every check of user input in :mod:`topiczoo.text`, :mod:`topiczoo.corpus`,
:mod:`topiczoo.readers`, :mod:`topiczoo.splits`, :mod:`topiczoo.datasets` and
:mod:`topiczoo.metrics` raises one of these (missing files raise ``FileNotFoundError``).
Both exceptions subclass the built-in ones, so ``except ValueError`` keeps working.
"""

from __future__ import annotations

import contextlib
import logging
import re

__all__ = ["ConvergenceWarning", "DataLossWarning", "InputError", "InputTypeError",
           "InsufficientMemoryError"]


class InputError(ValueError):
    """Invalid input: the message names the file and line, the document, or the option.

    ``document`` is the index of the offending document when there is one (readers use it to
    name the line of the file instead) and ``detail`` the message without the location.
    """

    def __init__(self, message: str, *, document: int | None = None, detail: str | None = None):
        super().__init__(message)
        self.document = document
        self.detail = message if detail is None else detail

    @classmethod
    def about_document(cls, document: int, detail: str) -> "InputError":
        """``"document 3: <detail>"``, with ``document`` and ``detail`` kept for the readers."""
        return cls(f"document {document}: {detail}", document=document, detail=detail)


class InputTypeError(TypeError):
    """Input of the wrong type (a single string where a sequence of texts is expected, ...)."""


class InsufficientMemoryError(MemoryError):
    """A run refused before it starts: its estimated memory exceeds what the machine has
    (``topiczoo.memory.check_memory``). The message names the largest parts and how to go
    on."""


class DataLossWarning(UserWarning):
    """Legal input that lost something on the way in: documents emptied by tokenizing,
    letters outside every token, documents removed for a missing label. The message gives
    the counts; ``corpus.report()`` lists everything that was dropped."""


class ConvergenceWarning(UserWarning):
    """``fit(..., until_rhat=...)`` reached its ``max_iterations`` before every label-invariant
    monitor's rank R-hat fell below the threshold; the message names the monitor."""


_CALLBACK_INTERRUPT = re.compile(r"CpuCallback error.*\nKeyboardInterrupt\b", re.DOTALL)


class _DropInterruptLogs(logging.Filter):
    """Drops the log record of a host callback stopped by KeyboardInterrupt."""

    def filter(self, record):
        kind = record.exc_info[0] if record.exc_info else None
        return not (kind is not None and issubclass(kind, KeyboardInterrupt))


def _finish_dispatched(jax) -> None:
    """Wait for the computations already dispatched (JAX runs them asynchronously, and
    numpyro's loop dispatches step after step) to end: left running, they abort the process
    when Python exits under them ("terminate called without an active exception")."""
    for array in jax.live_arrays():
        try:
            array.block_until_ready()
        except Exception:  # noqa: BLE001 - a computation the interrupt failed: it has ended
            pass


@contextlib.contextmanager
def interrupts_as_keyboard_interrupt():
    """Let Ctrl-C stop a run as a ``KeyboardInterrupt`` wherever it lands.

    A KeyboardInterrupt raised inside a host callback (the numba sweeps run in
    ``jax.pure_callback``) reaches Python as JAX's ``JaxRuntimeError`` (through numpyro's
    ``MCMC.run``, a ValueError) "INTERNAL: CpuCallback error calling callback: ...
    KeyboardInterrupt", after JAX has logged its traceback. Within this context it is raised
    as the KeyboardInterrupt it is, without that log, so ``fit``'s checkpoint-and-resume path
    and the command's "interrupted" message handle it. Either way it is raised once the
    computations already dispatched have ended (:func:`_finish_dispatched`), so that a script
    that catches it can exit.
    """
    import jax

    logger = logging.getLogger("jax._src.callback")
    drop = _DropInterruptLogs()
    logger.addFilter(drop)
    try:
        yield
    except KeyboardInterrupt:
        _finish_dispatched(jax)
        raise
    except (jax.errors.JaxRuntimeError, ValueError) as err:
        if not _CALLBACK_INTERRUPT.search(str(err)):
            raise
        _finish_dispatched(jax)
        raise KeyboardInterrupt() from None
    finally:
        logger.removeFilter(drop)
