"""A Qt table model over a pandas DataFrame, with unit-aware display and vectorised sorting.

Display text comes from `perfview.core.model.units` (columns ending in `_ns` are times, `_bytes`
bytes, `_pct` percentages), while sorting and CSV export use the raw values.

Why the model sorts itself: a QSortFilterProxyModel compares rows by calling `data()` once per
comparison, i.e. O(n log n) Python calls; on a 30k-row caller table that is seconds. Here
`TableProxy.sort()` forwards to `DataFrameModel.sort()`, which computes one numpy argsort and
emits a layout change, and the proxy keeps the source order. Filtering is also vectorised: the
filter text becomes one boolean mask (pandas `str.contains` on the text columns) and
`filterAcceptsRow` is a single array lookup.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd
from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
)

from perfview.core.layout.columns import two_line_header
from perfview.core.model.units import COLUMN_SUFFIX_UNITS, Unit, column_unit, format_value

RAW_ROLE = Qt.ItemDataRole.UserRole + 1
ROW_ID_ROLE = Qt.ItemDataRole.UserRole + 2
# The roles the model answers (as ints: a role arrives as an int from Qt's calls)
_ROLES = frozenset(
    int(r)
    for r in (
        Qt.ItemDataRole.DisplayRole,
        Qt.ItemDataRole.ToolTipRole,
        Qt.ItemDataRole.TextAlignmentRole,
        RAW_ROLE,
        ROW_ID_ROLE,
    )
)

# Integer columns that are identifiers, shown without thousands separators.
_PLAIN_INT_COLUMNS = {
    "line",
    "lane",
    "run",
    "pid",
    "tid",
    "child",
    "block",
    "report",
    "id",
    "depth",
}

AnyIndex = QModelIndex | QPersistentModelIndex


unit_for = column_unit  # the naming rule lives in core.units


def header_for(column: str) -> str:
    """Column header text: the name without its unit suffix, underscores as spaces
    (`self_pct` becomes "self %" so it does not collide with `self_ns`'s "self")."""
    if column.endswith("_pct"):
        return column[: -len("_pct")].replace("_", " ") + " %"
    for suffix, _unit in COLUMN_SUFFIX_UNITS:
        if column.endswith(suffix):
            column = column[: -len(suffix)]
            break
    return column.replace("_", " ")


class DataFrameModel(QAbstractTableModel):
    """Read-only table over `frame`. Row identity is the frame's index (see `row_id`).

    `headers` overrides header texts per column; `units` overrides the unit implied by a
    column's suffix (use it for derived columns like a percall time).
    """

    def __init__(
        self,
        frame: pd.DataFrame | None = None,
        *,
        headers: dict[str, str] | None = None,
        units: dict[str, Unit | None] | None = None,
        parent: Any = None,
    ) -> None:
        super().__init__(parent)
        self._headers = dict(headers or {})
        self._wrapped: set[int] = set()  # columns whose header is drawn on two lines
        self._unit_overrides = dict(units or {})
        self._frame = pd.DataFrame()
        self._columns: list[np.ndarray] = []
        self._units: list[Unit | None] = []
        self._numeric: list[bool] = []
        self._epoch: list[bool] = []
        self._order = np.zeros(0, dtype=np.int64)
        self._ids = np.zeros(0, dtype=np.int64)
        self.set_frame(frame if frame is not None else pd.DataFrame())

    # --- data ------------------------------------------------------------------------------
    @property
    def frame(self) -> pd.DataFrame:
        """The frame in its original order (row ids = its index)."""
        return self._frame

    def set_frame(self, frame: pd.DataFrame) -> None:
        self.beginResetModel()
        self._frame = frame
        self._columns = [_column_array(frame[c]) for c in frame.columns]
        self._units = [self._unit_of(str(c)) for c in frame.columns]
        self._epoch = [
            _is_epoch(frame[c], u) for c, u in zip(frame.columns, self._units, strict=True)
        ]
        self._numeric = [pd.api.types.is_numeric_dtype(frame[c].dtype) for c in frame.columns]
        self._order = np.arange(len(frame), dtype=np.int64)
        self._ids = np.asarray(frame.index) if len(frame) else np.zeros(0, dtype=np.int64)
        self.endResetModel()

    def _unit_of(self, column: str) -> Unit | None:
        if column in self._unit_overrides:
            return self._unit_overrides[column]
        return unit_for(column)

    def wrap_header(self, column: int) -> None:
        """Draw column `column`'s header on two lines (a long header over short numbers)."""
        self._wrapped.add(column)
        self.headerDataChanged.emit(Qt.Orientation.Horizontal, column, column)

    def column_names(self) -> list[str]:
        return [str(c) for c in self._frame.columns]

    def is_numeric(self, column: int) -> bool:
        return self._numeric[column]

    def column_index(self, name: str) -> int:
        return self.column_names().index(name)

    def source_row(self, row: int) -> int:
        """Position in the original frame of displayed row `row`."""
        return int(self._order[row])

    def row_id(self, row: int) -> Any:
        """The frame index label of displayed row `row` (e.g. a pstats function id)."""
        value = self._ids[self._order[row]]
        return value.item() if hasattr(value, "item") else value

    def raw(self, row: int, column: int) -> Any:
        value = self._columns[column][self._order[row]]
        return value.item() if hasattr(value, "item") else value

    def display(self, row: int, column: int) -> str:
        return self._format(self.raw(row, column), column)

    def _format(self, value: Any, column: int) -> str:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return ""
        if value is pd.NA or value is pd.NaT:
            return ""
        unit = self._units[column]
        if self._epoch[column] and isinstance(value, int | float):
            return _format_epoch(value)
        if unit is not None and isinstance(value, int | float):
            return format_value(value, unit)
        if isinstance(value, bool):
            return "yes" if value else ""
        if isinstance(value, int | float) and self._numeric[column]:
            if str(self._frame.columns[column]) in _PLAIN_INT_COLUMNS:
                return str(value)
            return format_value(value, Unit.COUNT)
        return str(value)

    def find_rows(self, column: str, value: Any) -> list[int]:
        """Displayed rows whose `column` equals `value` (vectorised)."""
        if column not in self._frame.columns or not len(self._order):
            return []
        data = self._columns[self.column_index(column)][self._order]
        try:
            hits = np.flatnonzero(data == value)
        except (TypeError, ValueError):
            return []
        return [int(i) for i in np.atleast_1d(hits)]

    def find_source_position(self, values: np.ndarray, value: Any) -> int | None:
        """Displayed row of the first frame position where `values` (aligned with the frame's
        original order) equals `value`."""
        if not len(self._order):
            return None
        hits = np.flatnonzero(values[self._order] == value)
        return int(hits[0]) if len(hits) else None

    def find_id(self, row_id: Any) -> int | None:
        """Displayed row of the frame index label `row_id`, if present."""
        if not len(self._order):
            return None
        hits = np.flatnonzero(self._ids[self._order] == row_id)
        return int(hits[0]) if len(hits) else None

    # --- Qt model API ----------------------------------------------------------------------
    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._order)

    def columnCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._columns)

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if int(role) not in _ROLES:  # most of what a view asks (fonts, colours, size hints)
            return None
        if not index.isValid():
            return None
        row, column = index.row(), index.column()
        if row >= len(self._order) or column >= len(self._columns):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self.display(row, column)
        if role == Qt.ItemDataRole.ToolTipRole:  # a name elided in its column, whole
            text = self.display(row, column)
            return text if not self._numeric[column] and len(text) > 16 else None
        if role == Qt.ItemDataRole.TextAlignmentRole:
            if self._numeric[column]:
                return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            return int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        if role == RAW_ROLE:
            return self.raw(row, column)
        if role == ROW_ID_ROLE:
            return self.row_id(row)
        return None

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        tip = role == Qt.ItemDataRole.ToolTipRole
        if role != Qt.ItemDataRole.DisplayRole and not tip:
            return None
        if orientation == Qt.Orientation.Horizontal:
            if 0 <= section < len(self._columns):
                name = str(self._frame.columns[section])
                text = self._headers.get(name, header_for(name))
                return two_line_header(text) if section in self._wrapped and not tip else text
            return None
        if tip:
            return None
        return str(section + 1) if 0 <= section < len(self._order) else None

    def flags(self, index: AnyIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Reorder rows by raw values of `column` (one argsort; NaNs last)."""
        if not 0 <= column < len(self._columns) or not len(self._order):
            return
        keys = self._columns[column]
        order_arr = _argsort(keys, descending=order == Qt.SortOrder.DescendingOrder)
        self.layoutAboutToBeChanged.emit()
        old_order = self._order
        new_pos = np.empty(len(order_arr), dtype=np.int64)
        new_pos[order_arr] = np.arange(len(order_arr))  # source row -> new displayed row
        self._order = order_arr
        old = self.persistentIndexList()
        new = [self.index(int(new_pos[old_order[i.row()]]), i.column()) for i in old]
        self.changePersistentIndexList(old, new)
        self.layoutChanged.emit()

    # --- filtering and export --------------------------------------------------------------
    def filter_mask(self, text: str, columns: Sequence[str] | None = None) -> np.ndarray | None:
        """Boolean mask over *source* rows matching `text` (case-insensitive substring) in any
        text column (or in `columns`). None means "no filter"."""
        text = text.strip()
        if not text:
            return None
        frame = self._frame
        names = (
            list(columns)
            if columns
            else [str(c) for c, num in zip(frame.columns, self._numeric, strict=True) if not num]
        )
        mask = np.zeros(len(frame), dtype=bool)
        for name in names:
            series = frame[name].astype(str)
            mask |= series.str.contains(text, case=False, regex=False).to_numpy(dtype=bool)
        return mask

    def to_csv(
        self, rows: Iterable[int] | None = None, columns: Sequence[int] | None = None
    ) -> str:
        """CSV of displayed `rows` × `columns` (all by default), raw values, header first."""
        cols = list(columns) if columns is not None else list(range(len(self._columns)))
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow([str(self._frame.columns[c]) for c in cols])
        for row in rows if rows is not None else range(len(self._order)):
            writer.writerow([_csv_value(self.raw(row, c)) for c in cols])
        return out.getvalue()


class TableProxy(QSortFilterProxyModel):
    """Filtering proxy whose `sort()` is delegated to the vectorised source sort."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._mask: np.ndarray | None = None
        self._filter_text = ""
        self.setDynamicSortFilter(False)

    def source(self) -> DataFrameModel:
        model = self.sourceModel()
        assert isinstance(model, DataFrameModel)
        return model

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        self.source().sort(column, order)

    def set_filter_text(self, text: str) -> None:
        self._filter_text = text
        if hasattr(self, "beginFilterChange"):  # Qt >= 6.9; invalidateRowsFilter is deprecated
            self.beginFilterChange()
            self._mask = self.source().filter_mask(text)
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:
            self._mask = self.source().filter_mask(text)
            self.invalidateRowsFilter()

    def filter_text(self) -> str:
        return self._filter_text

    def filterAcceptsRow(self, source_row: int, source_parent: AnyIndex) -> bool:
        if self._mask is None:
            return True
        model = self.source()
        if source_row >= model.rowCount():
            return False
        return bool(self._mask[model.source_row(source_row)])

    def source_rows(self, proxy_rows: Iterable[int]) -> list[int]:
        return [self.mapToSource(self.index(r, 0)).row() for r in proxy_rows]

    def to_csv(
        self, proxy_rows: Iterable[int] | None = None, columns: Sequence[int] | None = None
    ) -> str:
        rows = range(self.rowCount()) if proxy_rows is None else proxy_rows
        return self.source().to_csv(self.source_rows(rows), columns)


# ns values above this are wall-clock timestamps (after 1973), not durations: mprof's run
# start is unix-epoch ns, and showing it as "1652117773 s" helps nobody.
_EPOCH_NS = 1e17


def _is_epoch(series: pd.Series, unit: Unit | None) -> bool:
    if unit is not Unit.NS or not len(series) or not pd.api.types.is_numeric_dtype(series.dtype):
        return False
    low = series.min()
    return bool(pd.notna(low) and float(low) > _EPOCH_NS)


def _format_epoch(ns: float) -> str:
    stamp = datetime.fromtimestamp(float(ns) / 1e9)
    return stamp.strftime("%Y-%m-%d %H:%M:%S")


def _column_array(series: pd.Series) -> np.ndarray:
    """A numpy array for fast per-cell access and argsort (categoricals/strings as objects)."""
    if isinstance(series.dtype, pd.CategoricalDtype) or not pd.api.types.is_numeric_dtype(
        series.dtype
    ):
        return series.astype(object).to_numpy(dtype=object)
    if pd.api.types.is_bool_dtype(series.dtype):
        return series.to_numpy(dtype=bool)
    return series.to_numpy()


def _argsort(keys: np.ndarray, *, descending: bool) -> np.ndarray:
    """Stable argsort (ties keep their order); text compares case-insensitively; NaN last."""
    series = pd.Series(keys)
    if keys.dtype == object:
        text = series.map(lambda v: None if v is None else str(v), na_action="ignore")
        ordered = text.sort_values(
            ascending=not descending,
            kind="stable",
            na_position="last",
            key=lambda s: s.str.lower(),
        )
    else:
        ordered = series.sort_values(ascending=not descending, kind="stable", na_position="last")
    return ordered.index.to_numpy(dtype=np.int64)


def _csv_value(value: Any) -> Any:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return value


__all__ = ["RAW_ROLE", "ROW_ID_ROLE", "DataFrameModel", "TableProxy", "header_for", "unit_for"]
