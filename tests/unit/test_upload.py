"""Uploaded CSVs: parsed as data only, every rejection explained."""

import numpy as np
import pytest

from explorer import data


def load(raw: bytes, **kw):
    table = data.read_csv(raw)
    return data.dataset_from_table(table, kw.pop("x", table.numeric[0]), kw.pop("y", table.numeric[1]), **kw)


def test_the_example_csv_loads_sorted():
    ds, notes = load(data.EXAMPLE_CSV.read_bytes())
    assert len(ds.x) == 120 and np.all(np.diff(ds.x) >= 0) and notes == []
    assert ds.true_fn is None


def test_columns_can_be_picked_and_rows_are_sorted_by_x():
    raw = b"id,label,t,v\n1,a,3.0,30\n2,b,1.0,10\n3,c,2.0,20\n"
    table = data.read_csv(raw)
    assert table.numeric == ["id", "t", "v"]
    ds, _ = data.dataset_from_table(table, "t", "v")
    np.testing.assert_array_equal(ds.x, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(ds.y, [10.0, 20.0, 30.0])


@pytest.mark.parametrize("raw, message", [
    (b"\xff\xfe\x00\x01", "not UTF-8"),
    (b"", "empty"),
    (b"   \n", "empty"),
    (b"name,city\nann,paris\nbob,rome\n", "two numeric columns"),
    (b"x,y\n1,2\n", "at least 2"),
    (b"x,y\n1,2\n1,3\n1,4\n", "Every x is 1"),
    (b"x,y\n1,2\n2,\n3,4\n4,5\n5,6\n", "missing or non-finite"),
    (b"x,y\n1,2\n2,inf\n3,4\n4,5\n5,6\n", "missing or non-finite"),
    (b'x,y\n"1,2\n', "could not be read as CSV"),
])
def test_bad_files_are_rejected_with_one_sentence(raw, message):
    with pytest.raises(ValueError, match=message):
        load(raw)


def test_text_in_a_number_column_is_said_as_text_with_its_row():
    """A column of numbers with a word in it is read as numbers with a gap; the refusal says that the gap is text,
    where the first one is (its data row), and how many rows are unusable in all (text, empty or non-finite)."""
    raw = b"x,y\n1,2\n2,3\n3,oops\n4,\n5,6\n6,7\n7,8\n8,9\n9,1\n10,2\n"
    with pytest.raises(ValueError) as err:
        load(raw)
    said = err.value.message
    assert said.key == "err.csv_text_rows" and (said.values["bad"], said.values["text"]) == (2, 1)
    assert said.values["row"] == 3 and "text where a number should be" in str(err.value)
    ds, notes = load(raw, drop_invalid=True)
    assert len(ds.x) == 8 and notes[0].values["n"] == 2


def test_missing_rows_can_be_dropped():
    ds, notes = load(b"x,y\n1,2\n2,\n3,4\n4,5\n5,6\n", drop_invalid=True)
    assert len(ds.x) == 4 and "Dropped 1 rows" in notes[0]


def test_too_many_rows_names_the_limit():
    rows = "\n".join(f"{i},{i % 7}" for i in range(data.MAX_UPLOAD_ROWS + 1))
    with pytest.raises(ValueError, match=f"{data.MAX_UPLOAD_ROWS:,}"):
        load(f"x,y\n{rows}\n".encode())


def test_huge_values_are_standardised_or_rejected():
    raw = b"x,y\n1e9,1\n2e9,5\n3e9,2\n"
    ds, notes = load(raw)
    assert abs(ds.x.mean()) < 1e-12 and abs(ds.x.std() - 1) < 1e-12 and "standardised" in notes[0]
    with pytest.raises(ValueError, match="standardise"):
        load(raw, standardise=False)


def test_same_column_twice_is_refused():
    table = data.read_csv(b"x,y\n1,2\n2,3\n")
    with pytest.raises(ValueError, match="two different columns"):
        data.dataset_from_table(table, "x", "x")


def test_semicolon_files_are_sniffed():
    ds, _ = load(b"x;y\n1;2\n2;3\n3;5\n")
    np.testing.assert_array_equal(ds.y, [2.0, 3.0, 5.0])


# ----------------------------------------------------------------------------- what a file may cost (bench: hostile)
def _refusal(raw: bytes):
    with pytest.raises(ValueError) as err:
        data.read_csv(raw)
    return err.value.message


def test_a_ragged_row_is_refused_with_its_line_never_read_as_an_index():
    """pandas turns the extra fields of a first row longer than the header into index levels (0.3 ms of CPU a
    field: 100k fields cost 30 s); here the row is refused, whatever its length."""
    said = _refusal(b"x,y\n" + b",".join(b"1" for _ in range(100_000)) + b"\n2,3\n")
    assert said.key == "err.csv_ragged" and (said.values["line"], said.values["n"], said.values["columns"]) == \
        (2, 100_000, 2)
    said = _refusal(b"x,y\n1,2\n2,3\n3,4,5\n")
    assert said.key == "err.csv_ragged" and said.values["line"] == 4 and "Line 4 has 3 values" in str(said)
    assert _refusal(b"x,y,z\n1,2,3\n4,5\n").values["line"] == 3          # a short row too


def test_columns_are_counted_with_the_separator_the_file_is_read_with_and_lines_before_anything_is_parsed():
    colon = ":".join("c" for _ in range(2_400)).encode() + b"\n" + b"1:2\n" * 1_000
    said = _refusal(colon)                    # ':' is no separator here: one column, refused as such
    assert said.key == "err.csv_two_numeric" and said.values["total"] == 1
    wide = ";".join(f"c{i}" for i in range(data.MAX_UPLOAD_COLUMNS + 1)).encode() + b"\n1;2\n"
    assert _refusal(wide).key == "err.csv_too_many_columns"
    blank = b"x,y\n1,2\n" + b"  \n" * (data.MAX_UPLOAD_ROWS + 1) + b"3,4\n"     # blank lines count
    said = _refusal(blank)
    assert said.key == "err.csv_too_many" and said.values["n"] == data.MAX_UPLOAD_ROWS + 3
    ds, _ = load(b"x,y\n1,2\n\n\n2,3\n   \n3,5\n\n")                               # a few blank lines are read past
    np.testing.assert_array_equal(ds.y, [2.0, 3.0, 5.0])


@pytest.mark.parametrize("raw", [
    b"x,y,label\n0,1.5,a\n1,2.5,b\n2,NA,c\n3,,d\n4,oops,e\n5,1e3,f\n"
    + b"".join(b"%d,%d,g\n" % (i, i) for i in range(6, 20)),
    b"t;v;w\n1;2;3\n4;5;6\n7;8;9\n",
    b"a\tb\n1\t2\n3\t4\n",
    b"p|q\n1|2\n3|4\n",
    b'x,y,name\n1,2,"Smith, J"\n2,3,"O\'Neil"\n3,-4.5,""\n',
    b"x,x,y\n1,2,3\n4,5,6\n",
    b"x,y\r\n1,2\r\n3,4\r\n",
    "\ufeffx,y\n1,2\n3,4\n".encode(),
])
def test_a_valid_file_reads_as_pandas_reads_it(raw):
    """The numbers of each numeric column, and which cells were text, as ``pandas.read_csv`` (the C parser, with
    the separator given) finds them."""
    import io

    import pandas as pd

    table = data.read_csv(raw)
    text = raw.decode("utf-8-sig")
    sep = max(",;\t|", key=lambda s: text.splitlines()[0].count(s))
    reference = pd.read_csv(io.StringIO(text), sep=sep)
    assert list(table.frame.columns) == [str(c).strip() for c in reference.columns]
    for name, col in zip(table.frame.columns, reference.columns, strict=True):
        if name in table.numeric:
            expected = pd.to_numeric(reference[col], errors="coerce").astype(float).to_numpy()
            np.testing.assert_array_equal(table.frame[name].to_numpy(), expected)
            assert table.text[name].tolist() == (pd.to_numeric(reference[col], errors="coerce").isna()
                                                 & reference[col].notna()).tolist()


def test_whitespace_separated_columns_are_read():
    ds, _ = load(b"x  y\n 1  2\n 2  3\n 3  5 \n")
    np.testing.assert_array_equal(ds.y, [2.0, 3.0, 5.0])
