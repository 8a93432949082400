//! The report's files: the pinned columns, one CSV record per row (strings only here, at the file boundary) and Parquet written in batches.

use super::row::ReportRow;
use crate::api::ledger::BillingClass;
use crate::campaign::Lane;
use anyhow::Result;
use polars::prelude::*;

/// The report's columns, in order. Pinned: scripts read them by name.
pub const COLUMNS: [&str; 18] = [
    "row",
    "phone",
    "name",
    "kind",
    "lane",
    "chunk",
    "uid",
    "id",
    "send_group_id",
    "acceptance",
    "final_result",
    "error",
    "fallback_sent",
    "billing_class",
    "charge_state",
    "amount",
    "fallback_class",
    "fallback_amount",
];

/// A row as the CSV has it, in the order of [`COLUMNS`].
pub(super) fn csv_record(row: &ReportRow) -> [String; 18] {
    let optional = |value: Option<i64>| value.map(|v| v.to_string()).unwrap_or_default();
    let class = |value: Option<BillingClass>| value.map_or("", BillingClass::as_str).to_string();
    [
        row.row.to_string(),
        row.phone.clone(),
        row.name.clone(),
        row.kind.as_str().to_string(),
        row.lane.map_or("", Lane::as_str).to_string(),
        row.chunk.map(|c| c.to_string()).unwrap_or_default(),
        row.uid.clone(),
        row.id.clone(),
        row.send_group_id.clone(),
        row.outcome.acceptance(),
        row.final_result.clone(),
        row.error.clone(),
        row.fallback.is_some().to_string(),
        class(row.billing_class),
        row.charge_state.as_str().to_string(),
        optional(row.amount),
        class(row.fallback),
        optional(row.fallback_amount),
    ]
}

/// Parquet written in batches, so the report never holds the whole run in memory.
pub(super) struct ParquetSink {
    writer: Option<polars::io::parquet::write::BatchedWriter<std::fs::File>>,
    file: Option<std::fs::File>,
    rows: Vec<ReportRow>,
}

const PARQUET_BATCH: usize = 64 * 1024;

impl ParquetSink {
    pub fn create(file: std::fs::File) -> ParquetSink {
        ParquetSink {
            writer: None,
            file: Some(file),
            rows: Vec::new(),
        }
    }

    pub fn push(&mut self, row: ReportRow) -> Result<()> {
        self.rows.push(row);
        if self.rows.len() >= PARQUET_BATCH {
            self.write_batch()?;
        }
        Ok(())
    }

    fn frame(rows: &[ReportRow]) -> PolarsResult<DataFrame> {
        let text = |f: fn(&ReportRow) -> &str| rows.iter().map(f).collect::<Vec<&str>>();
        let owned = |f: fn(&ReportRow) -> String| rows.iter().map(f).collect::<Vec<String>>();
        let class = |f: fn(&ReportRow) -> Option<BillingClass>| {
            rows.iter()
                .map(|r| f(r).map_or("", BillingClass::as_str))
                .collect::<Vec<&str>>()
        };
        DataFrame::new_infer_height(vec![
            Column::new("row".into(), rows.iter().map(|r| r.row).collect::<Vec<u64>>()),
            Column::new("phone".into(), text(|r| &r.phone)),
            Column::new("name".into(), text(|r| &r.name)),
            Column::new("kind".into(), text(|r| r.kind.as_str())),
            Column::new("lane".into(), text(|r| r.lane.map_or("", Lane::as_str))),
            Column::new(
                "chunk".into(),
                rows.iter().map(|r| r.chunk).collect::<Vec<Option<u32>>>(),
            ),
            Column::new("uid".into(), text(|r| &r.uid)),
            Column::new("id".into(), text(|r| &r.id)),
            Column::new("send_group_id".into(), text(|r| &r.send_group_id)),
            Column::new("acceptance".into(), owned(|r| r.outcome.acceptance())),
            Column::new("final_result".into(), text(|r| &r.final_result)),
            Column::new("error".into(), text(|r| &r.error)),
            Column::new(
                "fallback_sent".into(),
                rows.iter().map(|r| r.fallback.is_some()).collect::<Vec<bool>>(),
            ),
            Column::new("billing_class".into(), class(|r| r.billing_class)),
            Column::new("charge_state".into(), text(|r| r.charge_state.as_str())),
            Column::new(
                "amount".into(),
                rows.iter().map(|r| r.amount).collect::<Vec<Option<i64>>>(),
            ),
            Column::new("fallback_class".into(), class(|r| r.fallback)),
            Column::new(
                "fallback_amount".into(),
                rows.iter().map(|r| r.fallback_amount).collect::<Vec<Option<i64>>>(),
            ),
        ])
    }

    fn write_batch(&mut self) -> Result<()> {
        let frame = ParquetSink::frame(&self.rows)?;
        if self.writer.is_none() {
            let file = self.file.take().expect("file until the writer exists");
            self.writer = Some(ParquetWriter::new(file).batched(frame.schema())?);
        }
        self.writer.as_mut().expect("writer").write_batch(&frame)?;
        self.rows.clear();
        Ok(())
    }

    pub fn finish(mut self) -> Result<()> {
        if !self.rows.is_empty() || self.writer.is_none() {
            self.write_batch()?;
        }
        self.writer.as_mut().expect("writer").finish()?;
        Ok(())
    }
}
