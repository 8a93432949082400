//! Delivery reports: one line per input row (CSV and Parquet, owner-readable only) and a summary (JSON, Markdown, HTML).

use crate::api::gateway::final_result;
use crate::api::ledger::BillingClass;
use crate::api::standard::status_accepted;
use crate::campaign::{Campaign, Kind, Lane};
use crate::engine::checkpoint::{Checkpoint, ChunkKey, ChunkRecord, ChunkState, RecipientResult};
use crate::engine::{self, Refusal, CHECKPOINT_DIR};
use crate::files;
use crate::prepare::{self, Fate, PrepareError, Recipient, RowRef};
use crate::template::Template;
use crate::text::{euc_kr_len, TextLane};
use anyhow::{Context, Result};
use polars::prelude::*;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};

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

/// Charge states of a row.
pub mod charge_state {
    pub const CHARGED: &str = "charged";
    pub const REFUNDED: &str = "refunded";
    pub const NOT_CHARGED: &str = "not_charged";
    /// Gateway record still `GW_PENDING`.
    pub const PROVISIONAL: &str = "provisional";
    /// Gateway record `GIVEUP`: charged, never delivered.
    pub const DISPUTED: &str = "disputed";
    /// The request may or may not have reached the service.
    pub const UNCERTAIN: &str = "uncertain";
}

/// One line of the report.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ReportRow {
    pub row: u64,
    pub phone: String,
    pub name: String,
    pub kind: String,
    pub lane: String,
    pub chunk: Option<u32>,
    pub uid: String,
    pub id: String,
    pub send_group_id: String,
    /// `REJECTED:<reason>`, `DUPLICATE`, `SUPPRESSED`, `PENDING`, `UNCERTAIN`, or the service's status.
    pub acceptance: String,
    pub final_result: String,
    pub error: String,
    pub fallback_sent: bool,
    pub billing_class: String,
    pub charge_state: String,
    /// The primary charge (0 when not charged; the refunded amount when refunded). Empty
    /// without `[prices]`.
    pub amount: Option<i64>,
    pub fallback_class: String,
    pub fallback_amount: Option<i64>,
}

/// Totals of one billing class.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ClassSummary {
    pub charged: i64,
    pub refunded: i64,
    pub provisional: i64,
    pub disputed: i64,
    pub charged_count: u64,
    pub refunded_count: u64,
    pub provisional_count: u64,
    pub disputed_count: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Summary {
    pub campaign: PathBuf,
    pub kind: String,
    pub status: engine::Status,
    pub acceptance: BTreeMap<String, u64>,
    pub final_results: BTreeMap<String, u64>,
    pub charge_states: BTreeMap<String, u64>,
    pub classes: BTreeMap<String, ClassSummary>,
    pub prices_known: bool,
    pub files: Vec<PathBuf>,
}

/// What the report needs to know about a chunk while walking its rows.
struct LaneCursor {
    sent_in_lane: u64,
    loaded: Option<(u32, Vec<RecipientResult>)>,
}

struct Pricing {
    prices: Option<BTreeMap<BillingClass, i64>>,
}

impl Pricing {
    fn of(&self, class: BillingClass) -> Option<i64> {
        self.prices.as_ref().map(|p| p.get(&class).copied().unwrap_or(0))
    }
}

fn primary_class(campaign: &Campaign, lane: Lane) -> BillingClass {
    match lane {
        Lane::Alimtalk | Lane::Gateway => BillingClass::Alimtalk,
        Lane::Brand if campaign.reaches_non_friends() => BillingClass::BmNonfriend,
        Lane::Brand => BillingClass::BmFriend,
        Lane::Sms => BillingClass::Sms,
        Lane::Lms => BillingClass::Lms,
    }
}

/// The fallback text's class: SMS when it fits 90 EUC-KR bytes, else LMS.
fn fallback_class(campaign: &Campaign, recipient: &Recipient) -> Option<BillingClass> {
    let source = campaign.fallback_text()?;
    let vars: crate::api::MappingEntry = crate::api::MappingEntry {
        name: recipient.name.clone(),
        vars: campaign
            .recipients
            .variables
            .iter()
            .map(|(k, _)| k.clone())
            .zip(recipient.vars.iter().cloned())
            .collect(),
    };
    let template = Template::compile(source);
    let text = template.render(&vars).unwrap_or_else(|_| source.to_string());
    match euc_kr_len(&text).ok().and_then(TextLane::for_bytes)? {
        TextLane::Sms => Some(BillingClass::FallbackSms),
        TextLane::Lms => Some(BillingClass::FallbackLms),
    }
}

/// Fills the charge columns of a sent row from its acceptance and final result.
fn charge(
    row: &mut ReportRow,
    campaign: &Campaign,
    recipient: &Recipient,
    result: &RecipientResult,
    pricing: &Pricing,
) {
    let class = primary_class(campaign, recipient.lane);
    row.billing_class = class.as_str().to_string();
    let price = pricing.of(class);
    let zero = price.map(|_| 0);
    let mut fallback = false;
    if campaign.kind == Kind::GatewayAlimtalk {
        let (state, amount) = match (result.accepted, row.final_result.as_str()) {
            (false, _) => (charge_state::NOT_CHARGED, zero),
            (true, final_result::OK) => (charge_state::CHARGED, price),
            (true, final_result::FAILED) => {
                fallback = campaign.fallback_text().is_some();
                (charge_state::REFUNDED, price)
            }
            (true, final_result::GIVEUP) => (charge_state::DISPUTED, price),
            (true, _) => (charge_state::PROVISIONAL, price),
        };
        row.charge_state = state.to_string();
        row.amount = amount;
    } else if status_accepted(&result.status) {
        row.charge_state = charge_state::CHARGED.into();
        row.amount = price;
    } else {
        row.charge_state = charge_state::NOT_CHARGED.into();
        row.amount = zero;
        // Rule 4: a CH_* failure with `alter` sends a fallback SMS.
        fallback = result.status.starts_with("CH_")
            && campaign.fallback_text().is_some()
            && matches!(recipient.lane, Lane::Alimtalk | Lane::Brand);
    }
    if fallback {
        if let Some(class) = fallback_class(campaign, recipient) {
            row.fallback_sent = true;
            row.fallback_class = class.as_str().to_string();
            row.fallback_amount = pricing.of(class);
        }
    }
}

/// A run opened for reading its rows: the checkpoint, and the campaign checked unchanged.
pub struct RunRows {
    checkpoint: Checkpoint,
    meta: crate::engine::checkpoint::RunMeta,
    campaign: Campaign,
}

impl RunRows {
    pub fn open(run_dir: &Path) -> Result<RunRows> {
        let checkpoint = Checkpoint::open(&run_dir.join(CHECKPOINT_DIR), false)?;
        let meta = checkpoint
            .meta()?
            .ok_or_else(|| Refusal(format!("{} holds no scan yet: nothing was sent", run_dir.display())))?;
        let campaign = Campaign::load(&meta.campaign_file)?;
        engine::verify_unchanged(&campaign, &meta)?;
        Ok(RunRows {
            checkpoint,
            meta,
            campaign,
        })
    }

    pub fn campaign(&self) -> &Campaign {
        &self.campaign
    }

    /// Every input row as a report line, in input order, with its recipient when it was valid;
    /// answers the summary of them all.
    pub fn walk(&self, mut on_row: impl FnMut(&ReportRow, Option<&Recipient>) -> Result<()>) -> Result<Summary> {
        let (checkpoint, meta, campaign) = (&self.checkpoint, &self.meta, &self.campaign);
        let records: HashMap<ChunkKey, ChunkRecord> = checkpoint.chunk_records()?;
        let pricing = Pricing {
            prices: campaign.prices.clone(),
        };
        let mut summary = Summary {
            campaign: meta.campaign_file.clone(),
            kind: meta.kind.clone(),
            status: engine::status_of(checkpoint, meta)?,
            prices_known: campaign.prices.is_some(),
            ..Summary::default()
        };
        let mut cursors: HashMap<Lane, LaneCursor> = HashMap::new();
        let chunk_size = meta.chunk_size as u64;
        let mut failure: Option<anyhow::Error> = None;
        let walked = prepare::walk(
            campaign,
            |reference: RowRef, fate: Fate| {
                let built = build_row(
                    campaign,
                    checkpoint,
                    &records,
                    &mut cursors,
                    chunk_size,
                    reference,
                    fate,
                    &pricing,
                );
                let handled = built.and_then(|(row, recipient)| {
                    tally(&mut summary, &row);
                    on_row(&row, recipient.as_ref())
                });
                handled.map_err(|error| {
                    failure.get_or_insert(error);
                    PrepareError::Stopped
                })
            },
            |_| {},
        );
        if let Some(error) = failure {
            return Err(error);
        }
        walked?;
        Ok(summary)
    }
}

/// Writes the report of a run: `report.csv`, `report.parquet`, `summary.json`, `summary.md`, `summary.html`.
pub fn write(run_dir: &Path, out: Option<&Path>) -> Result<Summary> {
    let rows = RunRows::open(run_dir)?;
    let out = out.map(Path::to_path_buf).unwrap_or_else(|| run_dir.to_path_buf());
    files::create_private_dir(&out)?;
    let csv_path = out.join("report.csv");
    let parquet_path = out.join("report.parquet");
    let mut csv_writer = csv::Writer::from_writer(files::create_private(&csv_path)?);
    csv_writer.write_record(COLUMNS)?;
    let mut parquet = ParquetSink::create(&parquet_path)?;
    let mut summary = rows.walk(|row, _| {
        write_csv_row(&mut csv_writer, row)?;
        parquet.push(row.clone())
    })?;
    csv_writer.flush()?;
    parquet.finish()?;
    summary.files = vec![csv_path, parquet_path];
    for (name, body) in [
        ("summary.json", serde_json::to_string_pretty(&summary)?),
        ("summary.md", markdown(&summary)),
        ("summary.html", html(&summary)),
    ] {
        let path = out.join(name);
        files::create_private(&path)?
            .write_all(body.as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?;
        summary.files.push(path);
    }
    Ok(summary)
}

#[allow(clippy::too_many_arguments)]
fn build_row(
    campaign: &Campaign,
    checkpoint: &Checkpoint,
    records: &HashMap<ChunkKey, ChunkRecord>,
    cursors: &mut HashMap<Lane, LaneCursor>,
    chunk_size: u64,
    reference: RowRef,
    fate: Fate,
    pricing: &Pricing,
) -> Result<(ReportRow, Option<Recipient>)> {
    let mut row = ReportRow {
        row: reference.row,
        kind: campaign.kind.as_str().to_string(),
        charge_state: charge_state::NOT_CHARGED.into(),
        ..ReportRow::default()
    };
    let recipient = match fate {
        Fate::Rejected(rejection) => {
            row.phone = reference.phone.unwrap_or_default();
            row.name = reference.name.unwrap_or_default();
            row.acceptance = format!("REJECTED:{}", rejection.reason.as_str());
            row.error = format!("{}: {}", rejection.column, rejection.detail);
            return Ok((row, None));
        }
        Fate::Suppressed | Fate::Duplicate => {
            row.phone = reference.phone.unwrap_or_default();
            row.name = reference.name.unwrap_or_default();
            row.acceptance = if matches!(fate, Fate::Suppressed) {
                "SUPPRESSED"
            } else {
                "DUPLICATE"
            }
            .into();
            return Ok((row, None));
        }
        Fate::Valid(recipient) => recipient,
    };
    row.phone = recipient.phone.clone();
    row.name = recipient.name.clone().unwrap_or_default();
    row.lane = recipient.lane.as_str().to_string();
    row.billing_class = primary_class(campaign, recipient.lane).as_str().to_string();
    let cursor = cursors.entry(recipient.lane).or_insert(LaneCursor {
        sent_in_lane: 0,
        loaded: None,
    });
    let index = (cursor.sent_in_lane / chunk_size) as u32;
    let position = (cursor.sent_in_lane % chunk_size) as usize;
    cursor.sent_in_lane += 1;
    row.chunk = Some(index);
    let key = ChunkKey {
        lane: recipient.lane,
        index,
    };
    let Some(record) = records.get(&key) else {
        row.acceptance = "PENDING".into();
        return Ok((row, Some(recipient)));
    };
    if record.state == ChunkState::InFlight {
        row.acceptance = "UNCERTAIN".into();
        row.charge_state = charge_state::UNCERTAIN.into();
        row.error = record.note.clone().unwrap_or_default();
        return Ok((row, Some(recipient)));
    }
    if cursor.loaded.as_ref().is_none_or(|(loaded, _)| *loaded != index) {
        cursor.loaded = Some((index, checkpoint.results(key)?.unwrap_or_default()));
    }
    let results = &cursor.loaded.as_ref().expect("loaded above").1;
    let Some(result) = results.get(position).filter(|r| r.row == recipient.row) else {
        anyhow::bail!(
            "the checkpoint's results of chunk {key} do not match the input at row {}",
            recipient.row
        );
    };
    row.uid = result.uid.clone();
    row.id = result.id.clone().unwrap_or_default();
    row.send_group_id = record.send_group_id.clone().unwrap_or_default();
    row.acceptance = result.status.clone();
    row.error = result.error.clone().unwrap_or_default();
    if campaign.kind == Kind::GatewayAlimtalk && result.accepted {
        match checkpoint.final_result(&row.id)? {
            Some(found) => {
                row.final_result = found.result;
                if let Some(message) = found.error_message {
                    row.error = message;
                }
            }
            None => row.final_result = final_result::PENDING.into(),
        }
    } else if campaign.kind != Kind::GatewayAlimtalk {
        // The standard deployment's send response is the final record.
        row.final_result = result.status.clone();
    }
    charge(&mut row, campaign, &recipient, result, pricing);
    Ok((row, Some(recipient)))
}

/// Adds a row to the summary. A class's `charged` counts every charge made, including those
/// later refunded, so that it compares with the ledger's charges, and `refunded` its refunds.
fn tally(summary: &mut Summary, row: &ReportRow) {
    *summary
        .acceptance
        .entry(row.acceptance.split(':').next().unwrap_or("").to_string())
        .or_default() += 1;
    if !row.final_result.is_empty() {
        *summary.final_results.entry(row.final_result.clone()).or_default() += 1;
    }
    *summary.charge_states.entry(row.charge_state.clone()).or_default() += 1;
    let billed = matches!(
        row.charge_state.as_str(),
        charge_state::CHARGED | charge_state::REFUNDED | charge_state::PROVISIONAL | charge_state::DISPUTED
    );
    if billed && !row.billing_class.is_empty() {
        let class = summary.classes.entry(row.billing_class.clone()).or_default();
        let amount = row.amount.unwrap_or(0);
        class.charged += amount;
        class.charged_count += 1;
        let also = match row.charge_state.as_str() {
            charge_state::REFUNDED => Some((&mut class.refunded, &mut class.refunded_count)),
            charge_state::PROVISIONAL => Some((&mut class.provisional, &mut class.provisional_count)),
            charge_state::DISPUTED => Some((&mut class.disputed, &mut class.disputed_count)),
            _ => None,
        };
        if let Some((total, count)) = also {
            *total += amount;
            *count += 1;
        }
    }
    if row.fallback_sent {
        let class = summary.classes.entry(row.fallback_class.clone()).or_default();
        class.charged += row.fallback_amount.unwrap_or(0);
        class.charged_count += 1;
    }
}

fn write_csv_row(writer: &mut csv::Writer<std::fs::File>, row: &ReportRow) -> Result<()> {
    let optional = |value: Option<i64>| value.map(|v| v.to_string()).unwrap_or_default();
    writer.write_record([
        row.row.to_string(),
        row.phone.clone(),
        row.name.clone(),
        row.kind.clone(),
        row.lane.clone(),
        row.chunk.map(|c| c.to_string()).unwrap_or_default(),
        row.uid.clone(),
        row.id.clone(),
        row.send_group_id.clone(),
        row.acceptance.clone(),
        row.final_result.clone(),
        row.error.clone(),
        row.fallback_sent.to_string(),
        row.billing_class.clone(),
        row.charge_state.clone(),
        optional(row.amount),
        row.fallback_class.clone(),
        optional(row.fallback_amount),
    ])?;
    Ok(())
}

/// Parquet written in batches, so the report never holds the whole run in memory.
struct ParquetSink {
    writer: Option<polars::io::parquet::write::BatchedWriter<std::fs::File>>,
    file: Option<std::fs::File>,
    rows: Vec<ReportRow>,
}

const PARQUET_BATCH: usize = 64 * 1024;

impl ParquetSink {
    fn create(path: &Path) -> Result<ParquetSink> {
        let file = files::create_private(path).with_context(|| format!("cannot create {}", path.display()))?;
        Ok(ParquetSink {
            writer: None,
            file: Some(file),
            rows: Vec::new(),
        })
    }

    fn push(&mut self, row: ReportRow) -> Result<()> {
        self.rows.push(row);
        if self.rows.len() >= PARQUET_BATCH {
            self.write_batch()?;
        }
        Ok(())
    }

    fn frame(rows: &[ReportRow]) -> PolarsResult<DataFrame> {
        let text = |f: fn(&ReportRow) -> &String| rows.iter().map(|r| f(r).as_str()).collect::<Vec<&str>>();
        DataFrame::new_infer_height(vec![
            Column::new("row".into(), rows.iter().map(|r| r.row).collect::<Vec<u64>>()),
            Column::new("phone".into(), text(|r| &r.phone)),
            Column::new("name".into(), text(|r| &r.name)),
            Column::new("kind".into(), text(|r| &r.kind)),
            Column::new("lane".into(), text(|r| &r.lane)),
            Column::new(
                "chunk".into(),
                rows.iter().map(|r| r.chunk).collect::<Vec<Option<u32>>>(),
            ),
            Column::new("uid".into(), text(|r| &r.uid)),
            Column::new("id".into(), text(|r| &r.id)),
            Column::new("send_group_id".into(), text(|r| &r.send_group_id)),
            Column::new("acceptance".into(), text(|r| &r.acceptance)),
            Column::new("final_result".into(), text(|r| &r.final_result)),
            Column::new("error".into(), text(|r| &r.error)),
            Column::new(
                "fallback_sent".into(),
                rows.iter().map(|r| r.fallback_sent).collect::<Vec<bool>>(),
            ),
            Column::new("billing_class".into(), text(|r| &r.billing_class)),
            Column::new("charge_state".into(), text(|r| &r.charge_state)),
            Column::new(
                "amount".into(),
                rows.iter().map(|r| r.amount).collect::<Vec<Option<i64>>>(),
            ),
            Column::new("fallback_class".into(), text(|r| &r.fallback_class)),
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

    fn finish(mut self) -> Result<()> {
        if !self.rows.is_empty() || self.writer.is_none() {
            self.write_batch()?;
        }
        self.writer.as_mut().expect("writer").finish()?;
        Ok(())
    }
}

fn markdown(summary: &Summary) -> String {
    let status = &summary.status;
    let mut out = format!(
        "# Delivery report: {}\n\nKind: `{}`\n\n",
        summary.campaign.display(),
        summary.kind
    );
    out.push_str(&format!("**{}**\n\n", status.equation()));
    out.push_str("| acceptance | rows |\n|---|---:|\n");
    for (acceptance, count) in &summary.acceptance {
        out.push_str(&format!("| {acceptance} | {count} |\n"));
    }
    if !summary.final_results.is_empty() {
        out.push_str("\n| final result | rows |\n|---|---:|\n");
        for (result, count) in &summary.final_results {
            out.push_str(&format!("| {result} | {count} |\n"));
        }
    }
    out.push_str("\n| billing class | charged (rows) | refunded (rows) | provisional (rows) | disputed (rows) |\n|---|---:|---:|---:|---:|\n");
    for (class, totals) in &summary.classes {
        out.push_str(&format!(
            "| {class} | {} ({}) | {} ({}) | {} ({}) | {} ({}) |\n",
            totals.charged,
            totals.charged_count,
            totals.refunded,
            totals.refunded_count,
            totals.provisional,
            totals.provisional_count,
            totals.disputed,
            totals.disputed_count
        ));
    }
    if !summary.prices_known {
        out.push_str("\nAmounts are 0: the campaign gives no `[prices]`.\n");
    }
    out
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A self-contained page: the accounting equation, a bar chart of rows by acceptance, and the charges.
fn html(summary: &Summary) -> String {
    let status = &summary.status;
    let buckets = [
        ("rejected", status.rejected, "#c0392b"),
        ("duplicates", status.duplicates, "#7f8c8d"),
        ("suppressed", status.suppressed, "#95a5a6"),
        ("sent", status.sent, "#27ae60"),
        ("uncertain", status.uncertain, "#e67e22"),
        ("pending", status.pending, "#2980b9"),
    ];
    let max = buckets.iter().map(|(_, n, _)| *n).max().unwrap_or(0).max(1);
    let mut bars = String::new();
    for (index, (label, count, color)) in buckets.iter().enumerate() {
        let width = 420.0 * *count as f64 / max as f64;
        let y = 10 + index * 30;
        bars.push_str(&format!(
            "<text x=\"0\" y=\"{}\" font-size=\"13\">{label}</text><rect x=\"100\" y=\"{y}\" width=\"{width:.1}\" height=\"20\" fill=\"{color}\"/><text x=\"{:.1}\" y=\"{}\" font-size=\"13\">{count}</text>",
            y + 15,
            106.0 + width,
            y + 15
        ));
    }
    let mut classes = String::new();
    for (class, totals) in &summary.classes {
        classes.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(class),
            totals.charged,
            totals.charged_count,
            totals.refunded,
            totals.provisional,
            totals.disputed
        ));
    }
    let mut results = String::new();
    for (result, count) in summary.acceptance.iter().chain(summary.final_results.iter()) {
        results.push_str(&format!("<tr><td>{}</td><td>{count}</td></tr>", escape(result)));
    }
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>msgbatch report</title>\
         <style>body{{font-family:sans-serif;margin:2em;max-width:60em}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:.3em .6em;text-align:right}}td:first-child,th:first-child{{text-align:left}}</style></head>\
         <body><h1>Delivery report</h1><p>{}</p><p>Kind <code>{}</code></p><p><strong>{}</strong></p>\
         <svg width=\"640\" height=\"{}\" role=\"img\" aria-label=\"rows by bucket\">{bars}</svg>\
         <h2>Statuses</h2><table><tr><th>status</th><th>rows</th></tr>{results}</table>\
         <h2>Charges by billing class</h2><table><tr><th>class</th><th>charged</th><th>charged rows</th><th>refunded</th><th>provisional</th><th>disputed</th></tr>{classes}</table>\
         </body></html>\n",
        escape(&summary.campaign.display().to_string()),
        escape(&summary.kind),
        escape(&status.equation()),
        buckets.len() * 30 + 20
    )
}
