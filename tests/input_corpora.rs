//! Files from other projects' public test corpora that other readers read, read through the same reader: a Parquet column chunk whose `dictionary_page_offset` is 0 (old parquet-mr), a Parquet GZIP page made of several gzip members (Hadoop's codec), and a BIFF8 workbook whose CODEPAGE record says 1252 (calamine's own test file).

use msgbatch::campaign::{Encoding, InputFormat};
use msgbatch::input::{self, ColumnSpec, RawRow};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

/// Every row of `file` (its `sheet`, else the first) with `spec`; the reader's refusal fails the test.
fn rows(file: &str, format: InputFormat, sheet: Option<&str>, spec: &ColumnSpec) -> Vec<RawRow> {
    let mut source = input::open_sheet(&fixture(file), format, Encoding::Auto, sheet, spec)
        .unwrap_or_else(|e| panic!("{file}: {e}"));
    let mut rows = Vec::new();
    while let Some(batch) = source.next_batch(100).unwrap_or_else(|e| panic!("{file}: {e}")) {
        rows.extend(batch);
    }
    for row in &rows {
        assert_eq!(row.unreadable, None, "{file}: row {}", row.row);
    }
    rows
}

fn phone_only(column: &str) -> ColumnSpec {
    ColumnSpec {
        phone: column.into(),
        name: None,
        vars: Vec::new(),
    }
}

/// The phone column's values, as text.
fn phones(rows: &[RawRow]) -> Vec<String> {
    rows.iter()
        .map(|row| row.phone.as_deref().expect("every value is there").to_string())
        .collect()
}

#[test]
fn a_dictionary_page_offset_of_zero_reads_the_dictionary_where_the_chunk_starts() {
    // apache/parquet-testing data/dict-page-offset-zero.parquet (parquet-mr 1.12 for Dremio): one
    // INT32 column of 39 rows, all 1552 (pyarrow), dictionary encoded, its chunk's
    // dictionary_page_offset written as 0 although the dictionary page starts at byte 4.
    let rows = rows(
        "dict-page-offset-zero.parquet",
        InputFormat::Parquet,
        None,
        &phone_only("l_partkey"),
    );
    assert_eq!(
        rows.iter().map(|r| r.row).collect::<Vec<_>>(),
        (2..=40).collect::<Vec<u64>>()
    );
    assert_eq!(phones(&rows), vec!["1552".to_string(); 39]);
}

#[test]
fn a_gzip_page_of_several_members_reads_every_member() {
    // apache/parquet-testing data/concatenated_gzip_members.parquet: one UINT_64 column of 513
    // rows, 1 to 513 (pyarrow), in one GZIP data page whose compressed bytes are several gzip
    // members one after another, as Hadoop's GzipCodec writes them. A reader that stops at the
    // first member finds the page short.
    let rows = rows(
        "concatenated_gzip_members.parquet",
        InputFormat::Parquet,
        None,
        &phone_only("long_col"),
    );
    assert_eq!(
        rows.iter().map(|r| r.row).collect::<Vec<_>>(),
        (2..=514).collect::<Vec<u64>>()
    );
    assert_eq!(phones(&rows), (1..=513).map(|n: u64| n.to_string()).collect::<Vec<_>>());
}

#[test]
fn a_biff8_workbook_that_names_code_page_1252_reads_its_texts_as_unicode() {
    // tafia/calamine tests/sheet_name_parsing.xls: a BIFF8 workbook whose CODEPAGE record says
    // 1252; BIFF8 texts are UTF-16 (8-bit ones being its first 256 characters) whatever that
    // record says. xlrd reads one sheet, "Sheet1", and one row: these seven headers.
    let spec = ColumnSpec {
        phone: "Titel".into(),
        name: Some("Orginaltitel".into()),
        vars: ["År", "Regissör", "Ditt betyg", "Datum", "IMDB#"]
            .map(String::from)
            .to_vec(),
    };
    for sheet in [None, Some("Sheet1")] {
        let rows = rows("sheet_name_parsing.xls", InputFormat::Xls, sheet, &spec);
        assert!(rows.is_empty(), "{sheet:?}: a header and no recipient");
    }
}
