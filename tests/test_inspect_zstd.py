"""Inspect AI writes its ``.eval`` archives with Zstandard members (zip method 93), which Python's ``zipfile`` reads
only from 3.14: every such log was skipped as "not a valid .eval archive: That compression method is not supported".
A real archive written by Inspect AI 0.3.285 (tests/fixtures/inspect/PROVENANCE.md, ``zstd/``), and archives built
here to test the reader's edges: several Zstandard frames in one member, a damaged member, no ``zstandard``."""

from __future__ import annotations

import io
import struct
import sys
import zipfile
import zlib
from pathlib import Path

import pytest

from harness_ext.cli import main
from harness_ext.store.zip_members import ZIP_ZSTANDARD, open_member

zstandard = pytest.importorskip("zstandard")

REAL = next((Path(__file__).parent / "fixtures" / "inspect" / "zstd").glob("*.eval"))


def test_a_real_inspect_archive_is_read(tmp_path, capsys):
    with zipfile.ZipFile(REAL) as z:
        assert {i.compress_type for i in z.infolist()} == {ZIP_ZSTANDARD}
    db = str(tmp_path / "s.duckdb")
    assert main(["ingest", "--db", db, str(REAL)]) == 0
    assert "1 file ingested (1 result, 6 item scores from 1 item file)" in capsys.readouterr().out
    assert main(["matrix", "--db", db, "--normalise", "none"]) == 0
    assert "mockllm/m-small,0.3333" in capsys.readouterr().out


def _zstd_archive(path: Path, members: dict) -> None:
    """A zip whose members are Zstandard-compressed as given (bytes already compressed), written as stored members
    and then marked as method 93 with the uncompressed size and CRC-32 of ``members[name][1]``."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        for name, (packed, _) in members.items():
            z.writestr(name, packed)
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as z:
        infos = z.infolist()
        cd = z.start_dir
    for info in infos:
        plain = members[info.filename][1]
        crc, size = zlib.crc32(plain), len(plain)
        struct.pack_into("<H", data, info.header_offset + 8, ZIP_ZSTANDARD)
        struct.pack_into("<LLL", data, info.header_offset + 14, crc, len(members[info.filename][0]), size)
    at = cd
    for info in infos:  # central directory entries, in order
        assert data[at:at + 4] == b"PK\x01\x02"
        plain = members[info.filename][1]
        struct.pack_into("<H", data, at + 10, ZIP_ZSTANDARD)
        struct.pack_into("<L", data, at + 16, zlib.crc32(plain))
        struct.pack_into("<L", data, at + 24, len(plain))
        n, m, k = struct.unpack_from("<HHH", data, at + 28)
        at += 46 + n + m + k
    path.write_bytes(bytes(data))


def test_a_member_of_several_frames_is_read_whole(tmp_path):
    """Inspect splits a large member into several Zstandard frames; the reader reads across them."""
    a, b = b'{"x": [' + b"1, " * 5000, b"2]}"
    packed = zstandard.ZstdCompressor().compress(a) + zstandard.ZstdCompressor().compress(b)
    path = tmp_path / "two.zip"
    _zstd_archive(path, {"header.json": (packed, a + b)})
    with zipfile.ZipFile(path) as z, open_member(z, z.getinfo("header.json")) as fh:
        assert fh.read() == a + b


@pytest.mark.skipif(sys.version_info >= (3, 14), reason="zipfile reads Zstandard itself from 3.14")
def test_a_damaged_member_and_a_missing_package_are_said(tmp_path, monkeypatch, capsys):
    plain = b'{"ok": true}'
    packed = zstandard.ZstdCompressor(write_checksum=False).compress(plain)
    path = tmp_path / "bad.zip"
    _zstd_archive(path, {"header.json": (packed, plain + b" ")})  # the directory's CRC-32 is another content's
    with zipfile.ZipFile(path) as z, pytest.raises(zipfile.BadZipFile, match="Bad CRC-32"):
        with open_member(z, z.getinfo("header.json")) as fh:
            fh.read()
    # The real archive without the zstandard package: one clear error naming the file and what to install.
    monkeypatch.setitem(sys.modules, "zstandard", None)
    db = str(tmp_path / "s.duckdb")
    main(["ingest", "--db", db, str(REAL)])
    err = capsys.readouterr().err
    assert REAL.name in err and "compressed with Zstandard" in err and "pip install zstandard" in err
