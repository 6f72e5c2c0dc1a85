"""The checked reader of side files (harness_ext.safe_input): what it refuses, and that each refusal names the file."""

from __future__ import annotations

import os

import pytest

from harness_ext.errors import SideFileError
from harness_ext.safe_input import finite_number, load_document, max_depth_of_json, read_rows, read_text, wrong_shape


def test_special_files_are_refused_before_reading(tmp_path):
    fifo = tmp_path / "chance.yaml"
    os.mkfifo(fifo)  # opening it for reading would wait for a writer without O_NONBLOCK
    with pytest.raises(SideFileError, match=r"chance.yaml: chance-level file is a FIFO, not a regular file"):
        read_text(fifo, "chance-level file")
    with pytest.raises(SideFileError, match="/dev/zero: alias file is a device"):
        read_text("/dev/zero", "alias file")
    with pytest.raises(SideFileError, match="is a directory"):
        read_text(tmp_path, "cost file")
    with pytest.raises(SideFileError, match="no such cost file"):
        read_text(tmp_path / "nope.json", "cost file")


def test_size_limit_and_utf8(tmp_path):
    f = tmp_path / "w.json"
    f.write_bytes(b"\xef\xbb\xbf{}")  # a byte-order mark is dropped
    assert read_text(f, "weights file") == "{}"
    with pytest.raises(SideFileError, match="w.json: weights file is 5 bytes; at most 4 are read"):
        read_text(f, "weights file", limit=4)
    f.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(SideFileError, match=r"not UTF-8 text \(byte 0xff at offset 7\)"):
        read_text(f, "weights file")


@pytest.mark.parametrize("name, text, match", [
    ("a.json", '{"a": 1e400}', "1e400 is beyond the range of a float"),
    ("a.json", '{"a": NaN}', "NaN is not a number JSON allows"),
    ("a.json", '{"a": ' + "9" * 400 + "}", "integer of 400 digits"),
    ("a.yaml", "a: .inf\n", "'a' is inf, not a finite number"),
    ("a.yaml", "a: {b: [1, .nan]}\n", "'a.b.1' is nan"),
    ("a.yaml", "a: [\n", "not valid YAML"),
    ("a.json", "[" * 40 + "]" * 40, "nested more than 32 levels"),
    ("a.yaml", "a: " + "[" * 40 + "]" * 40, "nested more than 32 levels"),
])
def test_documents_refuse_what_no_side_file_holds(tmp_path, name, text, match):
    f = tmp_path / name
    f.write_text(text)
    with pytest.raises(SideFileError, match=match) as err:
        load_document(f, "side file")
    assert str(err.value).startswith(str(f) + ": ")


def test_a_yaml_alias_bomb_is_checked_once_per_node(tmp_path):
    f = tmp_path / "bomb.yaml"
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    f.write_text("\n".join(lines))
    assert set(load_document(f, "side file")) == {f"a{i}" for i in range(9)}  # 10**9 leaves, visited as 90 nodes


def test_csv_rows_numbers_and_shapes(tmp_path):
    f = tmp_path / "c.csv"
    f.write_text("dataset,cost\nx," + "1" * 200_000 + "\n")  # beyond the csv module's field limit
    with pytest.raises(SideFileError, match=r"c.csv: cost file has a cell of 200,000 characters \(row 2, column 2, "
                                            r"\"cost\"\), more than the 131,072 characters a CSV cell may hold"):
        read_rows(f, "cost file")
    f.write_text("dataset,cost\nx,1\n")
    assert read_rows(f, "cost file") == [["dataset", "cost"], ["x", "1"]]
    assert finite_number(" 2.5 ", f, "cost file", "x") == 2.5
    for bad, match in (("1e400", "not a finite number"), (True, "not a number"), ([1], "not a number"), (0, "above 0")):
        with pytest.raises(SideFileError, match=match):
            finite_number(bad, f, "cost file", "the cost of 'x'", low=0.0, low_open=True)
    err = wrong_shape(f, "alias file", "'aliases'", "a mapping", ["a", "b"])
    assert str(err) == f"{f}: alias file: 'aliases' must be a mapping, got a list ['a', 'b']"


def test_json_depth_ignores_brackets_in_strings():
    assert max_depth_of_json('{"a": "[[[[\\"[[", "b": [[1]]}') == 3
