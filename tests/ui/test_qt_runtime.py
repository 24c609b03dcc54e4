"""Guards against Qt binding bugs that would crash the inspector after enough work."""

import sys

from PySide6.QtCore import QObject, Signal


class _Emitter(QObject):
    fired = Signal(object, tuple)


def test_signal_emit_keeps_reference_counts(qapp):
    """PySide6 6.12.0's ``emit()`` returned ``True`` without a reference: every emit (qasync emits one per
    cross-thread wake-up, so one per store call) lowered ``True``'s count until the interpreter crashed."""
    emitter = _Emitter()
    emitter.fired.connect(lambda *_: None)
    emitter.fired.emit(1, ())  # the first emit may cache a reference of its own
    before = sys.getrefcount(True)
    for _ in range(200):
        emitter.fired.emit(1, ())
    assert abs(sys.getrefcount(True) - before) <= 2  # the bug shows as -200 here
