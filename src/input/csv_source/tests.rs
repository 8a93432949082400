//! Unit tests of the CSV reader: encodings, quotes, ragged rows, NULs, the field cap and records that never end.

use super::super::tests::spec;
use super::*;
use std::io::Write;

fn open_bytes(
    bytes: &[u8],
    encoding: Encoding,
    max_field: usize,
) -> (tempfile::NamedTempFile, Result<CsvRows, InputError>) {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(bytes).unwrap();
    let rows = CsvRows::open(file.path(), encoding, &spec(), max_field);
    (file, rows)
}

fn read_all_capped(bytes: &[u8], encoding: Encoding, max_field: usize) -> Result<Vec<RawRow>, InputError> {
    let (_file, rows) = open_bytes(bytes, encoding, max_field);
    let mut rows = rows?;
    let mut all = Vec::new();
    while let Some(batch) = rows.next_batch(2)? {
        all.extend(batch);
    }
    Ok(all)
}

fn read_all(bytes: &[u8], encoding: Encoding) -> (Vec<RawRow>, &'static str) {
    let (_file, rows) = open_bytes(bytes, encoding, super::super::DEFAULT_MAX_FIELD_BYTES);
    let mut rows = rows.unwrap();
    let mut all = Vec::new();
    while let Some(batch) = rows.next_batch(2).unwrap() {
        all.extend(batch);
    }
    (all, rows.encoding())
}

fn not_text(column: &str, detail: &str) -> Option<Box<Unreadable>> {
    Some(Box::new(Unreadable::NotText {
        column: column.into(),
        detail: detail.into(),
    }))
}

#[test]
fn bom_is_skipped_and_quoted_fields_keep_commas_and_newlines() {
    let text = "\u{FEFF}name,phone,order\n\"Kim, Minsu\",010-1234-5678,\"A\nB\"\nLee,01000000001,C\n";
    let (rows, encoding) = read_all(text.as_bytes(), Encoding::Auto);
    assert_eq!(encoding, "utf-8 (BOM)");
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].name.as_deref(), Some("Kim, Minsu"));
    assert_eq!(rows[0].vars[0].as_deref(), Some("A\nB"));
    assert_eq!(rows[0].unreadable, None);
    // The first record spans lines 2 and 3 and is one spreadsheet row: Lee is on row 3, line 4.
    assert_eq!((rows[0].row, rows[1].row), (2, 3));
}

#[test]
fn cp949_is_detected_and_decoded() {
    let text = "name,phone,order\n김민수,01012345678,주문1\n";
    let (bytes, _, _) = encoding_rs::EUC_KR.encode(text);
    let (rows, encoding) = read_all(&bytes, Encoding::Auto);
    assert_eq!(encoding, "cp949");
    assert_eq!(rows[0].name.as_deref(), Some("김민수"));
    assert_eq!(rows[0].vars[0].as_deref(), Some("주문1"));
}

#[test]
fn a_missing_column_is_named() {
    let (_file, rows) = open_bytes(b"name,mobile\nx,1\n", Encoding::Auto, 1024);
    let error = rows.err().unwrap().to_string();
    assert!(error.contains("\"phone\"") && error.contains("mobile"), "{error}");
}

#[test]
fn invalid_utf8_in_a_declared_utf8_file_marks_the_column() {
    let (rows, _) = read_all(b"name,phone,order\n\xB1\xE8,01012345678,x\n", Encoding::Utf8);
    assert_eq!(rows[0].unreadable, not_text("name", "bytes that are not UTF-8 text"));
    assert_eq!(rows[0].name, None);
}

#[test]
fn latin1_bytes_read_as_cp949_are_not_text_in_their_column_only() {
    // "José" in Latin-1: 0xE9 then "," is no CP949 character.
    let (rows, encoding) = read_all(
        b"name,phone,order\nJos\xE9,01012345678,A1\nKim,01012345679,A2\n",
        Encoding::Auto,
    );
    assert_eq!(encoding, "cp949");
    assert_eq!(
        rows[0].unreadable,
        not_text("name", "bytes that are not CP949 (EUC-KR) text")
    );
    assert_eq!(rows[0].phone.as_deref(), Some("01012345678"));
    assert_eq!(rows[1].unreadable, None);
}

#[test]
fn a_nul_in_a_mapped_field_is_not_text_and_in_another_field_harmless() {
    let (rows, _) = read_all(
        b"name,phone,order,memo\nK\0im,01012345678,A1,x\nLee,01012345679,A2,\0\n",
        Encoding::Auto,
    );
    assert_eq!(rows[0].unreadable, not_text("name", "contains a NUL byte"));
    assert_eq!(rows[1].unreadable, None);
    assert_eq!(rows[1].name.as_deref(), Some("Lee"));
}

#[test]
fn ragged_rows_are_marked_with_their_counts_and_the_rows_after_them_still_read() {
    let (rows, _) = read_all(
        b"name,phone,order\nKim,01012345678\nLee,Jr,01012345679,A2\nPark,01012345670,A3\n",
        Encoding::Auto,
    );
    assert_eq!(rows.len(), 3);
    let ragged = |fields, column: &str| {
        Some(Box::new(Unreadable::Ragged {
            fields,
            expected: 3,
            column: column.into(),
        }))
    };
    assert_eq!(rows[0].unreadable, ragged(2, "order"));
    assert_eq!(rows[1].unreadable, ragged(4, "column 4 (beyond the header)"));
    assert_eq!(rows[2].unreadable, None);
    assert_eq!(rows[2].row, 4);
}

#[test]
fn a_field_over_the_cap_in_a_record_that_ends_is_rejected_as_a_row() {
    let long = "x".repeat(100);
    let text = format!("name,phone,order\nKim,01012345678,{long}\nLee,01012345679,A2\n");
    let rows = read_all_capped(text.as_bytes(), Encoding::Auto, 64).unwrap();
    assert_eq!(
        rows[0].unreadable,
        Some(Box::new(Unreadable::FieldTooLarge {
            column: "order".into(),
            bytes: 100,
            limit: 64
        }))
    );
    assert_eq!(rows[0].vars.as_slice(), [None]);
    assert_eq!(rows[1].unreadable, None);
}

#[test]
fn a_quote_never_closed_refuses_the_file_at_the_row_and_column_it_opened() {
    let mut text = String::from("name,phone,order\n");
    for i in 1..=20 {
        let name = if i == 10 { "\"Kim".to_string() } else { format!("N{i}") };
        text.push_str(&format!("{name},0101234{i:04},A{i}\n"));
    }
    let error = read_all_capped(text.as_bytes(), Encoding::Auto, 1 << 20).unwrap_err();
    assert!(
        matches!(&error, InputError::UnbalancedQuote { row: 11, line: 11, column, .. } if column == "name"),
        "{error}"
    );
    assert!(error.to_string().contains("never closed"), "{error}");
}

#[test]
fn a_quote_that_closes_lines_later_before_text_refuses_the_file() {
    let text = "name,phone,order\nKim,01012345678,\"A1\nLee,01012345679,\"A2\"\nPark,01012345670,A3\n";
    let error = read_all_capped(text.as_bytes(), Encoding::Auto, 1 << 20).unwrap_err();
    assert!(
        matches!(&error, InputError::UnbalancedQuote { row: 2, line: 2, column, .. } if column == "order"),
        "{error}"
    );
    assert!(error.to_string().contains("closes on line 3"), "{error}");
}

#[test]
fn a_quote_never_closed_in_the_header_refuses_the_file() {
    let text = "phone,name,order,\"memo\n01012345678,Kim,A1,x\n01012345679,Lee,A2,y\n";
    let (_file, rows) = open_bytes(text.as_bytes(), Encoding::Auto, 1 << 20);
    let error = rows.err().unwrap().to_string();
    assert!(
        error.contains("row 1: the header (line 1), its column 4") && error.contains("never closed"),
        "{error}"
    );
}

#[test]
fn a_record_that_never_ends_refuses_the_file_with_memory_bounded() {
    let mut text = b"name,phone,order\nKim,01012345678,\"".to_vec();
    text.extend(std::iter::repeat_n(b'x', 10_000));
    let error = read_all_capped(&text, Encoding::Auto, 1000).unwrap_err();
    assert!(
        matches!(&error, InputError::FieldTooLarge { row: 2, column, .. } if column == "order"),
        "{error}"
    );
    assert!(error.to_string().contains("never closed"), "{error}");
}

#[test]
fn a_header_that_never_ends_refuses_the_file() {
    let (_file, rows) = open_bytes(&[0u8; 5000], Encoding::Auto, 1000);
    let error = rows.err().unwrap();
    assert!(
        matches!(error, InputError::HeaderTooLong { limit: 2000, .. }),
        "{error}"
    );
}

#[test]
fn the_control_byte_test_agrees_with_a_plain_scan() {
    for length in 0..40 {
        for at in 0..length {
            for byte in [0u8, 9, 10, 13, 14, 0x80, 0xFF, b'a'] {
                let mut bytes = vec![b'z'; length];
                bytes[at] = byte;
                assert_eq!(has_control_byte(&bytes), byte < 0x0E, "{bytes:?}");
            }
        }
    }
}
