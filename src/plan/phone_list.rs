//! Lists of numbers read from a file (a suppression list, an opt-out list): a column of a CSV, Parquet or spreadsheet file, or its only column, each value normalised.

use super::{PlanError, BATCH_ROWS};
use crate::campaign::InputFormat;
use crate::input::phone_set::PhoneSet;
use crate::input::{self, ColumnSpec};
use crate::phone;
use std::path::Path;

/// Reads a suppression list: the `column` of a CSV, Parquet or spreadsheet file (its first sheet), or its only column.
pub(super) fn load(path: &Path, column: &str) -> Result<PhoneSet, PlanError> {
    let mut set = PhoneSet::new();
    read_phone_list(path, column, |phone| {
        set.insert(phone);
    })?;
    Ok(set)
}

/// Reads a list of numbers as a suppression list is read (the `column`, or the only column, of a
/// CSV, Parquet or spreadsheet file) and hands each mobile number, normalised, to `each`; a
/// value that is not a mobile number is skipped, since it could never match a recipient.
pub fn read_phone_list(path: &Path, column: &str, mut each: impl FnMut(&str)) -> Result<(), PlanError> {
    let format = InputFormat::from_path(path).unwrap_or(InputFormat::Csv);
    let spec = ColumnSpec {
        phone: column.to_string(),
        name: None,
        vars: Vec::new(),
    };
    let mut source = input::open(path, format, crate::campaign::Encoding::Auto, &spec)?;
    while let Some(batch) = source.next_batch(BATCH_ROWS)? {
        for row in batch {
            if let Some(Ok(phone)) = row.phone.as_deref().map(phone::normalize) {
                each(&phone);
            }
        }
    }
    Ok(())
}
