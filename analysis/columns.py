"""Big tables in bounded memory: Parquet written a chunk at a time, read a
column at a time.

A long run can hold tens of millions of write records.  The analysis never
holds them all as a table: each chunk of records becomes a DataFrame that
is appended to the Parquet file as a row group, and the summary reads back
one column at a time (8 bytes per row for a number), so its percentiles stay
exact.
"""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq


def _plain(df: pd.DataFrame) -> pd.DataFrame:
    """Categoricals as strings: every chunk then has the same schema."""
    for c in df.columns:
        if isinstance(df[c].dtype, pd.CategoricalDtype):
            df[c] = df[c].astype(str)
    return df


def write_chunks(path: Path, frames: Iterable[pd.DataFrame], empty: pd.DataFrame) -> int:
    """Append each frame to path (atomically replaced); returns the rows."""
    tmp = path.with_suffix(".parquet.tmp")
    writer = None
    rows = 0
    try:
        for df in frames:
            if not len(df):
                continue
            table = pa.Table.from_pandas(_plain(df), preserve_index=False)
            if writer is None:
                writer = pq.ParquetWriter(tmp, table.schema)
            else:
                table = table.cast(writer.schema)
            writer.write_table(table)
            rows += len(df)
        if writer is None:
            _plain(empty).to_parquet(tmp, index=False)
    finally:
        if writer is not None:
            writer.close()
    tmp.replace(path)
    return rows


class ParquetColumns:
    """Enough of a DataFrame for summaries: ``cols[name]`` reads one column."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._file = pq.ParquetFile(self.path)
        self.columns = list(self._file.schema_arrow.names)

    def __len__(self) -> int:
        return self._file.metadata.num_rows

    def __contains__(self, name: object) -> bool:
        return name in self.columns

    def __getitem__(self, name: str) -> pd.Series:
        col = pq.read_table(self.path, columns=[name]).column(0)
        return pd.Series(col.to_numpy(zero_copy_only=False)
                         if not pa.types.is_string(col.type) and
                         not pa.types.is_large_string(col.type)
                         else np.asarray(col.to_pylist(), dtype=object), name=name)

    def frame(self, names: list[str]) -> pd.DataFrame:
        """Those columns; strings come back categorical (a byte or two a row)."""
        names = [n for n in names if n in self]
        strings = [n for n in names
                   if pa.types.is_string(self._file.schema_arrow.field(n).type)
                   or pa.types.is_large_string(self._file.schema_arrow.field(n).type)]
        return pq.read_table(self.path, columns=names,
                             read_dictionary=strings).to_pandas()

    def batches(self, names: list[str], rows: int = 1 << 16):
        """Those columns, a DataFrame of at most rows rows at a time.  One
        reader per row group: a single reader over the whole file keeps
        memory growing with the file (6M rows: +190 MB)."""
        names = [n for n in names if n in self]
        for g in range(self._file.metadata.num_row_groups):
            for b in self._file.iter_batches(batch_size=rows, row_groups=[g],
                                             columns=names):
                yield b.to_pandas()
