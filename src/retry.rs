//! Retry campaigns: a new campaign for the failed or uncertain recipients of a run, never one whose message was accepted.

use crate::campaign::Campaign;
use crate::engine::Refusal;
use crate::files;
use crate::report::{self, Outcome, ReportRow};
use anyhow::{bail, Context, Result};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Which recipients to send again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Only {
    /// The service answered that it did not take them (`ERR_*`, `CH_*` without a fallback,
    /// `ERROR`, a gateway acceptance `FAILED`).
    Failed,
    /// Their request may or may not have reached the service. Sending them again may send twice.
    Uncertain,
}

#[derive(Debug, Clone, Serialize)]
pub struct RetryPlan {
    pub only: Only,
    pub recipients: u64,
    pub campaign: PathBuf,
    pub recipients_file: PathBuf,
}

/// Whether a report row is one `only` asks for; a row whose message or fallback the service took never is.
fn wanted(row: &ReportRow, only: Only) -> bool {
    if row.taken() {
        return false;
    }
    match only {
        Only::Uncertain => row.outcome == Outcome::Uncertain,
        Only::Failed => matches!(row.outcome, Outcome::Answered { .. }),
    }
}

/// Which recipients of a run a list holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listed {
    /// The ones `retry --only` sends again.
    Retry(Only),
    /// A gateway took them and later answered `FAILED` or `GIVEUP`: a list to look into, never
    /// one `retry` sends again (a `GIVEUP` message may have arrived).
    Undelivered,
}

impl Listed {
    fn holds(self, row: &ReportRow) -> bool {
        use crate::api::gateway::final_result::{FAILED, GIVEUP};
        match self {
            Listed::Retry(only) => wanted(row, only),
            Listed::Undelivered => matches!(row.final_result.as_str(), FAILED | GIVEUP),
        }
    }
}

/// Writes the chosen recipients of a run as CSV with the campaign's own columns (phone, name, the
/// message's variables), so that the list reads as the file it came from; returns how many.
pub fn write_list(run_dir: &Path, which: Listed, out: impl std::io::Write) -> Result<u64> {
    crate::engine::refuse_purged(run_dir, "listed for sending again")?;
    write_rows(&report::RunRows::open(run_dir)?, which, out)
}

fn write_rows(rows: &report::RunRows, which: Listed, out: impl std::io::Write) -> Result<u64> {
    let campaign = rows.campaign();
    let mut writer = csv::Writer::from_writer(out);
    let mut header = vec![campaign.recipients.phone_column.clone()];
    header.extend(campaign.recipients.name_column.clone());
    header.extend(campaign.recipients.variables.iter().map(|(_, column)| column.clone()));
    writer.write_record(&header)?;
    let mut written = 0u64;
    rows.walk(|row, recipient| {
        let Some(recipient) = recipient.filter(|_| which.holds(&row)) else {
            return Ok(());
        };
        let mut record = vec![recipient.phone.as_str()];
        if campaign.recipients.name_column.is_some() {
            record.push(recipient.name.as_deref().unwrap_or_default());
        }
        record.extend(recipient.values());
        writer.write_record(&record)?;
        written += 1;
        Ok(())
    })?;
    writer.flush()?;
    Ok(written)
}

/// Writes `DIR/campaign.toml` and `DIR/recipients.csv` for the chosen subset of a run.
pub fn plan(run_dir: &Path, only: Only, out: Option<&Path>) -> Result<RetryPlan> {
    crate::engine::refuse_purged(run_dir, "retried")?;
    let rows = report::RunRows::open(run_dir)?;
    let campaign = rows.campaign();
    let suffix = serde_json::to_value(only)?.as_str().unwrap_or("retry").to_string();
    let out = out.map(Path::to_path_buf).unwrap_or_else(|| {
        let name = run_dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "run".into());
        run_dir.with_file_name(format!("{name}-retry-{suffix}"))
    });
    files::create_private_dir(&out)?;
    let recipients_file = out.join("recipients.csv");
    let written = write_rows(&rows, Listed::Retry(only), files::create_private(&recipients_file)?)?;
    if written == 0 {
        std::fs::remove_dir_all(&out).ok();
        bail!(Refusal(format!(
            "{} has no {suffix} recipient to retry",
            run_dir.display()
        )));
    }
    let campaign_file = out.join("campaign.toml");
    let text = retry_campaign_text(campaign, &recipients_file)?;
    std::io::Write::write_all(&mut files::create_private(&campaign_file)?, text.as_bytes())?;
    Ok(RetryPlan {
        only,
        recipients: written,
        campaign: campaign_file,
        recipients_file,
    })
}

/// The original campaign pointed at the subset: same message and settings, every relative path
/// made absolute, no fixed output folder.
fn retry_campaign_text(campaign: &Campaign, recipients_file: &Path) -> Result<String> {
    let original =
        std::fs::read_to_string(&campaign.file).with_context(|| format!("cannot read {}", campaign.file.display()))?;
    let mut document: toml::Table = toml::from_str(&original)?;
    let base = campaign.file.parent().unwrap_or(Path::new(".")).to_path_buf();
    let absolute = |value: &toml::Value| -> toml::Value {
        match value.as_str() {
            Some(path) if !Path::new(path).is_absolute() => toml::Value::String(base.join(path).display().to_string()),
            _ => value.clone(),
        }
    };
    if let Some(name) = document.get("name").and_then(|n| n.as_str()).map(str::to_string) {
        document.insert("name".into(), toml::Value::String(format!("{name}-retry")));
    }
    if let Some(path) = document.get("sandbox_accounts").map(absolute) {
        document.insert("sandbox_accounts".into(), path);
    }
    for (table, key) in [
        ("message", "text_file"),
        ("credentials", "api_key_file"),
        ("recipients", "suppression"),
    ] {
        if let Some(section) = document.get_mut(table).and_then(|t| t.as_table_mut()) {
            if let Some(path) = section.get(key).map(absolute) {
                section.insert(key.into(), path);
            }
        }
    }
    let recipients = document
        .get_mut("recipients")
        .and_then(|t| t.as_table_mut())
        .ok_or_else(|| Refusal("the campaign has no [recipients]".into()))?;
    recipients.insert(
        "path".into(),
        toml::Value::String(recipients_file.display().to_string()),
    );
    recipients.insert("format".into(), toml::Value::String("csv".into()));
    recipients.insert("encoding".into(), toml::Value::String("utf-8".into()));
    // The subset is a CSV: a spreadsheet's sheet no longer applies (and would be refused).
    recipients.remove("sheet");
    document.remove("output");
    Ok(format!(
        "# Retry of {}: only the recipients listed in recipients.csv.\n{}",
        campaign.file.display(),
        toml::to_string(&document)?
    ))
}
