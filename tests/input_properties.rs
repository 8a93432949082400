//! Property tests of the recipients readers: the CSV reader on arbitrary bytes and the Parquet reader on generated schemas never panic, never lose or invent a row, and say why a row cannot be read.
//!
//! A bounded number of cases runs in `cargo test`; `PROPTEST_CASES=100000 cargo test --release
//! --test input_properties` runs a long search.

mod common;

use msgbatch::campaign::{Encoding, InputFormat};
use msgbatch::input::{self, ColumnSpec, InputError, RawRow};
use polars::prelude::*;
use proptest::prelude::*;
use std::io::Write;
use std::path::Path;

fn spec() -> ColumnSpec {
    ColumnSpec {
        phone: "phone".into(),
        name: Some("name".into()),
        vars: vec!["coupon".into()],
    }
}

fn read_all(mut source: Box<dyn input::RowSource>, batch: usize) -> Result<Vec<RawRow>, InputError> {
    let mut rows = Vec::new();
    while let Some(more) = source.next_batch(batch)? {
        assert!(
            !more.is_empty() && more.len() <= batch,
            "batches hold 1 to {batch} rows"
        );
        rows.extend(more);
    }
    Ok(rows)
}

// ---------------------------------------------------------------------------------------------
// CSV on arbitrary bytes.

/// Bytes that stress a CSV parser: structure characters, NULs, CP949 lead bytes, invalid UTF-8.
fn csv_body() -> impl Strategy<Value = Vec<u8>> {
    let byte = prop_oneof![
        4 => prop::sample::select(b"0123456789abc".to_vec()),
        2 => Just(b','),
        1 => Just(b'"'),
        1 => Just(b'\n'),
        1 => Just(b'\r'),
        1 => Just(0u8),
        1 => prop::sample::select(vec![0xB1u8, 0xE8, 0xEA, 0x80, 0xFF, 0xC3, 0xA9]),
        1 => any::<u8>(),
    ];
    prop::collection::vec(byte, 0..400)
}

/// CSV as tools write it, mostly: rows of three fields (sometimes two or four), quoted or not, with now and then
/// a stray quote, a NUL, a CP949 or Latin-1 byte, and CR, LF or CRLF line ends.
fn csv_rows() -> impl Strategy<Value = Vec<u8>> {
    let plain = "[0-9a-z가-힣 .-]{0,12}".prop_map(String::into_bytes);
    let quoted = "[0-9a-z,\n\r\"가 ]{0,12}".prop_map(|text| format!("\"{}\"", text.replace('"', "\"\"")).into_bytes());
    let junk = prop::collection::vec(prop::sample::select(vec![b'"', 0, 0xB1, 0xE9, b'a', b'\r']), 1..3);
    let field = prop_oneof![8 => plain, 3 => quoted, 1 => junk];
    let end = prop::sample::select(vec![&b"\n"[..], b"\r\n", b"\r"]);
    let width = prop_oneof![5 => Just(3usize), 1 => 2usize..=4];
    let fields = width.prop_flat_map(move |width| prop::collection::vec(field.clone(), width));
    let row = (fields, end).prop_map(|(fields, end)| {
        let mut row = fields.join(&b',');
        row.extend_from_slice(end);
        row
    });
    prop::collection::vec(row, 0..30).prop_map(|rows| rows.concat())
}

/// The records the csv crate finds in `text` (decoded as the reader decodes it), header excluded.
fn records_in(text: &[u8]) -> usize {
    csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(text)
        .byte_records()
        .count()
}

/// What the reader reads of `bytes`: the file decoded the way it decodes it.
fn decoded(bytes: &[u8], encoding: Encoding) -> Vec<u8> {
    match encoding {
        Encoding::Cp949 => encoding_rs::EUC_KR
            .decode_without_bom_handling(bytes)
            .0
            .into_owned()
            .into_bytes(),
        _ => bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes).to_vec(),
    }
}

fn check_csv(bytes: &[u8], encoding: Encoding, max_field: usize) -> Result<(), TestCaseError> {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(bytes).unwrap();
    let outcome = input::open_csv(file.path(), encoding, &spec(), max_field).and_then(|source| read_all(source, 7));
    let rows = match outcome {
        Ok(rows) => rows,
        // Refusals name where; none of them is an I/O failure or a panic.
        Err(error @ InputError::Read { .. }) => return Err(TestCaseError::fail(error.to_string())),
        Err(_) => return Ok(()),
    };
    prop_assert_eq!(
        rows.len(),
        records_in(&decoded(bytes, encoding)),
        "rows out equal the records in"
    );
    for (index, row) in rows.iter().enumerate() {
        prop_assert_eq!(
            row.row,
            index as u64 + 2,
            "record {} on spreadsheet row {}",
            index,
            index + 2
        );
        match &row.unreadable {
            Some(reason) => prop_assert!(!reason.column().is_empty(), "a reason names its column"),
            None => {
                prop_assert!(
                    row.phone.is_some() && row.name.is_some() && row.vars.iter().all(Option::is_some),
                    "a row without a reason has every mapped value: {:?}",
                    row
                );
                for value in row.phone.iter().chain(&row.name).chain(row.vars.iter().flatten()) {
                    prop_assert!(!value.contains('\0') && value.len() <= max_field, "{:?}", row);
                }
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(common::proptest_config(256))]

    #[test]
    fn csv_rows_out_equal_the_records_in(
        body in csv_body(),
        encoding in prop_oneof![Just(Encoding::Auto), Just(Encoding::Utf8), Just(Encoding::Cp949)],
        max_field in prop_oneof![Just(8usize), Just(64), Just(1 << 20)],
    ) {
        let mut bytes = b"phone,name,coupon\n".to_vec();
        bytes.extend_from_slice(&body);
        check_csv(&bytes, encoding, max_field)?;
    }

    #[test]
    fn csv_rows_as_tools_write_them_are_all_accounted_for(
        body in csv_rows(),
        encoding in prop_oneof![Just(Encoding::Auto), Just(Encoding::Utf8), Just(Encoding::Cp949)],
    ) {
        let mut bytes = b"phone,name,coupon\n".to_vec();
        bytes.extend_from_slice(&body);
        check_csv(&bytes, encoding, 1 << 20)?;
    }

    #[test]
    fn csv_reader_survives_any_bytes(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        check_csv(&bytes, Encoding::Auto, 16)?;
    }
}

/// What a reader made of a file: its rows, or the words of the error that refused it.
fn read_outcome(source: Result<Box<dyn input::RowSource>, InputError>) -> Result<Vec<RawRow>, String> {
    source.and_then(|source| read_all(source, 5)).map_err(|e| e.to_string())
}

/// A file with no quote in it, as most recipient lists are: text with commas, tabs and Hangul,
/// now and then a NUL, a byte that is not UTF-8, and every kind of line end, blank lines among
/// them. Its blocks are split on line breaks and commas alone, without the csv crate.
fn csv_without_quotes() -> impl Strategy<Value = Vec<u8>> {
    let text = "[0-9a-z가-힣 .,\t-]{0,10}".prop_map(String::into_bytes);
    let junk = prop::collection::vec(
        prop::sample::select(vec![0u8, 0xB1, 0xE9, 0xFF, 0xEA, b'\r', b',']),
        1..3,
    );
    let end =
        prop::sample::select(vec![&b"\n"[..], b"\r\n", b"\r", b"\n\n", b"\r\r\n", b",\n"]).prop_map(<[u8]>::to_vec);
    let piece = prop_oneof![6 => text, 1 => junk, 3 => end];
    prop::collection::vec(piece, 0..60).prop_map(|pieces| pieces.concat())
}

/// A large file read in parallel blocks reads exactly as when read in one piece: the same rows,
/// numbered the same, the same reasons, or the same refusal naming the same row and line.
fn check_blocks_read_as_one(
    bytes: &[u8],
    encoding: Encoding,
    max_field: usize,
    block: usize,
) -> Result<(), TestCaseError> {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(bytes).unwrap();
    let whole = read_outcome(input::open_csv_in_blocks(
        file.path(),
        encoding,
        &spec(),
        max_field,
        usize::MAX / 4,
    ));
    let blocks = read_outcome(input::open_csv_in_blocks(
        file.path(),
        encoding,
        &spec(),
        max_field,
        block,
    ));
    prop_assert_eq!(blocks, whole);
    Ok(())
}

proptest! {
    #![proptest_config(common::proptest_config(256))]

    #[test]
    fn csv_read_in_blocks_reads_as_in_one_piece(
        body in csv_rows(),
        header_end in prop::sample::select(vec![&b"\n"[..], b"\r\n"]),
        bom in any::<bool>(),
        encoding in prop_oneof![Just(Encoding::Auto), Just(Encoding::Utf8), Just(Encoding::Cp949)],
        max_field in prop_oneof![Just(6usize), Just(1 << 20)],
        block in 1usize..64,
    ) {
        let mut bytes = if bom { b"\xEF\xBB\xBF".to_vec() } else { Vec::new() };
        bytes.extend_from_slice(b"phone,name,coupon");
        bytes.extend_from_slice(header_end);
        bytes.extend_from_slice(&body);
        check_blocks_read_as_one(&bytes, encoding, max_field, block)?;
    }

    #[test]
    fn csv_without_quotes_read_in_blocks_reads_as_in_one_piece(
        body in csv_without_quotes(),
        encoding in prop_oneof![Just(Encoding::Auto), Just(Encoding::Utf8), Just(Encoding::Cp949)],
        max_field in prop_oneof![Just(6usize), Just(1 << 20)],
        block in 1usize..64,
    ) {
        let mut bytes = b"phone,name,coupon\n".to_vec();
        bytes.extend_from_slice(&body);
        check_blocks_read_as_one(&bytes, encoding, max_field, block)?;
    }

    #[test]
    fn csv_of_any_bytes_read_in_blocks_reads_as_in_one_piece(
        body in csv_body(),
        encoding in prop_oneof![Just(Encoding::Auto), Just(Encoding::Cp949)],
        block in 1usize..64,
    ) {
        let mut bytes = b"phone,name,coupon\n".to_vec();
        bytes.extend_from_slice(&body);
        check_blocks_read_as_one(&bytes, encoding, 1 << 20, block)?;
    }
}

// ---------------------------------------------------------------------------------------------
// Parquet on generated schemas.

/// A column type a recipients file may have.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Int64,
    UInt64,
    Int16,
    Float64,
    Text,
    Binary,
    Boolean,
    Decimal,
    Date,
    Datetime,
    DatetimeUtc,
    Time,
    Duration,
}

const KINDS: [Kind; 13] = [
    Kind::Int64,
    Kind::UInt64,
    Kind::Int16,
    Kind::Float64,
    Kind::Text,
    Kind::Binary,
    Kind::Boolean,
    Kind::Decimal,
    Kind::Date,
    Kind::Datetime,
    Kind::DatetimeUtc,
    Kind::Time,
    Kind::Duration,
];

/// A column of `kind` from `values` (`None`: null), as polars would write it.
fn column(name: &str, kind: Kind, values: &[Option<i64>]) -> Column {
    let name = PlSmallStr::from(name);
    let small = |v: &Option<i64>| v.map(|n| n.rem_euclid(30_000));
    let series = match kind {
        Kind::Int64 => Series::new(name, values),
        Kind::UInt64 => Series::new(
            name,
            values
                .iter()
                .map(|v| v.map(|n| n as u64 | (1 << 63)))
                .collect::<Vec<_>>(),
        ),
        Kind::Int16 => Series::new(
            name,
            values.iter().map(|v| small(v).map(|n| n as i16)).collect::<Vec<_>>(),
        ),
        Kind::Float64 => Series::new(
            name,
            values.iter().map(|v| v.map(|n| n as f64 / 4.0)).collect::<Vec<_>>(),
        ),
        Kind::Text => Series::new(
            name,
            values.iter().map(|v| v.map(|n| format!("값{n}"))).collect::<Vec<_>>(),
        ),
        Kind::Binary => {
            let bytes: Vec<Option<Vec<u8>>> = values.iter().map(|v| v.map(|n| n.to_string().into_bytes())).collect();
            let slices: Vec<Option<&[u8]>> = bytes.iter().map(Option::as_deref).collect();
            Series::new(name, slices)
        }
        Kind::Boolean => Series::new(name, values.iter().map(|v| v.map(|n| n % 2 == 0)).collect::<Vec<_>>()),
        Kind::Decimal => Series::new(name, values).cast(&DataType::Decimal(18, 2)).unwrap(),
        Kind::Date => Series::new(
            name,
            values.iter().map(|v| small(v).map(|n| n as i32)).collect::<Vec<_>>(),
        )
        .cast(&DataType::Date)
        .unwrap(),
        Kind::Datetime => Series::new(name, values)
            .cast(&DataType::Datetime(TimeUnit::Milliseconds, None))
            .unwrap(),
        Kind::DatetimeUtc => Series::new(name, values)
            .cast(&DataType::Datetime(TimeUnit::Microseconds, Some(TimeZone::UTC)))
            .unwrap(),
        Kind::Time => Series::new(
            name,
            values
                .iter()
                .map(|v| v.map(|n| n.rem_euclid(86_400_000_000_000)))
                .collect::<Vec<_>>(),
        )
        .cast(&DataType::Time)
        .unwrap(),
        Kind::Duration => Series::new(name, values)
            .cast(&DataType::Duration(TimeUnit::Nanoseconds))
            .unwrap(),
    };
    series.into()
}

fn write_parquet(path: &Path, mut frame: DataFrame, row_group: usize) {
    ParquetWriter::new(std::fs::File::create(path).unwrap())
        .with_row_group_size(Some(row_group))
        .finish(&mut frame)
        .unwrap();
}

/// A recipients frame of `rows` rows: `phone` (integers), `id` (the row number as text) and one
/// column of each of `kinds` (`c0`, `c1`, …, a share of nulls set by `null_share`); answers the
/// phones, the columns, and the names of the columns other than the phone.
fn generated(rows: usize, kinds: &[Kind], null_share: u32, seed: u64) -> (Vec<i64>, Vec<Column>, Vec<String>) {
    let mut state = seed | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let phones: Vec<i64> = (0..rows as i64).map(|i| 1_020_000_000 + i).collect();
    let mut columns = vec![
        Column::new("phone".into(), &phones),
        Column::new(
            "id".into(),
            (1..=rows as u64).map(|i| i.to_string()).collect::<Vec<_>>(),
        ),
    ];
    let mut names = vec!["id".to_string()];
    for (index, kind) in kinds.iter().enumerate() {
        let values: Vec<Option<i64>> = (0..rows)
            .map(|_| {
                let value = next();
                (value % 4 >= u64::from(null_share)).then_some((value >> 8) as i64 % 10_000_000_000)
            })
            .collect();
        let name = format!("c{index}");
        columns.push(column(&name, *kind, &values));
        names.push(name);
    }
    (phones, columns, names)
}

proptest! {
    #![proptest_config(common::proptest_config(24))]

    #[test]
    fn parquet_rows_come_out_all_in_order_with_their_numbers(
        rows in 0usize..400,
        kinds in prop::collection::vec(prop::sample::select(KINDS.to_vec()), 1..5),
        null_share in 0u32..4,
        seed in any::<u64>(),
        row_group in 1usize..150,
        batch in 1usize..100,
    ) {
        let (phones, columns, vars) = generated(rows, &kinds, null_share, seed);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.parquet");
        write_parquet(&path, DataFrame::new_infer_height(columns).unwrap(), row_group);
        let spec = ColumnSpec { phone: "phone".into(), name: None, vars };
        let read = read_all(input::open(&path, InputFormat::Parquet, Encoding::Auto, &spec).unwrap(), batch).unwrap();
        prop_assert_eq!(read.len(), rows);
        for (index, row) in read.iter().enumerate() {
            let number = index as u64 + 1;
            prop_assert_eq!(row.row, number + 1, "record {} on row {}, as under a header row", index, number + 1);
            prop_assert_eq!(row.vars[0].as_deref().map(String::from), Some(number.to_string()), "in order");
            prop_assert_eq!(row.phone.as_deref().map(String::from), Some(phones[index].to_string()));
            prop_assert_eq!(&row.unreadable, &None);
        }
    }

    /// Only the mapped columns are handed to polars (the footer is cut down to them): whichever
    /// are mapped, in whatever order, they read as they do when every column is.
    #[test]
    fn parquet_columns_mapped_without_the_others_read_as_they_do_beside_them(
        rows in 0usize..200,
        kinds in prop::collection::vec(prop::sample::select(KINDS.to_vec()), 1..6),
        null_share in 0u32..4,
        seed in any::<u64>(),
        row_group in 1usize..80,
        picks in prop::collection::vec(any::<prop::sample::Index>(), 1..5),
    ) {
        let (_, columns, names) = generated(rows, &kinds, null_share, seed);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.parquet");
        write_parquet(&path, DataFrame::new_infer_height(columns).unwrap(), row_group);
        let read = |vars: Vec<String>| {
            let spec = ColumnSpec { phone: "phone".into(), name: None, vars };
            read_all(input::open(&path, InputFormat::Parquet, Encoding::Auto, &spec).unwrap(), 64).unwrap()
        };
        let every = read(names.clone());
        let mut mapped: Vec<usize> = picks.iter().map(|pick| pick.index(names.len())).collect();
        let mut seen = std::collections::HashSet::new();
        mapped.retain(|&index| seen.insert(index));
        let alone = read(mapped.iter().map(|&index| names[index].clone()).collect());
        prop_assert_eq!(alone.len(), every.len());
        for (some, all) in alone.iter().zip(&every) {
            prop_assert_eq!((some.row, &some.phone, &some.unreadable), (all.row, &all.phone, &all.unreadable));
            for (position, &index) in mapped.iter().enumerate() {
                prop_assert_eq!(&some.vars[position], &all.vars[index], "{}", names[index]);
            }
        }
    }
}
