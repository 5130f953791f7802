"""A small writer of R data files (``save()``'s ``.rda``: XDR serialisation version 2,
gzip-compressed) for the objects the CRAN lda package's data files hold: integer, double and
character vectors, lists of integer matrices, and a data frame of a factor and an integer
column. It shares nothing with the reader (the ``rdata`` package): tests build small data
files with it in the form of the real ones."""

from __future__ import annotations

import gzip
import struct

import numpy as np

NA_INTEGER = -(2**31)
_LIST, _SYM, _CHAR, _INT, _REAL, _STR, _VEC, _NIL = 2, 1, 9, 13, 14, 16, 19, 254
_IS_OBJECT, _HAS_ATTR, _HAS_TAG = 1 << 8, 1 << 9, 1 << 10
_ASCII = 64 << 12  # CHARSXP of ASCII text


def _int(i: int) -> bytes:
    return struct.pack(">i", i)


def _char(s: str) -> bytes:
    b = s.encode("ascii")
    return _int(_CHAR | _ASCII) + _int(len(b)) + b


def _sym(name: str) -> bytes:
    return _int(_SYM) + _char(name)


def _attributes(attrs: list[tuple[str, bytes]]) -> bytes:
    """A pairlist of (name, serialised value)."""
    out = b""
    for name, value in attrs:
        out += _int(_LIST | _HAS_TAG) + _sym(name) + value
    return out + _int(_NIL)


def _flags(kind: int, attrs, obj: bool) -> bytes:
    return _int(kind | (_HAS_ATTR if attrs else 0) | (_IS_OBJECT if obj else 0))


def int_vector(values, attrs=(), obj=False) -> bytes:
    v = np.asarray(values, dtype=">i4")
    return _flags(_INT, attrs, obj) + _int(v.size) + v.tobytes() + (_attributes(list(attrs)) if attrs else b"")


def real_vector(values) -> bytes:
    v = np.asarray(values, dtype=">f8")
    return _int(_REAL) + _int(v.size) + v.tobytes()


def str_vector(values, attrs=()) -> bytes:
    out = _flags(_STR, attrs, False) + _int(len(values)) + b"".join(_char(s) for s in values)
    return out + (_attributes(list(attrs)) if attrs else b"")


def int_matrix(m) -> bytes:
    """An integer matrix (R stores it column by column, with a ``dim`` attribute)."""
    m = np.asarray(m)
    return int_vector(m.T.ravel(), attrs=[("dim", int_vector(m.shape))])


def matrix_list(matrices) -> bytes:
    return _int(_VEC) + _int(len(matrices)) + b"".join(int_matrix(m) for m in matrices)


def factor(codes, levels) -> bytes:
    """A factor: 1-based codes into ``levels``."""
    return int_vector(codes, attrs=[("levels", str_vector(levels)), ("class", str_vector(["factor"]))], obj=True)


def data_frame(columns: dict[str, bytes], num_rows: int) -> bytes:
    attrs = [
        ("names", str_vector(list(columns))),
        ("class", str_vector(["data.frame"])),
        ("row.names", int_vector([NA_INTEGER, -num_rows])),
    ]
    body = _flags(_VEC, attrs, True) + _int(len(columns)) + b"".join(columns.values())
    return body + _attributes(attrs)


def rda(name: str, value: bytes) -> bytes:
    """The bytes of ``save(<name>, file=...)``: one object, gzip-compressed."""
    header = b"RDX2\nX\n" + _int(2) + _int(0x040302) + _int(0x020300)
    return gzip.compress(header + _int(_LIST | _HAS_TAG) + _sym(name) + value + _int(_NIL), mtime=0)
