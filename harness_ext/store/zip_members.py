"""Opening a member of a zip archive whatever its compression, Zstandard included.

Inspect AI writes its ``.eval`` logs as zip archives whose members are compressed with Zstandard (zip method 93;
Inspect AI 0.3.285 does, through the ``zipfile-zstd`` package); Python's ``zipfile`` reads that method only from
Python 3.14. Before 3.14,
:func:`open_member` decompresses such a member itself with the ``zstandard`` package (a dependency on those
Pythons), reading the member's compressed bytes where the archive's directory places them, across Zstandard frames
(Inspect splits a large member into several), and checking its CRC-32 at the end as ``zipfile`` does. Nothing is
patched in ``zipfile``: another library's archives read as before.
"""

from __future__ import annotations

import struct
import zipfile
import zlib

#: The zip format's method number for Zstandard (APPNOTE 6.3.7, section 4.4.5).
ZIP_ZSTANDARD = 93

_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")
_LOCAL_SIGNATURE = b"PK\x03\x04"


def open_member(z: zipfile.ZipFile, info: zipfile.ZipInfo):
    """A binary stream of member ``info`` of the open archive ``z``, decompressed.

    Parameters
    ----------
    z : zipfile.ZipFile
        The archive, opened from a path (its ``filename`` is opened again for a Zstandard member).
    info : zipfile.ZipInfo
        The member, from ``z.getinfo`` or ``z.infolist``.

    Returns
    -------
    file-like
        ``z.open(info)`` for the methods ``zipfile`` reads; for a Zstandard member before Python 3.14, a stream
        whose ``read`` raises ``zipfile.BadZipFile`` at its end when the CRC-32 differs from the directory's.

    Raises
    ------
    NotImplementedError
        A Zstandard member when the ``zstandard`` package is not installed (saying so), or an encrypted one.
    zipfile.BadZipFile
        The member's local header is not where the directory says.

    References
    ----------
    PKWARE, ".ZIP File Format Specification" (APPNOTE 6.3.10, 2022), sections 4.3.7 and 4.4.5.
    """
    if info.compress_type != ZIP_ZSTANDARD or getattr(zipfile, "ZIP_ZSTANDARD", None) == ZIP_ZSTANDARD:
        return z.open(info)
    if info.flag_bits & 0x1:
        raise NotImplementedError("an encrypted Zstandard member")
    try:
        import zstandard
    except ImportError:
        raise NotImplementedError(
            "its members are compressed with Zstandard (as Inspect AI writes its logs), which this Python's zipfile "
            "does not read: pip install zstandard (harness-ext depends on it; an install without it is incomplete)"
        ) from None
    fh = open(z.filename, "rb")
    try:
        fh.seek(info.header_offset)
        head = fh.read(_LOCAL_HEADER.size)
        if len(head) < _LOCAL_HEADER.size or head[:4] != _LOCAL_SIGNATURE:
            raise zipfile.BadZipFile(f"bad local header of member {info.filename!r}")
        name_len, extra_len = _LOCAL_HEADER.unpack(head)[-2:]
        fh.seek(name_len + extra_len, 1)
        raw = _Bounded(fh, info.compress_size)
        reader = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True, closefd=False)
    except BaseException:
        fh.close()
        raise
    return _Checked(reader, fh, info)


class _Bounded:
    """The next ``size`` bytes of ``fh``, and no more (a member's compressed bytes)."""

    def __init__(self, fh, size: int):
        self._fh, self._left = fh, int(size)

    def read(self, n: int = -1) -> bytes:
        n = self._left if n is None or n < 0 else min(n, self._left)
        data = self._fh.read(n) if n else b""
        self._left -= len(data)
        return data


class _Checked:
    """A decompressed stream that checks the member's CRC-32 once it is read to its end, and closes its file."""

    def __init__(self, reader, fh, info: zipfile.ZipInfo):
        self._reader, self._fh, self._info, self._crc = reader, fh, info, 0

    def read(self, n: int = -1) -> bytes:
        try:
            data = self._reader.read(n if n is not None and n >= 0 else -1)
        except Exception as exc:  # zstandard.ZstdError: a corrupt frame, said as zipfile says a bad member
            raise zipfile.BadZipFile(f"member {self._info.filename!r}: {exc}") from None
        self._crc = zlib.crc32(data, self._crc)
        if (n is None or n < 0 or (not data and n != 0)) and self._crc != self._info.CRC:
            raise zipfile.BadZipFile(f"Bad CRC-32 for file {self._info.filename!r}")
        return data

    def close(self) -> None:
        self._reader.close()
        self._fh.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
