//! Reading recipients: CSV (UTF-8 or CP949) and Parquet, streamed in bounded batches of raw rows.

mod csv_source;
mod decode;
mod parquet_source;
pub mod phone_set;

use crate::campaign::{Encoding, InputFormat};
use std::path::{Path, PathBuf};

/// One input row as read: the mapped columns only. `row` counts data rows from 1 (the header is not a row).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RawRow {
    pub row: u64,
    pub phone: Option<String>,
    pub name: Option<String>,
    pub vars: Vec<Option<String>>,
    /// A column whose bytes were not text in the file's encoding.
    pub undecodable: Option<String>,
}

/// Which columns to read.
#[derive(Debug, Clone)]
pub struct ColumnSpec {
    pub phone: String,
    pub name: Option<String>,
    pub vars: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("cannot read {path}: {source}")]
    Open { path: PathBuf, source: std::io::Error },
    #[error("{path}: column {column:?} is not in the file (columns: {available})")]
    MissingColumn {
        path: PathBuf,
        column: String,
        available: String,
    },
    #[error("{path}: row {row}: {message}")]
    Malformed { path: PathBuf, row: u64, message: String },
    #[error("{path}: {message}")]
    Parquet { path: PathBuf, message: String },
}

/// A source of raw rows, read a batch at a time.
pub trait RowSource: Send {
    /// Up to `max` rows, or `None` at the end.
    fn next_batch(&mut self, max: usize) -> Result<Option<Vec<RawRow>>, InputError>;
    /// The encoding the rows were decoded from, for the report.
    fn encoding(&self) -> &'static str;
}

/// Opens `path` as `format`, checking the columns exist.
pub fn open(
    path: &Path,
    format: InputFormat,
    encoding: Encoding,
    columns: &ColumnSpec,
) -> Result<Box<dyn RowSource>, InputError> {
    match format {
        InputFormat::Csv => Ok(Box::new(csv_source::CsvRows::open(path, encoding, columns)?)),
        InputFormat::Parquet => Ok(Box::new(parquet_source::ParquetRows::open(path, columns)?)),
    }
}

fn missing_column(path: &Path, column: &str, available: &[String]) -> InputError {
    InputError::MissingColumn {
        path: path.to_path_buf(),
        column: column.to_string(),
        available: available.join(", "),
    }
}

/// Positions of the wanted columns among `headers` (phone, name, then variables).
fn locate(
    path: &Path,
    headers: &[String],
    columns: &ColumnSpec,
) -> Result<(usize, Option<usize>, Vec<usize>), InputError> {
    let find = |name: &str| {
        headers
            .iter()
            .position(|h| h.trim() == name.trim())
            .ok_or_else(|| missing_column(path, name, headers))
    };
    let phone = find(&columns.phone)?;
    let name = columns.name.as_deref().map(find).transpose()?;
    let vars = columns.vars.iter().map(|v| find(v)).collect::<Result<_, _>>()?;
    Ok((phone, name, vars))
}
