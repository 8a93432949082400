//! Writes `samples/recipients.parquet` from `samples/recipients.csv`, with the phone column stored as integers
//! (the leading zero lost, as spreadsheets do), to show that such files are read correctly.
//!
//! Run: `cargo run --example sample_parquet`

use polars::prelude::*;
use std::path::Path;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
    let mut reader = csv::Reader::from_path(samples.join("recipients.csv"))?;
    let headers: Vec<String> = reader.headers()?.iter().map(str::to_string).collect();
    let mut columns: Vec<Vec<Option<String>>> = vec![Vec::new(); headers.len()];
    for record in reader.records() {
        let record = record?;
        for (index, column) in columns.iter_mut().enumerate() {
            column.push(record.get(index).filter(|v| !v.is_empty()).map(str::to_string));
        }
    }
    let mut frame_columns = Vec::new();
    for (name, values) in headers.iter().zip(columns) {
        let column = if name == "phone" {
            let digits: Vec<Option<i64>> = values
                .iter()
                .map(|v| {
                    v.as_ref().and_then(|text| {
                        text.chars()
                            .filter(char::is_ascii_digit)
                            .collect::<String>()
                            .parse()
                            .ok()
                    })
                })
                .collect();
            Column::new(name.as_str().into(), digits)
        } else {
            Column::new(name.as_str().into(), values)
        };
        frame_columns.push(column);
    }
    let mut frame = DataFrame::new_infer_height(frame_columns)?;
    let path = samples.join("recipients.parquet");
    ParquetWriter::new(std::fs::File::create(&path)?).finish(&mut frame)?;
    println!("wrote {} ({} rows)", path.display(), frame.height());
    Ok(())
}
