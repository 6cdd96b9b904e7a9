"""Core tables → Python: numeric columns arrive as native-order byte buffers, strings as
distinct values + u32 indices (``table_to_py`` in crates/aqmlab-py); they become polars
columns (`results.frame`) or JSON rows (`results.rows`) with the same dtypes, order and
values as the old one-object-per-value path."""

import io
import math
import struct

import aqmlab
import polars as pl
import pytest
from aqmlab.results import _frame_rows, frame, rows, values
from conftest import EXAMPLES
from polars.testing import assert_frame_equal

U64_MAX = 2**64 - 1
I64_MIN, I64_MAX = -(2**63), 2**63 - 1
FLOATS = [0.0, -0.0, 1.5, -2.25e300, 5e-324, math.nan, math.inf, -math.inf]
WIDTH = {"f64": 8, "u64": 8, "i64": 8, "bool": 1}
DTYPES = {"f64": pl.Float64, "u64": pl.UInt64, "i64": pl.Int64, "bool": pl.Boolean, "str": pl.Utf8}


def packed(fmt: str, vals: list) -> bytes:
    return struct.pack(f"={len(vals)}{fmt}", *vals)


def strings(vals: list[str]) -> tuple[list[str], bytes]:
    """A string column as the core sends it: distinct values in order of first
    appearance, one u32 index per row."""
    distinct = list(dict.fromkeys(vals))
    return distinct, packed("I", [distinct.index(v) for v in vals])


def columns(n: int = 8) -> list:
    """One column of every dtype, ``n`` rows (edge values first), as the core sends them."""
    f = (FLOATS * n)[:n]
    u = ([0, 1, U64_MAX, 2**53 + 1] * n)[:n]
    i = ([I64_MIN, -1, 0, I64_MAX] * n)[:n]
    b = ([True, False, False] * n)[:n]
    s = (["a", "", "é→ü", "x" * 100] * n)[:n]
    return [("f", "f64", packed("d", f)), ("u", "u64", packed("Q", u)), ("i", "i64", packed("q", i)), ("b", "bool", packed("?", b)), ("s", "str", strings(s))]


def frame_from_lists(cols: list) -> pl.DataFrame:
    """The frame the old per-value path built: polars from Python lists."""
    return pl.DataFrame({name: pl.Series(name, values(ty, v), dtype=DTYPES[ty]) for name, ty, v in cols})


def test_values_decode_every_dtype_exactly():
    cols = {name: values(ty, v) for name, ty, v in columns()}
    assert [struct.pack("=d", x) for x in cols["f"]] == [struct.pack("=d", x) for x in FLOATS]
    assert cols["u"] == [0, 1, U64_MAX, 2**53 + 1] * 2
    assert cols["i"] == [I64_MIN, -1, 0, I64_MAX] * 2
    assert cols["b"] == [True, False, False, True, False, False, True, False]
    assert all(type(x) is bool for x in cols["b"])
    assert cols["s"] == ["a", "", "é→ü", "x" * 100] * 2


def test_frame_has_the_dtypes_order_and_bits_of_the_old_path():
    df = frame(columns())
    assert df.columns == ["f", "u", "i", "b", "s"]
    assert df.dtypes == [pl.Float64, pl.UInt64, pl.Int64, pl.Boolean, pl.Utf8]
    assert df.null_count().row(0) == (0, 0, 0, 0, 0)  # NaN stays NaN, not null
    assert df["f"].to_numpy().tobytes() == packed("d", FLOATS)
    assert df["u"].to_list() == [0, 1, U64_MAX, 2**53 + 1] * 2
    assert_frame_equal(df, frame_from_lists(columns()), check_exact=True)


@pytest.mark.parametrize("n", [0, 1, 999, 1000, 5000])  # both sides of _GATHER_FROM_ROWS
def test_frame_and_rows_agree_for_any_length(n):
    df = frame(columns(n))
    assert df.height == n and df.dtypes == [pl.Float64, pl.UInt64, pl.Int64, pl.Boolean, pl.Utf8]
    assert_frame_equal(df, frame_from_lists(columns(n)), check_exact=True)
    assert rows(columns(n)) == _frame_rows(df)


def test_a_table_without_columns():
    assert frame([]).shape == (0, 0)
    assert rows([]) == []


def test_json_rows_turn_nan_and_inf_into_none():
    r = rows(columns())
    assert [row["f"] for row in r] == [0.0, -0.0, 1.5, -2.25e300, 5e-324, None, None, None]


def test_the_core_sends_numeric_columns_as_buffers():
    """Through the extension: every numeric column is a buffer of 8 (bool: 1) bytes per
    row; the largest u64 seed and NaN survive both paths."""
    res = aqmlab.run(EXAMPLES / "mm1.toml", seed=U64_MAX, set={"duration": "1s"})
    raw = res._raw
    for _, cols in raw:
        heights = set()
        for _, ty, v in cols:
            if ty == "str":
                distinct, codes = v
                assert isinstance(distinct, list) and len(set(distinct)) == len(distinct)
                assert isinstance(codes, bytes) and len(codes) % 4 == 0
                heights.add(len(codes) // 4)
            else:
                assert isinstance(v, bytes) and len(v) % WIDTH[ty] == 0
                heights.add(len(v) // WIDTH[ty])
        assert len(heights) <= 1
    as_json = res.to_dict()
    assert as_json["summary"]["seed"] == U64_MAX
    assert res.summary["seed"].to_list() == [U64_MAX] and res.summary["seed"].dtype == pl.UInt64
    assert math.isnan(res.flows["completion_s"][0]) and as_json["flows"][0]["completion_s"] is None


def test_bool_columns_from_the_core():
    """The video frames table has the core's only bool columns."""
    res = aqmlab.run(EXAMPLES / "video-rb-rio.toml", set={"duration": "12s"})
    cols = {name: (ty, v) for name, ty, v in dict(res._raw)["frames"]}
    ty, sent = cols["sent"]
    assert ty == "bool" and set(sent) <= {0, 1} and 0 in set(cols["decodable"][1])
    assert res.frames["sent"].dtype == pl.Boolean and res.frames["sent"].to_list() == [bool(x) for x in sent]


def test_parquet_files_hold_the_tables_and_their_row_counts(tmp_path):
    """What a sweep worker sends its driver: each table's Parquet file contents."""
    res = aqmlab.run(EXAMPLES / "mm1.toml", set={"duration": "1s"})
    files = res.parquet_files()
    assert list(files) == list(res.tables)
    for name, (n, data) in files.items():
        back = pl.read_parquet(io.BytesIO(data))
        assert n == res.tables[name].height
        assert_frame_equal(back, res.tables[name], check_exact=True)
    written = res.write_parquet(tmp_path)
    assert [p.read_bytes() for p in written] == [data for _, data in files.values()]
