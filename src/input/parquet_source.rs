//! Parquet recipients through polars, read a row group (or a slice of one) at a time; integer phone columns become text.

use super::{locate, ColumnSpec, InputError, RawRow, RowSource};
use polars::prelude::*;
use std::fs::File;
use std::path::{Path, PathBuf};

/// The most rows decoded at once, so a huge row group does not become a huge batch.
const MAX_SLICE_ROWS: usize = 256 * 1024;

pub struct ParquetRows {
    path: PathBuf,
    metadata: FileMetadataRef,
    columns: Vec<String>,
    has_name: bool,
    /// Row ranges still to read: (offset, length), aligned to row groups.
    slices: std::collections::VecDeque<(usize, usize)>,
    /// Rows decoded and not yet handed out.
    pending: std::collections::VecDeque<RawRow>,
    next_row: u64,
}

impl ParquetRows {
    pub fn open(path: &Path, columns: &ColumnSpec) -> Result<ParquetRows, InputError> {
        let file = File::open(path).map_err(|source| InputError::Open {
            path: path.to_path_buf(),
            source,
        })?;
        let parquet_error = |e: PolarsError| InputError::Parquet {
            path: path.to_path_buf(),
            message: e.to_string(),
        };
        let mut reader = ParquetReader::new(file);
        let schema = reader.schema().map_err(parquet_error)?;
        let headers: Vec<String> = schema.iter_names().map(|n| n.to_string()).collect();
        locate(path, &headers, columns)?;
        let metadata = reader.get_metadata().map_err(parquet_error)?.clone();
        let mut slices = std::collections::VecDeque::new();
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
        let mut wanted = vec![columns.phone.clone()];
        wanted.extend(columns.name.clone());
        wanted.extend(columns.vars.iter().cloned());
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
        let parquet_error = |e: PolarsError| InputError::Parquet {
            path: self.path.clone(),
            message: e.to_string(),
        };
        let file = File::open(&self.path).map_err(|source| InputError::Open {
            path: self.path.clone(),
            source,
        })?;
        let mut reader = ParquetReader::new(file)
            .with_columns(Some(self.columns.clone()))
            .with_slice(Some((offset, length)))
            .read_parallel(ParallelStrategy::None);
        reader.set_metadata(self.metadata.clone());
        let frame = reader.finish().map_err(parquet_error)?;
        let texts: Vec<Vec<Option<String>>> = self
            .columns
            .iter()
            .map(|name| {
                frame
                    .column(name)
                    .map_err(parquet_error)
                    .and_then(|c| column_text(c).map_err(parquet_error))
            })
            .collect::<Result<_, _>>()?;
        for index in 0..frame.height() {
            let mut values = texts.iter().map(|column| column[index].clone());
            let phone = values.next().flatten();
            let name = if self.has_name { values.next().flatten() } else { None };
            let vars = values.collect();
            self.pending.push_back(RawRow {
                row: self.next_row,
                phone,
                name,
                vars,
                undecodable: None,
            });
            self.next_row += 1;
        }
        Ok(())
    }
}

/// A column as text: integers in decimal (a phone stored as a number lost its leading zero,
/// which normalisation restores), whole floats without a fraction, everything else cast.
fn column_text(column: &Column) -> PolarsResult<Vec<Option<String>>> {
    let dtype = column.dtype();
    if dtype.is_integer() {
        let as_i64 = column.cast(&DataType::Int64)?;
        return Ok(as_i64.i64()?.iter().map(|v| v.map(|n| n.to_string())).collect());
    }
    if dtype.is_float() {
        let as_f64 = column.cast(&DataType::Float64)?;
        return Ok(as_f64
            .f64()?
            .iter()
            .map(|v| {
                v.map(|f| {
                    if f.fract() == 0.0 && f.abs() < 1e15 {
                        format!("{}", f as i64)
                    } else {
                        f.to_string()
                    }
                })
            })
            .collect());
    }
    let as_text = column.cast(&DataType::String)?;
    Ok(as_text.str()?.iter().map(|v| v.map(str::to_string)).collect())
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
        assert_eq!(batch[1].vars, vec![None]);
        assert!(rows.next_batch(10).unwrap().is_none());
    }
}
