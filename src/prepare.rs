//! Reading, rendering and sorting every input row: rejected, suppressed, duplicate or valid in a lane, with the accounting.

use crate::api::ledger::BillingClass;
use crate::campaign::{Campaign, InputFormat, Kind, Lane};
use crate::input::phone_set::PhoneSet;
use crate::input::{self, ColumnSpec, InputError, RawRow};
use crate::phone::{self, PhoneError};
use crate::text::{euc_kr_len, TextLane, ALIMTALK_MAX_CHARS};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Rows read and classified per batch.
pub const BATCH_ROWS: usize = 16 * 1024;

/// Why a row was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RejectReason {
    PhoneMissing,
    PhoneInvalid,
    VariableMissing,
    Unencodable,
    TooLong,
    NotText,
}

impl RejectReason {
    pub fn as_str(self) -> &'static str {
        match self {
            RejectReason::PhoneMissing => "phone_missing",
            RejectReason::PhoneInvalid => "phone_invalid",
            RejectReason::VariableMissing => "variable_missing",
            RejectReason::Unencodable => "unencodable",
            RejectReason::TooLong => "too_long",
            RejectReason::NotText => "not_text",
        }
    }
}

/// A rejected row: which column and why, in words.
#[derive(Debug, Clone, PartialEq)]
pub struct Rejection {
    pub reason: RejectReason,
    pub column: String,
    pub detail: String,
}

/// A row that will be sent.
#[derive(Debug, Clone, PartialEq)]
pub struct Recipient {
    pub row: u64,
    pub phone: String,
    pub name: Option<String>,
    pub vars: Vec<String>,
    pub lane: Lane,
}

/// What became of a row.
#[derive(Debug, Clone, PartialEq)]
pub enum Fate {
    Rejected(Rejection),
    Suppressed,
    Duplicate,
    Valid(Recipient),
}

/// The accounting of a whole input: `rows = rejected + suppressed + duplicates + valid`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Scan {
    pub rows: u64,
    pub valid: u64,
    pub rejected: u64,
    pub rejected_by_reason: BTreeMap<String, u64>,
    pub duplicates: u64,
    pub suppressed: u64,
    pub per_lane: BTreeMap<Lane, u64>,
    pub encoding: String,
    pub suppression_entries: u64,
    pub warnings: Vec<String>,
    /// Estimated charge per billing class when prices are given (fallbacks not included).
    pub estimated_charge: Option<BTreeMap<BillingClass, i64>>,
}

impl Scan {
    /// Chunks the valid rows of a lane make.
    pub fn chunks_in(&self, lane: Lane, chunk_size: usize) -> u64 {
        self.per_lane
            .get(&lane)
            .copied()
            .unwrap_or(0)
            .div_ceil(chunk_size as u64)
    }

    pub fn balanced(&self) -> bool {
        self.rows == self.valid + self.rejected + self.suppressed + self.duplicates
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    #[error(transparent)]
    Input(#[from] InputError),
    #[error("cannot write {path}: {source}")]
    Write { path: PathBuf, source: std::io::Error },
    #[error("stopped")]
    Stopped,
}

/// What classification needs of the campaign, computed once.
pub struct Classifier {
    kind: Kind,
    template: Option<crate::template::Template>,
    variable_keys: Vec<String>,
    variable_columns: Vec<String>,
    phone_column: String,
    name_column: Option<String>,
    suppression: Option<PhoneSet>,
    seen: Option<PhoneSet>,
}

struct Vars<'a> {
    name: Option<&'a str>,
    keys: &'a [String],
    values: &'a [Option<String>],
}

impl crate::api::VariableSource for Vars<'_> {
    fn name(&self) -> Option<&str> {
        self.name
    }
    fn var(&self, key: &str) -> Option<&str> {
        let index = self.keys.iter().position(|k| k == key)?;
        self.values[index].as_deref()
    }
}

/// The result of the order-free part of classification.
enum Draft {
    Rejected(Rejection),
    Valid { phone: String, lane: Lane },
}

impl Classifier {
    pub fn new(campaign: &Campaign) -> Result<Classifier, PrepareError> {
        let suppression = match &campaign.recipients.suppression {
            None => None,
            Some(path) => Some(load_suppression(path, &campaign.recipients.suppression_column)?),
        };
        Ok(Classifier {
            kind: campaign.kind,
            template: campaign.lane_text().cloned(),
            variable_keys: campaign.recipients.variables.iter().map(|(k, _)| k.clone()).collect(),
            variable_columns: campaign.recipients.variables.iter().map(|(_, c)| c.clone()).collect(),
            phone_column: campaign.recipients.phone_column.clone(),
            name_column: campaign.recipients.name_column.clone(),
            suppression,
            seen: campaign.recipients.drop_duplicates.then(PhoneSet::new),
        })
    }

    pub fn suppression_entries(&self) -> u64 {
        self.suppression.as_ref().map_or(0, PhoneSet::len)
    }

    pub fn column_spec(campaign: &Campaign) -> ColumnSpec {
        ColumnSpec {
            phone: campaign.recipients.phone_column.clone(),
            name: campaign.recipients.name_column.clone(),
            vars: campaign.recipients.variables.iter().map(|(_, c)| c.clone()).collect(),
        }
    }

    fn reject(&self, reason: RejectReason, column: &str, detail: impl Into<String>) -> Draft {
        Draft::Rejected(Rejection {
            reason,
            column: column.to_string(),
            detail: detail.into(),
        })
    }

    /// Everything about a row that does not depend on the rows before it.
    fn draft(&self, row: &RawRow, buffer: &mut String) -> Draft {
        if let Some(column) = &row.undecodable {
            return self.reject(
                RejectReason::NotText,
                column,
                "bytes are not text in the file's encoding",
            );
        }
        let phone = match row.phone.as_deref().map(phone::normalize) {
            None | Some(Err(PhoneError::Empty)) => {
                return self.reject(RejectReason::PhoneMissing, &self.phone_column, "empty")
            }
            Some(Err(error)) => {
                return self.reject(RejectReason::PhoneInvalid, &self.phone_column, error.to_string());
            }
            Some(Ok(phone)) => phone,
        };
        let vars = Vars {
            name: row.name.as_deref(),
            keys: &self.variable_keys,
            values: &row.vars,
        };
        let lane = match &self.template {
            Some(template) => {
                if let Err(missing) = template.render_into(&vars, buffer) {
                    let column = self.column_of(&missing.key);
                    return self.reject(
                        RejectReason::VariableMissing,
                        &column,
                        format!("#{{{}}} has no value", missing.key),
                    );
                }
                match self.lane_for(buffer) {
                    Ok(lane) => lane,
                    Err((reason, detail)) => return self.reject(reason, "message", detail),
                }
            }
            None => {
                // A BASIC brand template lives at the service (and a FREE image message has no
                // text): every mapped variable must have a value.
                for (index, value) in row.vars.iter().enumerate() {
                    if value.as_deref().is_none_or(str::is_empty) {
                        let key = &self.variable_keys[index];
                        return self.reject(
                            RejectReason::VariableMissing,
                            &self.variable_columns[index],
                            format!("#{{{key}}} has no value"),
                        );
                    }
                }
                Lane::Brand
            }
        };
        Draft::Valid { phone, lane }
    }

    fn column_of(&self, key: &str) -> String {
        if key == "name" {
            return self.name_column.clone().unwrap_or_else(|| "name".into());
        }
        self.variable_keys
            .iter()
            .position(|k| k == key)
            .map(|i| self.variable_columns[i].clone())
            .unwrap_or_else(|| key.to_string())
    }

    /// The lane of a filled text, or why it cannot go.
    fn lane_for(&self, text: &str) -> Result<Lane, (RejectReason, String)> {
        let bytes = || euc_kr_len(text).map_err(|error| (RejectReason::Unencodable, error.to_string()));
        match self.kind {
            Kind::Alimtalk | Kind::GatewayAlimtalk => {
                let chars = text.chars().count();
                if chars > ALIMTALK_MAX_CHARS {
                    return Err((
                        RejectReason::TooLong,
                        format!("{chars} characters, at most {ALIMTALK_MAX_CHARS}"),
                    ));
                }
                Ok(if self.kind == Kind::Alimtalk {
                    Lane::Alimtalk
                } else {
                    Lane::Gateway
                })
            }
            Kind::Brand => Ok(Lane::Brand),
            Kind::Sms | Kind::Lms => {
                let lane = if self.kind == Kind::Sms {
                    TextLane::Sms
                } else {
                    TextLane::Lms
                };
                let length = bytes()?;
                if length > lane.max_bytes() {
                    return Err((
                        RejectReason::TooLong,
                        format!("{length} bytes in EUC-KR, at most {}", lane.max_bytes()),
                    ));
                }
                Ok(if lane == TextLane::Sms { Lane::Sms } else { Lane::Lms })
            }
            Kind::Text => {
                let length = bytes()?;
                match TextLane::for_bytes(length) {
                    Some(TextLane::Sms) => Ok(Lane::Sms),
                    Some(TextLane::Lms) => Ok(Lane::Lms),
                    None => Err((
                        RejectReason::TooLong,
                        format!(
                            "{length} bytes in EUC-KR, over the LMS limit of {}",
                            crate::text::LMS_MAX_BYTES
                        ),
                    )),
                }
            }
        }
    }

    /// Classifies a batch in input order: the order-free part in parallel, then suppression and
    /// duplicates in sequence so the first occurrence of a number is the one kept. A valid row's
    /// fields move into its `Recipient`; the others keep their phone and name in the `RowRef`.
    pub fn classify(&mut self, batch: Vec<RawRow>) -> Vec<(RowRef, Fate)> {
        let drafts: Vec<Draft> = batch
            .par_iter()
            .map_init(String::new, |buffer, row| self.draft(row, buffer))
            .collect();
        batch
            .into_iter()
            .zip(drafts)
            .map(|(row, draft)| match draft {
                Draft::Rejected(rejection) => (RowRef::unsent(row), Fate::Rejected(rejection)),
                Draft::Valid { phone, lane } => {
                    if self.suppression.as_ref().is_some_and(|s| s.contains(&phone)) {
                        (RowRef::unsent(row), Fate::Suppressed)
                    } else if self.seen.as_mut().is_some_and(|seen| !seen.insert(&phone)) {
                        (RowRef::unsent(row), Fate::Duplicate)
                    } else {
                        let reference = RowRef {
                            row: row.row,
                            phone: None,
                            name: None,
                        };
                        let recipient = Recipient {
                            row: row.row,
                            phone,
                            name: row.name,
                            vars: row.vars.into_iter().map(Option::unwrap_or_default).collect(),
                            lane,
                        };
                        (reference, Fate::Valid(recipient))
                    }
                }
            })
            .collect()
    }
}

/// A row's number and, for a row that is not sent, its phone and name as the file has them.
#[derive(Debug, Clone, PartialEq)]
pub struct RowRef {
    pub row: u64,
    pub phone: Option<String>,
    pub name: Option<String>,
}

impl RowRef {
    fn unsent(row: RawRow) -> RowRef {
        RowRef {
            row: row.row,
            phone: row.phone,
            name: row.name,
        }
    }
}

/// Reads a suppression list: the `column` of a CSV or Parquet file (or its only column).
fn load_suppression(path: &Path, column: &str) -> Result<PhoneSet, PrepareError> {
    let format = if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("parquet")) {
        InputFormat::Parquet
    } else {
        InputFormat::Csv
    };
    let spec = ColumnSpec {
        phone: column.to_string(),
        name: None,
        vars: Vec::new(),
    };
    let mut source = input::open(path, format, crate::campaign::Encoding::Auto, &spec)?;
    let mut set = PhoneSet::new();
    while let Some(batch) = source.next_batch(BATCH_ROWS)? {
        for row in batch {
            if let Some(Ok(phone)) = row.phone.as_deref().map(phone::normalize) {
                set.insert(&phone);
            }
        }
    }
    Ok(set)
}

/// Writes `rejects.csv`: row number, column, reason, detail (no phone number: the row number finds it).
pub struct RejectsWriter {
    path: PathBuf,
    writer: csv::Writer<std::fs::File>,
}

impl RejectsWriter {
    pub fn create(path: &Path) -> Result<RejectsWriter, PrepareError> {
        let write_error = |source| PrepareError::Write {
            path: path.to_path_buf(),
            source,
        };
        let file = crate::files::create_private(path).map_err(write_error)?;
        let mut writer = csv::Writer::from_writer(file);
        writer
            .write_record(["row", "column", "reason", "detail"])
            .map_err(|e| write_error(e.into()))?;
        Ok(RejectsWriter {
            path: path.to_path_buf(),
            writer,
        })
    }

    pub fn write(&mut self, row: u64, rejection: &Rejection) -> Result<(), PrepareError> {
        self.writer
            .write_record([
                &row.to_string(),
                &rejection.column,
                rejection.reason.as_str(),
                &rejection.detail,
            ])
            .map_err(|e| PrepareError::Write {
                path: self.path.clone(),
                source: e.into(),
            })
    }

    pub fn finish(mut self) -> Result<(), PrepareError> {
        self.writer.flush().map_err(|source| PrepareError::Write {
            path: self.path.clone(),
            source,
        })?;
        self.writer.get_ref().sync_all().map_err(|source| PrepareError::Write {
            path: self.path.clone(),
            source,
        })
    }
}

/// Reads the whole input and classifies every row, calling `on_row` in input order. A reader
/// thread feeds batches through a bounded channel, so memory stays flat whatever the size.
/// `on_row` gets each row and its fate.
pub fn walk(
    campaign: &Campaign,
    mut on_row: impl FnMut(RowRef, Fate) -> Result<(), PrepareError>,
    mut on_batch: impl FnMut(u64),
) -> Result<Scan, PrepareError> {
    let mut classifier = Classifier::new(campaign)?;
    let spec = Classifier::column_spec(campaign);
    let mut source = input::open(
        &campaign.recipients.path,
        campaign.recipients.format,
        campaign.recipients.encoding,
        &spec,
    )?;
    let mut scan = Scan {
        encoding: source.encoding().to_string(),
        suppression_entries: classifier.suppression_entries(),
        ..Scan::default()
    };
    let (sender, receiver) = std::sync::mpsc::sync_channel::<Result<Vec<RawRow>, InputError>>(4);
    let reader = std::thread::spawn(move || loop {
        match source.next_batch(BATCH_ROWS) {
            Ok(Some(batch)) => {
                if sender.send(Ok(batch)).is_err() {
                    return;
                }
            }
            Ok(None) => return,
            Err(error) => {
                let _ = sender.send(Err(error));
                return;
            }
        }
    });
    let outcome = (|| -> Result<(), PrepareError> {
        for batch in receiver.iter() {
            let batch = batch?;
            let read = batch.len() as u64;
            for (row, fate) in classifier.classify(batch) {
                scan.rows += 1;
                match &fate {
                    Fate::Rejected(rejection) => {
                        scan.rejected += 1;
                        *scan
                            .rejected_by_reason
                            .entry(rejection.reason.as_str().to_string())
                            .or_default() += 1;
                    }
                    Fate::Suppressed => scan.suppressed += 1,
                    Fate::Duplicate => scan.duplicates += 1,
                    Fate::Valid(recipient) => {
                        scan.valid += 1;
                        *scan.per_lane.entry(recipient.lane).or_default() += 1;
                    }
                }
                on_row(row, fate)?;
            }
            on_batch(read);
        }
        Ok(())
    })();
    drop(receiver);
    let _ = reader.join();
    outcome?;
    scan.warnings = warnings(campaign);
    scan.estimated_charge = estimate(campaign, &scan);
    Ok(scan)
}

/// Advertising hygiene the validator points out without refusing.
pub fn warnings(campaign: &Campaign) -> Vec<String> {
    let mut warnings = Vec::new();
    if !campaign.is_advertising() {
        return warnings;
    }
    let Some(text) = campaign.message_text() else {
        if campaign.kind == Kind::Brand {
            warnings.push("advertising: the template's text is not known here; check it starts with (광고) and carries a free opt-out line".into());
        }
        return warnings;
    };
    if !text.trim_start().starts_with("(광고)") {
        warnings.push("advertising: the text does not start with (광고)".into());
    }
    let opt_out = ["무료거부", "무료 거부", "수신거부", "수신 거부", "080"];
    if !opt_out.iter().any(|marker| text.contains(marker)) {
        warnings
            .push("advertising: no free opt-out line (무료거부/수신거부 with an 080 number) found in the text".into());
    }
    warnings
}

/// The charge the valid rows would make, per billing class, when prices are given.
fn estimate(campaign: &Campaign, scan: &Scan) -> Option<BTreeMap<BillingClass, i64>> {
    let prices = campaign.prices.as_ref()?;
    let mut charge = BTreeMap::new();
    for (lane, count) in &scan.per_lane {
        let class = match lane {
            Lane::Alimtalk | Lane::Gateway => BillingClass::Alimtalk,
            Lane::Brand if campaign.reaches_non_friends() => BillingClass::BmNonfriend,
            Lane::Brand => BillingClass::BmFriend,
            Lane::Sms => BillingClass::Sms,
            Lane::Lms => BillingClass::Lms,
        };
        let price = prices.get(&class).copied().unwrap_or(0);
        *charge.entry(class).or_insert(0) += price * *count as i64;
    }
    Some(charge)
}
