//! CSV recipients streamed with the csv crate: UTF-8 with or without BOM, or CP949, detected or declared.

use super::decode::Cp949Reader;
use super::{locate, ColumnSpec, InputError, RawRow, RowSource};
use crate::campaign::Encoding;
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

const BOM: &[u8] = b"\xEF\xBB\xBF";
const SNIFF_BYTES: usize = 64 * 1024;

pub struct CsvRows {
    path: PathBuf,
    reader: csv::Reader<Box<dyn Read + Send>>,
    phone: usize,
    name: Option<usize>,
    vars: Vec<usize>,
    record: csv::ByteRecord,
    next_row: u64,
    encoding: &'static str,
}

/// Whether `prefix` reads as UTF-8, allowing a character cut off at its end.
fn looks_like_utf8(prefix: &[u8]) -> bool {
    match std::str::from_utf8(prefix) {
        Ok(_) => true,
        Err(error) => error.error_len().is_none() && prefix.len() - error.valid_up_to() < 4,
    }
}

impl CsvRows {
    pub fn open(path: &Path, encoding: Encoding, columns: &ColumnSpec) -> Result<CsvRows, InputError> {
        let open_error = |source| InputError::Open {
            path: path.to_path_buf(),
            source,
        };
        let mut file = File::open(path).map_err(open_error)?;
        let mut prefix = vec![0u8; SNIFF_BYTES];
        let mut filled = 0;
        while filled < prefix.len() {
            match file.read(&mut prefix[filled..]).map_err(open_error)? {
                0 => break,
                n => filled += n,
            }
        }
        prefix.truncate(filled);
        let has_bom = prefix.starts_with(BOM);
        let chosen = match encoding {
            Encoding::Utf8 => Encoding::Utf8,
            Encoding::Cp949 => Encoding::Cp949,
            Encoding::Auto if has_bom || looks_like_utf8(&prefix) => Encoding::Utf8,
            Encoding::Auto => Encoding::Cp949,
        };
        let skip = if has_bom && chosen == Encoding::Utf8 {
            BOM.len() as u64
        } else {
            0
        };
        file.seek(SeekFrom::Start(skip)).map_err(open_error)?;
        let buffered = BufReader::with_capacity(256 * 1024, file);
        let (source, name): (Box<dyn Read + Send>, &'static str) = match chosen {
            Encoding::Cp949 => (Box::new(Cp949Reader::new(buffered)), "cp949"),
            _ => (Box::new(buffered), if has_bom { "utf-8 (BOM)" } else { "utf-8" }),
        };
        let mut reader = csv::ReaderBuilder::new()
            .flexible(true)
            .buffer_capacity(256 * 1024)
            .from_reader(source);
        let headers: Vec<String> = reader
            .byte_headers()
            .map_err(|e| InputError::Malformed {
                path: path.to_path_buf(),
                row: 0,
                message: format!("header: {e}"),
            })?
            .iter()
            .map(|h| String::from_utf8_lossy(h).trim().to_string())
            .collect();
        let (phone, name_index, vars) = locate(path, &headers, columns)?;
        Ok(CsvRows {
            path: path.to_path_buf(),
            reader,
            phone,
            name: name_index,
            vars,
            record: csv::ByteRecord::new(),
            next_row: 1,
            encoding: name,
        })
    }
}

impl RowSource for CsvRows {
    fn next_batch(&mut self, max: usize) -> Result<Option<Vec<RawRow>>, InputError> {
        let mut rows = Vec::with_capacity(max);
        let headers = self.reader.byte_headers().ok().cloned().unwrap_or_default();
        while rows.len() < max {
            let more = self
                .reader
                .read_byte_record(&mut self.record)
                .map_err(|e| InputError::Malformed {
                    path: self.path.clone(),
                    row: self.next_row,
                    message: e.to_string(),
                })?;
            if !more {
                break;
            }
            let mut raw = RawRow {
                row: self.next_row,
                ..RawRow::default()
            };
            self.next_row += 1;
            let record = &self.record;
            let mut field = |index: usize| -> Option<String> {
                let bytes = record.get(index)?;
                match std::str::from_utf8(bytes) {
                    Ok(text) => Some(text.to_string()),
                    Err(_) => {
                        if raw.undecodable.is_none() {
                            raw.undecodable = headers.get(index).map(|h| String::from_utf8_lossy(h).into_owned());
                        }
                        None
                    }
                }
            };
            let phone = field(self.phone);
            let name = self.name.and_then(&mut field);
            let vars = self.vars.iter().map(|&i| field(i)).collect();
            raw.phone = phone;
            raw.name = name;
            raw.vars = vars;
            rows.push(raw);
        }
        Ok((!rows.is_empty()).then_some(rows))
    }

    fn encoding(&self) -> &'static str {
        self.encoding
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn spec() -> ColumnSpec {
        ColumnSpec {
            phone: "phone".into(),
            name: Some("name".into()),
            vars: vec!["order".into()],
        }
    }

    fn read_all(bytes: &[u8], encoding: Encoding) -> (Vec<RawRow>, &'static str) {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(bytes).unwrap();
        let mut rows = CsvRows::open(file.path(), encoding, &spec()).unwrap();
        let mut all = Vec::new();
        while let Some(batch) = rows.next_batch(2).unwrap() {
            all.extend(batch);
        }
        (all, rows.encoding())
    }

    #[test]
    fn bom_is_skipped_and_quoted_fields_keep_commas_and_newlines() {
        let text = "\u{FEFF}name,phone,order\n\"Kim, Minsu\",010-1234-5678,\"A\nB\"\nLee,01000000001,C\n";
        let (rows, encoding) = read_all(text.as_bytes(), Encoding::Auto);
        assert_eq!(encoding, "utf-8 (BOM)");
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].name.as_deref(), Some("Kim, Minsu"));
        assert_eq!(rows[0].vars[0].as_deref(), Some("A\nB"));
        assert_eq!(rows[1].row, 2);
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
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(b"name,mobile\nx,1\n").unwrap();
        let error = CsvRows::open(file.path(), Encoding::Auto, &spec())
            .err()
            .unwrap()
            .to_string();
        assert!(error.contains("\"phone\"") && error.contains("mobile"), "{error}");
    }

    #[test]
    fn invalid_utf8_in_a_declared_utf8_file_marks_the_column() {
        let (rows, _) = read_all(b"name,phone,order\n\xB1\xE8,01012345678,x\n", Encoding::Utf8);
        assert_eq!(rows[0].undecodable.as_deref(), Some("name"));
        assert_eq!(rows[0].name, None);
    }
}
