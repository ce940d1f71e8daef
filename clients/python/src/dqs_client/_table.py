"""The service's CSV pages as typed rows or one typed DataFrame, the types read from /v1/catalog."""

import csv
import io
import re
from decimal import Decimal

# The service writes an empty string as "" and a missing value (a rolled-up dimension,
# a null sum, a revision's absent side) as an empty field; Python's csv module and
# pandas read both as "". Unquoted empty fields are marked first, so a dimension stays
# a string with no NA guessing and only what the service left out is missing.
_MISSING = "\x1fdqs-missing\x1f"
_FIELDS = re.compile(r'("(?:[^"]|"")*")|(?<![^,\n])(?=,|\r?\n|(?<=,)\Z)')

# The one integer dimension (the catalog: "Calendar year, an integer"), and the one
# numeric column that names no metric: the count of rows an aggregate group holds.
_INTEGER_DIMENSIONS = ("year",)
_COUNT = "rows"


def _mark_missing(text):
    return _FIELDS.sub(lambda field: field.group(1) or _MISSING, text)


class Columns:
    """The type of each column an answer on one dataset can have: its dimensions, its metrics' columns, and the rest as text."""

    def __init__(self, catalog, dataset):
        entry = next((d for d in catalog["datasets"] if d["name"] == dataset), None)
        self.dimensions = set(catalog.get("dimensions", {})) | set(entry["dimensions"] if entry else [])
        self.metrics = entry["metrics"] if entry else []

    def kind(self, name):
        """'int', 'text' or 'number': a dimension, or a column holding a metric (ggr, ggr_sum, before_ggr, ggr_sum_2020)."""
        if name in self.dimensions:
            return "int" if name in _INTEGER_DIMENSIONS else "text"
        if name == _COUNT:
            return "int"
        if any(name == m or name.startswith(f"{m}_") or name.endswith(f"_{m}") or f"_{m}_" in name for m in self.metrics):
            return "number"
        return "text"


def _header(text):
    return next(csv.reader(io.StringIO(text[: text.find("\n") + 1])), [])


def join_pages(pages):
    """The CSV of every page as one text: the first page's header, then each page's rows."""
    texts = []
    for page in pages:
        texts.append(page if not texts else page[page.find("\n") + 1 :])
    return "".join(texts)


def rows(pages, columns, decimal):
    """Each row of each page as a dict of typed values (None where the service left a value out), read as the pages arrive."""
    number = Decimal if decimal else float
    convert = {"int": int, "text": str, "number": number}
    for page in pages:
        reader = csv.reader(io.StringIO(_mark_missing(page)))
        names = next(reader, [])
        kinds = [convert[columns.kind(name)] for name in names]
        for record in reader:
            yield {name: None if value == _MISSING else to(value) for name, to, value in zip(names, kinds, record)}


def frame(pandas, text, columns, decimal):
    """One DataFrame: year and counts Int64, dimensions and other text as pandas strings, metrics float64 (or Decimal objects)."""
    names = _header(text)
    dtypes = {"int": "Int64", "text": "string", "number": "float64"}
    types = {name: dtypes[columns.kind(name)] for name in names}
    exact = [name for name in names if decimal and types[name] == "float64"]
    return pandas.read_csv(
        io.StringIO(_mark_missing(text)),
        dtype={name: t for name, t in types.items() if name not in exact},
        converters={name: lambda v: None if v == _MISSING else Decimal(v) for name in exact},
        keep_default_na=False,
        na_values=[_MISSING],
    )
