"""Seeded toy datasets for the kernel-regression pages.

Each dataset is defined once here (``DATASETS``); pages and the CLI enumerate this dict.
Arrays are float64 numpy, x sorted ascending.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ._checks import UserError, integer_in, one_of
from .i18n import Message
from .outside import Outside

if TYPE_CHECKING:   # pandas (~0.5 s to import) loads where it is used, not at start-up
    import pandas as pd  # pandas: kept off the first page's imports (cold start)

MAX_POINTS = 20_000


@dataclass(frozen=True)
class Dataset:
    """A dataset as the lessons use it.

    Parameters
    ----------
    name : str
        A key of ``DATASETS``, or the name an upload was given.
    x : numpy.ndarray
        (N,) inputs, sorted.
    y : numpy.ndarray
        (N,) noisy targets.
    true_fn : callable or None
        The noise-free function (None for uploaded data).
    x_range : tuple of float
        The interval x was drawn from (the plots' x range).
    description : explorer.i18n.Message
        What the data is, in any UI language.

    Examples
    --------
    >>> data = make_dataset("d2l", n=40, noise=1.0, seed=0)
    >>> len(data.x), bool((data.x[1:] >= data.x[:-1]).all()), data.x_range
    (40, True, (0.0, 5.0))
    """

    name: str
    x: np.ndarray                                 # (N,) sorted inputs
    y: np.ndarray                                 # (N,) noisy targets
    true_fn: Callable[[np.ndarray], np.ndarray] | None  # noise-free function, None for uploaded data
    x_range: tuple[float, float]                  # the interval x was drawn from (for plotting)
    description: Message                          # what the data is, in any UI language


@dataclass(frozen=True)
class DatasetSpec:
    """A built-in dataset's recipe (``DATASETS`` holds them).

    Parameters
    ----------
    name : str
    formula : str
        The noise-free function in LaTeX.
    true_fn : callable
        The noise-free function, numpy array in and out.
    x_range : tuple of float
        The interval x is drawn from, uniformly.
    default_n : int
        The number of points a page starts with.
    default_noise : float
        The standard deviation of the Gaussian noise on y a page starts with.
    presets : tuple of float
        Three bandwidths that over-fit, fit well and over-smooth at those defaults.

    Examples
    --------
    >>> spec = DATASETS["sine_mix"]
    >>> spec.x_range, spec.default_n, spec.presets
    ((-3.0, 3.0), 200, (0.01, 0.2, 5.0))
    """

    name: str
    formula: str                                  # LaTeX
    true_fn: Callable[[np.ndarray], np.ndarray]
    x_range: tuple[float, float]
    default_n: int
    default_noise: float
    presets: tuple[float, float, float]           # bandwidths that over-fit, fit well, over-smooth at the defaults


def _sine_mix(x: np.ndarray) -> np.ndarray:
    return np.sin(x) + 0.5 * np.sin(2 * x)


def _d2l(x: np.ndarray) -> np.ndarray:
    return 2 * np.sin(x) + x


DATASETS: dict[str, DatasetSpec] = {
    "sine_mix": DatasetSpec("sine_mix", r"y = \sin x + 0.5 \sin 2x + \varepsilon",
                            _sine_mix, (-3.0, 3.0), 200, 0.3, (0.01, 0.2, 5.0)),
    "d2l": DatasetSpec("d2l", r"y = 2 \sin x + x + \varepsilon",
                       _d2l, (0.0, 5.0), 40, 1.0, (0.05, 0.5, 10.0)),
}


def make_dataset(name: str = "sine_mix", n: int | None = None, noise: float | None = None,
                 seed: int = 0) -> Dataset:
    """Draw a seeded toy dataset: ``n`` points x ~ U(x_range), sorted, with y = f(x) + N(0, noise²).

    Parameters
    ----------
    name : {"sine_mix", "d2l"}
    n : int, optional
        2 to 100,000 points (the dataset's own default when None).
    noise : float, optional
        Standard deviation of the noise, 0 to 10 (the dataset's default when None).
    seed : int

    Returns
    -------
    Dataset
        ``x`` and ``y`` (N,) arrays, the noise-free ``true_fn``, ``x_range`` and a ``description`` message.
        The same (name, n, noise, seed) always gives the same arrays.

    Examples
    --------
    >>> d = make_dataset("sine_mix", 5, 0.0, seed=1)
    >>> bool((d.y == d.true_fn(d.x)).all()), bool((d.x[:-1] <= d.x[1:]).all())
    (True, True)
    >>> d.description
    'Sine mix: n = 5, noise sd = 0, seed = 1'
    """
    one_of(name, DATASETS, "dataset")
    spec = DATASETS[name]
    n = spec.default_n if n is None else integer_in(n, "n", 2, MAX_POINTS)
    noise = spec.default_noise if noise is None else float(noise)
    if not np.isfinite(noise) or noise < 0 or noise > 10:
        raise ValueError(f"noise must be a standard deviation from 0 to 10, got {noise!r}.")
    seed = integer_in(seed, "seed", 0, 2**31 - 1)
    rng = np.random.default_rng(seed)
    lo, hi = spec.x_range
    x = np.sort(rng.uniform(lo, hi, size=n))
    y = spec.true_fn(x) + rng.normal(0.0, noise, size=n)
    desc = Message("data.generated", dataset=Message(f"dataset.{name}"), n=n, noise=noise, seed=seed)
    return Dataset(name, x, y, spec.true_fn, spec.x_range, desc)


def sine_mix(n: int = 200, noise: float = 0.3, seed: int = 0) -> Dataset:
    """The default dataset: y = sin x + 0.5 sin 2x + ε, ε ~ N(0, noise²), x ~ U(-3, 3).

    Parameters
    ----------
    n : int
    noise : float
    seed : int

    Returns
    -------
    Dataset

    Examples
    --------
    >>> sine_mix(3, seed=0).x.shape
    (3,)
    """
    return make_dataset("sine_mix", n, noise, seed)


def d2l(n: int = 40, noise: float = 1.0, seed: int = 0) -> Dataset:
    """The textbook dataset: y = 2 sin x + x + ε, ε ~ N(0, noise²), x ~ U(0, 5).

    Parameters
    ----------
    n : int
    noise : float
    seed : int

    Returns
    -------
    Dataset

    Examples
    --------
    >>> d = d2l(40, seed=0)
    >>> bool(d.x.min() >= 0 and d.x.max() <= 5)
    True
    """
    return make_dataset("d2l", n, noise, seed)


def query_grid(data: Dataset, m: int = 400) -> np.ndarray:
    """Evenly spaced query points covering the dataset's x range.

    Parameters
    ----------
    data : Dataset
    m : int
        Number of points.

    Returns
    -------
    numpy.ndarray, shape (m,)

    Examples
    --------
    >>> query_grid(sine_mix(10), 3).tolist()
    [-3.0, 0.0, 3.0]
    """
    lo, hi = data.x_range
    return np.linspace(lo, hi, m)


def dataset_arrays(name: str, n: int, noise: float, seed: int, m: int = 400) -> dict[str, np.ndarray]:
    """What the pages draw of a generated dataset.

    Parameters
    ----------
    name : str
    n : int
    noise : float
    seed : int
        As in ``make_dataset``.
    m : int
        Points of the query grid.

    Returns
    -------
    dict
        ``x``, ``y`` (N,), the query grid ``x_grid`` (m,) and the noise-free function on it, ``true``.

    Examples
    --------
    >>> d = dataset_arrays("d2l", 40, 1.0, 0)
    >>> d["x"].shape, d["x_grid"].shape, bool(abs(d["true"][0] - 0.0) < 1e-12)
    ((40,), (400,), True)
    """
    d = make_dataset(name, n, noise, seed)
    grid = query_grid(d, m)
    return {"x": d.x, "y": d.y, "x_grid": grid, "true": d.true_fn(grid)}


# --------------------------------------------------------------------------- your own data
MAX_UPLOAD_ROWS = 5_000          # leave-one-out over N points costs N² per bandwidth: keep pages interactive
MAX_UPLOAD_COLUMNS = 100         # with the rows, bounds the parse: 100 x 5,000 cells (a 40,000-column file of 349 KB
                                 # took 36 s of server time when columns were not counted before parsing)
MAX_HEADER_CHARS = 5_000         # the first line (the column names), checked before anything else is read
HUGE = 1e6                       # beyond this magnitude, values are standardised (with a notice)


@dataclass(frozen=True)
class CsvTable:
    """A parsed CSV: its columns and which of them are numeric (``read_csv`` makes it).

    Parameters
    ----------
    frame : pandas.DataFrame
        The columns, numeric ones as float64 (text in them read as missing).
    numeric : list of str
        The names of the numeric columns.
    text : dict
        For each numeric column that held text, the rows that did (read as missing).

    Examples
    --------
    >>> table = read_csv("x,y,label\\n0,1.5,a\\n1,2.5,b\\n".encode())
    >>> table.numeric, len(table.frame)
    (['x', 'y'], 2)
    """
    frame: pd.DataFrame
    numeric: list[str]
    text: dict = field(default_factory=dict)      # numeric column -> rows that held text (read as missing)


def read_csv(raw: bytes) -> CsvTable:
    """Parse uploaded bytes as a UTF-8 CSV with a header row (data only, never code).

    Parameters
    ----------
    raw : bytes

    Returns
    -------
    CsvTable
        The rows and the names of the columns that hold numbers. A file that cannot be read raises a
        ``UserError`` whose message says what is wrong and what is allowed.

    Notes
    -----
    A file's cost is bounded before any table is built: its lines (blank ones too) are counted first (at most
    ``MAX_UPLOAD_ROWS`` after the header), then the header (``MAX_HEADER_CHARS`` characters, ``MAX_UPLOAD_COLUMNS``
    columns counted with the separator the file is read with: ``SEPARATORS``, else whitespace), then each row must
    have the header's number of fields (a ragged row is refused with its line; no column becomes an index).

    Examples
    --------
    >>> read_csv(b"x,y,label\\n1,2,a\\n3,4,b\\n").numeric
    ['x', 'y']
    >>> read_csv(b"x;y\\n1;2\\n3;4\\n").frame["y"].tolist()
    [2.0, 4.0]
    """
    import pandas as pd  # pandas: kept off the first page's imports (cold start)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UserError("err.csv_not_utf8") from None
    text = text.rstrip()
    if not text:
        raise UserError("err.csv_empty")
    lines = text.count("\n")                         # after the header, blank ones too: one pass in C
    if lines > MAX_UPLOAD_ROWS:
        raise UserError("err.csv_too_many", n=lines, limit=MAX_UPLOAD_ROWS)
    names, rows = _rows(text)
    cells = {name: pd.Series([row[i] for row in rows], dtype=object) for i, name in enumerate(_names(names))}
    frame = pd.DataFrame({name: c.mask(c.str.strip().isin(NA_TEXT)) for name, c in cells.items()},
                         index=pd.RangeIndex(len(rows)))
    numeric, text_rows = [], {}
    for col in frame.columns:
        values = pd.to_numeric(frame[col], errors="coerce").astype(float)
        if values.notna().sum() >= max(1, int(0.8 * len(frame))):     # a column of numbers (a few gaps allowed)
            text_rows[col] = (values.isna() & frame[col].notna()).to_numpy()
            frame[col] = values
            numeric.append(col)
    if len(numeric) < 2:
        raise UserError("err.csv_two_numeric", n=len(numeric), total=len(frame.columns),
                        columns=Outside(", ".join(map(str, frame.columns)), limit=120))
    return CsvTable(frame, numeric, text_rows)


SEPARATORS = ",;\t|"     # the separators a file is read with (the one giving the header most columns); else spaces
NA_TEXT = frozenset({"", "#N/A", "#NA", "<NA>", "N/A", "n/a", "NA", "NaN", "nan", "-nan", "NULL", "null", "None"})


def _rows(text: str) -> tuple[list[str], list[list[str]]]:
    """The header's names and the data rows (blank ones left out), each checked as it is read: the header's
    length and column count first, then every row's fields against the header's."""
    end = text.find("\n", 0, MAX_HEADER_CHARS + 2)
    header = text[:end if end >= 0 else MAX_HEADER_CHARS + 2].rstrip("\r")
    if len(header) > MAX_HEADER_CHARS:
        raise UserError("err.csv_header_long", limit=MAX_HEADER_CHARS)
    widths = {sep: len(next(csv.reader([header], delimiter=sep), [])) for sep in SEPARATORS}
    sep = max(SEPARATORS, key=widths.get)
    options = {"delimiter": sep} if widths[sep] > 1 else {"delimiter": " ", "skipinitialspace": True}
    reader = csv.reader(io.StringIO(text), strict=True, **options)
    try:
        names = next(reader)
        names = names[:-1] if len(names) > 1 and options["delimiter"] == " " and not names[-1] else names
        if len(names) > MAX_UPLOAD_COLUMNS:
            raise UserError("err.csv_too_many_columns", n=len(names), limit=MAX_UPLOAD_COLUMNS)
        rows = []
        for row in reader:
            row = row[:-1] if options["delimiter"] == " " and row and not row[-1] else row   # (trailing spaces)
            if not row or (len(row) == 1 and not row[0].strip()):
                continue                                    # a blank line (counted towards the limit above)
            if len(row) != len(names):
                raise UserError("err.csv_ragged", line=reader.line_num, n=len(row), columns=len(names))
            rows.append(row)
    except csv.Error as err:
        raise UserError("err.csv_unreadable", detail=Outside(str(err).splitlines()[0], limit=120)) from None
    return names, rows


def _names(names: list[str]) -> list[str]:
    """Column names as a table shows them: an empty one is ``Unnamed: i``, a repeated one gets ``.1``, ``.2``."""
    out: list[str] = []
    for i, name in enumerate(names):
        name = base = name.strip() or f"Unnamed: {i}"
        k = 0
        while name in out:
            k += 1
            name = f"{base}.{k}"
        out.append(name)
    return out


def dataset_from_table(table: CsvTable, x_col: str, y_col: str, drop_invalid: bool = False,
                       standardise: bool = True, name: str = "upload") -> tuple[Dataset, list[Message]]:
    """The (x, y) dataset of two numeric columns, sorted by x, and the notes a user should read.

    Parameters
    ----------
    table : CsvTable
        From ``read_csv``.
    x_col, y_col : str
        Two of ``table.numeric``.
    drop_invalid : bool
        Drop rows with missing or non-finite values; without it they raise ``UserError``.
    standardise : bool
        Values beyond ``HUGE`` in size become z-scores (with a note); without it they are refused.
    name : str

    Returns
    -------
    (Dataset, list of Message)
        Fewer than 2 rows, more than ``MAX_UPLOAD_ROWS`` rows or identical x raise ``UserError``.

    Examples
    --------
    >>> ds, notes = dataset_from_table(read_csv(b"a,b\\n3,1\\n1,2\\n2,3\\n"), "a", "b")
    >>> ds.x.tolist(), ds.y.tolist(), notes
    ([1.0, 2.0, 3.0], [2.0, 3.0, 1.0], [])
    """
    for col in (x_col, y_col):
        if col not in table.numeric:
            raise UserError("err.csv_not_numeric", column=Outside(repr(col)),
                            numeric=Outside(", ".join(table.numeric), limit=120))
    if x_col == y_col:
        raise UserError("err.csv_same_columns")
    x = np.asarray(table.frame[x_col], dtype=float)
    y = np.asarray(table.frame[y_col], dtype=float)
    notes: list[Message] = []
    bad = ~(np.isfinite(x) & np.isfinite(y))
    if bad.any():
        worded = np.zeros(len(x), dtype=bool)
        for col in (x_col, y_col):
            worded |= table.text.get(col, worded)
        if not drop_invalid and worded.any():         # text in a number column: said as such, with where it is
            raise UserError("err.csv_text_rows", bad=int(bad.sum()), n=len(x), text=int(worded.sum()),
                            row=int(np.argmax(worded)) + 1)
        if not drop_invalid:
            raise UserError("err.csv_bad_rows", bad=int(bad.sum()), n=len(x))
        x, y = x[~bad], y[~bad]
        notes.append(Message("note.csv_dropped", n=int(bad.sum())))
    if len(x) < 2:
        raise UserError("err.csv_too_few", n=len(x))
    if len(x) > MAX_UPLOAD_ROWS:
        raise UserError("err.csv_too_many", n=len(x), limit=MAX_UPLOAD_ROWS)
    if np.ptp(x) == 0:
        raise UserError("err.csv_no_spread", x=x[0])
    if max(np.abs(x).max(), np.abs(y).max()) > HUGE:
        if not standardise:
            raise UserError("err.csv_huge", size=max(np.abs(x).max(), np.abs(y).max()))
        x = (x - x.mean()) / x.std()
        y = (y - y.mean()) / (y.std() or 1.0)
        notes.append(Message("note.csv_standardised"))
    order = np.argsort(x, kind="stable")
    x, y = x[order], y[order]
    ds = Dataset(name, x, y, None, (float(x.min()), float(x.max())),
                 Message("data.upload_description", n=len(x), x=Outside(x_col), y=Outside(y_col)))
    return ds, notes


EXAMPLE_CSV = Path(__file__).parent / "assets" / "noisy_sine.csv"   # shipped with the package
