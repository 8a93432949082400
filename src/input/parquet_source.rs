//! Parquet recipients through polars, read a row group (or a slice of one) at a time; every value becomes text (see `parquet_types`).
//!
//! The mapped columns' types are checked on the schema before any row is read: a column polars
//! cannot read, or that is not one value per row (a struct, a list), refuses the file naming the
//! column and its type. A file polars cannot parse (truncated, corrupt) is refused naming the
//! file, also when polars panics on it.

use super::parquet_types::{self, Cell};
use super::{locate, ColumnSpec, InputError, RawRow, RowSource, Unreadable};
use polars::prelude::*;
use std::collections::VecDeque;
use std::fs::File;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

/// The most rows decoded at once, so a huge row group does not become a huge batch.
const MAX_SLICE_ROWS: usize = 256 * 1024;

pub struct ParquetRows {
    path: PathBuf,
    metadata: FileMetadataRef,
    columns: Vec<String>,
    has_name: bool,
    /// Row ranges still to read: (offset, length), aligned to row groups.
    slices: VecDeque<(usize, usize)>,
    /// Rows decoded and not yet handed out.
    pending: VecDeque<RawRow>,
    next_row: u64,
}

/// Runs a polars call, turning its error, or its panic, into a refusal naming the file.
fn guarded<T>(path: &Path, call: impl FnOnce() -> PolarsResult<T>) -> Result<T, InputError> {
    let refusal = |message: String| InputError::Parquet {
        path: path.to_path_buf(),
        message,
    };
    match catch_unwind(AssertUnwindSafe(call)) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(refusal(error.to_string())),
        Err(panic) => Err(refusal(
            crate::contained::panic_message(panic.as_ref()).unwrap_or_else(|| "the Parquet reader failed".into()),
        )),
    }
}

impl ParquetRows {
    pub fn open(path: &Path, columns: &ColumnSpec) -> Result<ParquetRows, InputError> {
        let file = File::open(path).map_err(|source| InputError::Open {
            path: path.to_path_buf(),
            source,
        })?;
        let mut reader = ParquetReader::new(file);
        let schema = guarded(path, || reader.schema())?;
        let headers: Vec<String> = schema.iter_names().map(|n| n.to_string()).collect();
        let (phone, name, vars) = locate(path, &headers, columns)?;
        // The names as the file spells them (`locate` matches them trimmed), in spec order.
        let mut wanted = Vec::new();
        for index in std::iter::once(phone).chain(name).chain(vars) {
            let (column, field) = schema.get_at_index(index).expect("located in this schema");
            if !parquet_types::readable(&field.dtype) {
                return Err(InputError::UnsupportedType {
                    path: path.to_path_buf(),
                    column: column.to_string(),
                    type_name: parquet_types::type_name(&field.dtype),
                });
            }
            wanted.push(column.to_string());
        }
        let metadata = guarded(path, || reader.get_metadata().cloned())?;
        let mut slices = VecDeque::new();
        let mut offset = 0usize;
        for group in &metadata.row_groups {
            let mut left = group.num_rows();
            while left > 0 {
                let length = left.min(MAX_SLICE_ROWS);
                slices.push_back((offset, length));
                offset += length;
                left -= length;
            }
        }
        Ok(ParquetRows {
            path: path.to_path_buf(),
            metadata,
            columns: wanted,
            has_name: columns.name.is_some(),
            slices,
            pending: Default::default(),
            next_row: 1,
        })
    }

    fn read_slice(&mut self, offset: usize, length: usize) -> Result<(), InputError> {
        let file = File::open(&self.path).map_err(|source| InputError::Open {
            path: self.path.clone(),
            source,
        })?;
        let (columns, metadata) = (&self.columns, &self.metadata);
        let mut texts: Vec<Vec<Cell>> = guarded(&self.path, || {
            let mut reader = ParquetReader::new(file)
                .with_columns(Some(columns.clone()))
                .with_slice(Some((offset, length)))
                .read_parallel(ParallelStrategy::None);
            reader.set_metadata(metadata.clone());
            let frame = reader.finish()?;
            if frame.height() != length {
                polars_bail!(ComputeError: "row group at row {} has {} rows, its metadata says {length}", offset + 1, frame.height());
            }
            columns
                .iter()
                .map(|name| parquet_types::column_text(frame.column(name)?))
                .collect()
        })?;
        for index in 0..length {
            let mut unreadable = None;
            let mut values = texts.iter_mut().zip(&self.columns).map(|(column, name)| {
                match std::mem::replace(&mut column[index], Ok(None)) {
                    Ok(value) => value,
                    Err(problem) => {
                        unreadable.get_or_insert(Unreadable::NotText {
                            column: name.clone(),
                            detail: problem.to_string(),
                        });
                        None
                    }
                }
            });
            let phone = values.next().flatten();
            let name = if self.has_name { values.next().flatten() } else { None };
            let vars = values.collect();
            self.pending.push_back(RawRow {
                row: self.next_row,
                phone,
                name,
                vars,
                unreadable,
            });
            self.next_row += 1;
        }
        Ok(())
    }
}

impl RowSource for ParquetRows {
    fn next_batch(&mut self, max: usize) -> Result<Option<Vec<RawRow>>, InputError> {
        while self.pending.len() < max {
            let Some((offset, length)) = self.slices.pop_front() else {
                break;
            };
            self.read_slice(offset, length)?;
        }
        if self.pending.is_empty() {
            return Ok(None);
        }
        let take = max.min(self.pending.len());
        Ok(Some(self.pending.drain(..take).collect()))
    }

    fn encoding(&self) -> &'static str {
        "parquet"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_phones_and_row_numbers_survive() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.parquet");
        let mut frame = df!(
            "phone" => &[1012345678i64, 1000000001],
            "name" => &["김", "이"],
            "order" => &[Some("A"), None],
        )
        .unwrap();
        ParquetWriter::new(File::create(&path).unwrap())
            .finish(&mut frame)
            .unwrap();
        let spec = ColumnSpec {
            phone: "phone".into(),
            name: Some("name".into()),
            vars: vec!["order".into()],
        };
        let mut rows = ParquetRows::open(&path, &spec).unwrap();
        let batch = rows.next_batch(10).unwrap().unwrap();
        assert_eq!(batch.len(), 2);
        assert_eq!(batch[0].phone.as_deref(), Some("1012345678"));
        assert_eq!(batch[1].row, 2);
        assert_eq!(batch[1].vars.as_slice(), [None]);
        assert!(rows.next_batch(10).unwrap().is_none());
    }
}
