//! Parquet column types: which ones a recipients column may have (checked on the schema, before any row is read), and the text each value becomes.
//!
//! Text forms: integers and decimals exactly (a phone stored as a number lost its leading zero,
//! which normalisation restores), whole floats without a fraction, a float32 as the shortest text
//! that reads back as that float32, booleans `true`/`false`, dates `YYYY-MM-DD`, timestamps ISO
//! 8601 in Asia/Seoul (`2026-11-23T09:30:00+09:00`: a timestamp without a time zone is taken as
//! Seoul wall-clock time, one with a time zone, or annotated the legacy way, is converted; INT96
//! from its Julian day and time of day, whatever the year), times `HH:MM:SS[.fff]`, durations
//! ISO 8601 (`PT1H30M`), binary as the UTF-8 text it holds.

use super::{text_problem, FieldText};
use crate::campaign::quiet::kst;
use chrono::{DateTime, FixedOffset, NaiveDate, NaiveDateTime, NaiveTime};
use compact_str::ToCompactString;
use polars::prelude::*;

/// One value as text (`None`: empty), or why it has no text form.
pub type Cell = Result<Option<FieldText>, &'static str>;

/// How a column's values become text, where the Arrow type it is read as does not say it all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnReading {
    /// As its Arrow type says.
    Typed,
    /// INT96 timestamps, read as their 12 bytes (see [`int96_text`]).
    Int96Timestamp,
}

/// Whether a column of `dtype` is one text value per row.
pub fn readable(dtype: &ArrowDataType) -> bool {
    use ArrowDataType as A;
    match dtype {
        A::Null
        | A::Boolean
        | A::Int8
        | A::Int16
        | A::Int32
        | A::Int64
        | A::UInt8
        | A::UInt16
        | A::UInt32
        | A::UInt64
        | A::Float32
        | A::Float64
        | A::Date32
        | A::Date64
        | A::Timestamp(..)
        | A::Time32(_)
        | A::Time64(_)
        | A::Duration(_)
        | A::Utf8
        | A::LargeUtf8
        | A::Utf8View
        | A::Binary
        | A::LargeBinary
        | A::BinaryView
        | A::FixedSizeBinary(_) => true,
        // polars holds decimals in 128 bits: 38 digits.
        A::Decimal(precision, _)
        | A::Decimal32(precision, _)
        | A::Decimal64(precision, _)
        | A::Decimal256(precision, _) => *precision <= 38,
        // Categoricals (pandas, polars) are dictionaries of text.
        A::Dictionary(_, values, _) => matches!(values.as_ref(), A::Utf8 | A::LargeUtf8 | A::Utf8View),
        _ => false,
    }
}

/// A type as people who wrote the file would name it (`struct<a: int64>`, `list<string>`).
pub fn type_name(dtype: &ArrowDataType) -> String {
    use ArrowDataType as A;
    let inner = |field: &ArrowField| type_name(&field.dtype);
    match dtype {
        A::Struct(fields) => format!(
            "struct<{}>",
            fields
                .iter()
                .map(|f| format!("{}: {}", f.name, inner(f)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        A::List(field) | A::LargeList(field) => {
            format!("list<{}>", inner(field))
        }
        A::FixedSizeList(field, size) => format!("list<{}>[{size}]", inner(field)),
        A::Map(field, _) => format!("map<{}>", inner(field)),
        A::Dictionary(_, values, _) => format!("dictionary<{}>", type_name(values)),
        A::Decimal(p, s) | A::Decimal32(p, s) | A::Decimal64(p, s) | A::Decimal256(p, s) => {
            format!("decimal({p}, {s})")
        }
        A::Float16 => "float16".into(),
        A::Utf8 | A::LargeUtf8 | A::Utf8View => "string".into(),
        A::Extension(extension) => format!("extension {}", extension.name),
        other => format!("{other:?}").to_lowercase(),
    }
}

/// The values of a column read through polars, in row order (a text column is read by
/// [`each_text`] itself).
fn column_text(column: &Column) -> PolarsResult<Vec<Cell>> {
    let text = |value: Option<String>| Ok(value.map(FieldText::from));
    let number = |value: Option<i64>| Ok(value.map(|n| n.to_compact_string()));
    Ok(match column.dtype() {
        DataType::Null => vec![Ok(None); column.len()],
        DataType::Boolean => column
            .bool()?
            .iter()
            .map(|v| Ok(v.map(|b| FieldText::const_new(if b { "true" } else { "false" }))))
            .collect(),
        // Above i64::MAX a cast to i64 would lose the value.
        DataType::UInt64 => column
            .u64()?
            .iter()
            .map(|v| Ok(v.map(|n| n.to_compact_string())))
            .collect(),
        dtype if dtype.is_integer() => column.cast(&DataType::Int64)?.i64()?.iter().map(number).collect(),
        // Not widened to a float64 first: 19.99 as a float32 is 19.989999771118164 as a float64.
        DataType::Float32 => column.f32()?.iter().map(|v| Ok(v.map(float32_text))).collect(),
        dtype if dtype.is_float() => column
            .cast(&DataType::Float64)?
            .f64()?
            .iter()
            .map(|v| text(v.map(float_text)))
            .collect(),
        DataType::Decimal(_, scale) => {
            let scale = *scale;
            column
                .decimal()?
                .physical()
                .iter()
                .map(|v| text(v.map(|n| decimal_text(n, scale))))
                .collect()
        }
        DataType::Date => physical(column, |days| date_text(days as i32))?,
        DataType::Datetime(unit, zone) => {
            let (unit, zoned) = (*unit, zone.is_some());
            physical(column, |value| timestamp_text(value, unit, zoned))?
        }
        DataType::Duration(unit) => {
            let unit = *unit;
            physical(column, |value| Some(duration_text(value, unit)))?
        }
        DataType::Time => physical(column, time_text)?,
        DataType::Binary => column.binary()?.iter().map(binary_text).collect(),
        DataType::BinaryOffset => column.binary_offset()?.iter().map(binary_text).collect(),
        _ => column.cast(&DataType::String)?.str()?.iter().map(text_cell).collect(),
    })
}

/// Hands each value of a column, as [`column_text`] has it (or as `reading` says), to `each` with
/// its index; a text column (the usual one) without first gathering its values in a vector of
/// their own.
pub fn each_text(column: &Column, reading: ColumnReading, mut each: impl FnMut(usize, Cell)) -> PolarsResult<()> {
    if reading == ColumnReading::Int96Timestamp {
        for (index, value) in column.binary()?.iter().enumerate() {
            each(
                index,
                value.map_or(Ok(None), |bytes| {
                    int96_text(bytes).map(|text| Some(FieldText::from(text)))
                }),
            );
        }
    } else if column.dtype() == &DataType::String {
        use polars_arrow::array::Array;
        // Array by array: a column without a missing value skips the validity of each one.
        let mut index = 0;
        for array in column.str()?.downcast_iter() {
            if array.null_count() == 0 {
                for value in array.values_iter() {
                    each(index, checked(value));
                    index += 1;
                }
            } else {
                for value in array.iter() {
                    each(index, text_cell(value));
                    index += 1;
                }
            }
        }
    } else {
        for (index, cell) in column_text(column)?.into_iter().enumerate() {
            each(index, cell);
        }
    }
    Ok(())
}

fn binary_text(value: Option<&[u8]>) -> Cell {
    match value.map(std::str::from_utf8) {
        None => Ok(None),
        Some(Ok(text)) => checked(text),
        Some(Err(_)) => Err("binary that is not UTF-8 text"),
    }
}

/// A value of a text column: absent, or checked.
fn text_cell(value: Option<&str>) -> Cell {
    value.map_or(Ok(None), checked)
}

fn checked(value: &str) -> Cell {
    match text_problem(value) {
        Some(problem) => Err(problem),
        None => Ok(Some(super::field_text(value))),
    }
}

/// Values of a temporal column from its integers, through `format` (`None`: out of range).
fn physical(column: &Column, format: impl Fn(i64) -> Option<String>) -> PolarsResult<Vec<Cell>> {
    let integers = column.to_physical_repr().cast(&DataType::Int64)?;
    Ok(integers
        .i64()?
        .iter()
        .map(|v| match v {
            None => Ok(None),
            Some(value) => format(value)
                .map(|text| Some(FieldText::from(text)))
                .ok_or("a date or time out of range"),
        })
        .collect())
}

/// The shortest text that reads back as the same float32 (Rust's `Display`, which writes a whole
/// one without a fraction), as a float32 was most likely written: `19.99`, `0.1`. A zero is `0`,
/// whatever its sign, as in [`float_text`].
fn float32_text(value: f32) -> FieldText {
    if value == 0.0 {
        FieldText::const_new("0")
    } else {
        compact_str::format_compact!("{value}")
    }
}

pub(super) fn float_text(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{}", value as i64)
    } else {
        value.to_string()
    }
}

/// `value × 10^-scale` written out exactly.
fn decimal_text(value: i128, scale: usize) -> String {
    let digits = value.unsigned_abs().to_string();
    let sign = if value < 0 { "-" } else { "" };
    if scale == 0 {
        return format!("{sign}{digits}");
    }
    let digits = format!("{digits:0>width$}", width = scale + 1);
    let (whole, fraction) = digits.split_at(digits.len() - scale);
    format!("{sign}{whole}.{fraction}")
}

fn date_text(days_since_epoch: i32) -> Option<String> {
    let date = NaiveDate::from_ymd_opt(1970, 1, 1)?
        .checked_add_signed(chrono::Duration::try_days(days_since_epoch.into())?)?;
    Some(day_text(date))
}

pub(super) fn day_text(date: NaiveDate) -> String {
    date.format("%Y-%m-%d").to_string()
}

fn per_second(unit: TimeUnit) -> i64 {
    match unit {
        TimeUnit::Nanoseconds => 1_000_000_000,
        TimeUnit::Microseconds => 1_000_000,
        TimeUnit::Milliseconds => 1_000,
    }
}

/// Seconds and nanoseconds of `value` in `unit`.
fn split_seconds(value: i64, unit: TimeUnit) -> (i64, u32) {
    let per_second = per_second(unit);
    let nanos = value.rem_euclid(per_second) * (1_000_000_000 / per_second);
    (value.div_euclid(per_second), nanos as u32)
}

/// A zoned timestamp counts from the UTC epoch and is shown in Seoul; one without a zone is a
/// wall-clock time, taken as Seoul's.
fn timestamp_text(value: i64, unit: TimeUnit, zoned: bool) -> Option<String> {
    let (seconds, nanos) = split_seconds(value, unit);
    let instant = DateTime::from_timestamp(seconds, nanos)?;
    if zoned {
        Some(iso_text(instant.with_timezone(&kst())))
    } else {
        seoul_wall_clock_text(instant.naive_utc())
    }
}

/// The Julian day of 0000-12-31, the day before the first of the common era (from which chrono
/// counts days): 1970-01-01 is Julian day 2,440,588 and common-era day 719,163.
const JULIAN_DAY_OF_COMMON_ERA_DAY_ZERO: i64 = 2_440_588 - 719_163;
const NANOS_PER_DAY: u64 = 86_400 * 1_000_000_000;

/// An INT96 timestamp (Impala, Hive, Spark): the nanoseconds of the day in its first 8 bytes and
/// the Julian day in its last 4, little-endian. Made from the day and the time of day, never
/// through a 64-bit count of nanoseconds, which ends in 2262 and begins in 1677 (Spark's
/// 9999-12-31, a birth date in 1676). Without a zone, as Arrow and pandas read it: taken as
/// Seoul wall-clock time, like a timestamp without a time zone.
fn int96_text(bytes: &[u8]) -> Result<String, &'static str> {
    let Ok(bytes) = <&[u8; 12]>::try_from(bytes) else {
        return Err("an INT96 value that is not 12 bytes");
    };
    let nanos = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"));
    let day = u32::from_le_bytes(bytes[8..].try_into().expect("4 bytes"));
    if nanos >= NANOS_PER_DAY {
        return Err("an INT96 timestamp whose time of day is past 24 hours");
    }
    let date = i32::try_from(i64::from(day) - JULIAN_DAY_OF_COMMON_ERA_DAY_ZERO)
        .ok()
        .and_then(NaiveDate::from_num_days_from_ce_opt);
    let time =
        NaiveTime::from_num_seconds_from_midnight_opt((nanos / 1_000_000_000) as u32, (nanos % 1_000_000_000) as u32);
    date.zip(time)
        .and_then(|(date, time)| seoul_wall_clock_text(date.and_time(time)))
        .ok_or("a date or time out of range")
}

/// A time without a zone (a naive Parquet timestamp, a spreadsheet date-time), taken as Seoul's.
pub(super) fn seoul_wall_clock_text(wall_clock: NaiveDateTime) -> Option<String> {
    Some(iso_text(wall_clock.and_local_timezone(kst()).single()?))
}

fn iso_text(seoul: DateTime<FixedOffset>) -> String {
    seoul.format("%Y-%m-%dT%H:%M:%S%.f%:z").to_string()
}

pub(super) fn time_text(nanos_since_midnight: i64) -> Option<String> {
    let (seconds, nanos) = split_seconds(nanos_since_midnight, TimeUnit::Nanoseconds);
    let time = NaiveTime::from_num_seconds_from_midnight_opt(u32::try_from(seconds).ok()?, nanos)?;
    Some(time.format("%H:%M:%S%.f").to_string())
}

/// ISO 8601: `P2DT3H4M5.5S`, `-PT1.5S`, `PT0S`.
pub(super) fn duration_text(value: i64, unit: TimeUnit) -> String {
    let per_second = per_second(unit) as u64;
    let magnitude = value.unsigned_abs();
    let (mut seconds, fraction) = (magnitude / per_second, magnitude % per_second);
    let days = seconds / 86_400;
    seconds %= 86_400;
    let (hours, minutes, seconds) = (seconds / 3600, seconds % 3600 / 60, seconds % 60);
    let mut out = String::from(if value < 0 { "-P" } else { "P" });
    if days > 0 {
        out.push_str(&format!("{days}D"));
    }
    if hours + minutes + seconds + fraction > 0 || days == 0 {
        out.push('T');
    }
    if hours > 0 {
        out.push_str(&format!("{hours}H"));
    }
    if minutes > 0 {
        out.push_str(&format!("{minutes}M"));
    }
    if seconds > 0 || fraction > 0 || (days == 0 && hours == 0 && minutes == 0) {
        out.push_str(&seconds.to_string());
        if fraction > 0 {
            let width = per_second.ilog10() as usize;
            let digits = format!("{fraction:0width$}");
            out.push('.');
            out.push_str(digits.trim_end_matches('0'));
        }
        out.push('S');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_are_written_exactly() {
        assert_eq!(decimal_text(1020001001, 0), "1020001001");
        assert_eq!(decimal_text(1500000, 2), "15000.00");
        assert_eq!(decimal_text(-5, 2), "-0.05");
        assert_eq!(decimal_text(i128::MIN, 3).len(), 41);
    }

    #[test]
    fn timestamps_are_seoul_time() {
        let ms = TimeUnit::Milliseconds;
        // 2026-11-23T00:30:00Z
        let instant = 1_795_393_800_000;
        assert_eq!(timestamp_text(instant, ms, true).unwrap(), "2026-11-23T09:30:00+09:00");
        assert_eq!(timestamp_text(instant, ms, false).unwrap(), "2026-11-23T00:30:00+09:00");
        assert_eq!(
            timestamp_text(-1, TimeUnit::Microseconds, true).unwrap(),
            "1970-01-01T08:59:59.999999+09:00"
        );
    }

    fn int96(julian_day: u32, nanos_of_day: u64) -> [u8; 12] {
        let mut bytes = [0u8; 12];
        bytes[..8].copy_from_slice(&nanos_of_day.to_le_bytes());
        bytes[8..].copy_from_slice(&julian_day.to_le_bytes());
        bytes
    }

    #[test]
    fn int96_timestamps_are_read_from_their_julian_day_and_time_of_day() {
        assert_eq!(int96_text(&int96(2_440_588, 0)).unwrap(), "1970-01-01T00:00:00+09:00");
        // Spark's "no end": beyond the last nanosecond count, 2262-04-11.
        assert_eq!(
            int96_text(&int96(5_373_484, NANOS_PER_DAY - 1)).unwrap(),
            "9999-12-31T23:59:59.999999999+09:00"
        );
        // Before the first one, 1677-09-21.
        assert_eq!(
            int96_text(&int96(2_333_344, 34_200_000_000_000)).unwrap(),
            "1676-05-17T09:30:00+09:00"
        );
        assert_eq!(int96_text(&int96(u32::MAX, 0)), Err("a date or time out of range"));
        assert_eq!(
            int96_text(&int96(2_440_588, NANOS_PER_DAY)),
            Err("an INT96 timestamp whose time of day is past 24 hours")
        );
        assert_eq!(int96_text(&[0; 11]), Err("an INT96 value that is not 12 bytes"));
    }

    #[test]
    fn a_float32_is_the_shortest_text_of_that_float32() {
        assert_eq!(float32_text(19.99), "19.99");
        assert_eq!(float32_text(0.1), "0.1");
        assert_eq!(float32_text(2500.5), "2500.5");
        assert_eq!(float32_text(16_777_216.0), "16777216");
        // 1020001001 is not a float32: 1020001024 is, whose shortest text is this.
        assert_eq!(float32_text(1_020_001_001.0), "1020001000");
        assert_eq!(float32_text(-0.0), "0");
        assert_eq!(float32_text(-1.5e-7), "-0.00000015");
    }

    proptest::proptest! {
        #[test]
        fn an_int96_timestamp_reads_as_its_nanosecond_count_wherever_that_count_holds(
            // Days around the 64-bit nanosecond range (±106,751 days from 1970) and any day.
            day in proptest::prop_oneof![2_333_000u32..2_548_000, proptest::num::u32::ANY],
            nanos in proptest::prop_oneof![0..NANOS_PER_DAY, proptest::num::u64::ANY],
        ) {
            let text = int96_text(&int96(day, nanos));
            let count = (i64::from(day) - 2_440_588)
                .checked_mul(NANOS_PER_DAY as i64)
                .and_then(|n| n.checked_add(i64::try_from(nanos).ok()?));
            match count {
                Some(count) if nanos < NANOS_PER_DAY => {
                    proptest::prop_assert_eq!(text.ok(), timestamp_text(count, TimeUnit::Nanoseconds, false));
                }
                _ if nanos >= NANOS_PER_DAY => proptest::prop_assert!(text.is_err()),
                _ => {}
            }
        }

        #[test]
        fn a_float32_text_reads_back_as_the_same_float32(value in proptest::num::f32::NORMAL | proptest::num::f32::SUBNORMAL | proptest::num::f32::ZERO) {
            let text = float32_text(value);
            proptest::prop_assert_eq!(text.parse::<f32>().unwrap(), value, "{}", text);
        }
    }

    #[test]
    fn dates_times_and_durations() {
        assert_eq!(date_text(0).unwrap(), "1970-01-01");
        assert_eq!(date_text(-1).unwrap(), "1969-12-31");
        assert_eq!(date_text(i32::MAX), None);
        assert_eq!(time_text(34_200_000_000_000).unwrap(), "09:30:00");
        assert_eq!(time_text(1_500_000).unwrap(), "00:00:00.001500");
        assert_eq!(duration_text(5_400, TimeUnit::Milliseconds), "PT5.4S");
        assert_eq!(duration_text(90_061_000, TimeUnit::Milliseconds), "P1DT1H1M1S");
        assert_eq!(duration_text(-1_500, TimeUnit::Milliseconds), "-PT1.5S");
        assert_eq!(duration_text(0, TimeUnit::Nanoseconds), "PT0S");
        assert_eq!(duration_text(2 * 86_400_000, TimeUnit::Milliseconds), "P2D");
    }

    #[test]
    fn a_text_column_of_several_arrays_is_read_in_order_with_its_gaps_and_problems() {
        let mut column = StringChunked::new("t".into(), &["a", "b\0c"]);
        column
            .append(&StringChunked::new("t".into(), &[None, Some("d")]))
            .unwrap();
        column.append(&StringChunked::new("t".into(), &["e"])).unwrap();
        assert_eq!(column.chunks().len(), 3);
        let mut seen = Vec::new();
        each_text(&column.into_column(), ColumnReading::Typed, |index, cell| {
            seen.push((index, cell))
        })
        .unwrap();
        let text = |value: &str| Ok(Some(FieldText::from(value)));
        assert_eq!(
            seen,
            [
                (0, text("a")),
                (1, Err("contains a NUL byte")),
                (2, Ok(None)),
                (3, text("d")),
                (4, text("e")),
            ]
        );
    }
}
