//! A purged run's rows: each report row as a JSON line with its number masked and no name, variable or detail a person typed, written once by the purge and read instead of the plan (whose recipients file is gone), so that a purged run still reports and reconciles its totals.

use super::row::{ChargeState, Outcome, ReportRow};
use crate::api::ledger::BillingClass;
use crate::campaign::{Kind, Lane};
use crate::plan::RejectReason;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};
use std::path::Path;

/// The file in the purge's folder.
pub const FROZEN_ROWS: &str = "rows.jsonl";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "is", rename_all = "snake_case")]
enum FrozenOutcome {
    Rejected { reason: RejectReason },
    Duplicate,
    Suppressed,
    Capped,
    Pending,
    Uncertain,
    Answered { status: String, accepted: bool },
}

/// One row as the purge keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FrozenRow {
    row: u64,
    /// `010-****-5678`, or empty when the row held no mobile number.
    phone: String,
    kind: Kind,
    #[serde(default)]
    lane: Option<Lane>,
    #[serde(default)]
    chunk: Option<u32>,
    uid: String,
    id: String,
    send_group_id: String,
    outcome: FrozenOutcome,
    final_result: String,
    /// The service's error for an answered row, numbers masked; nothing for the others (a
    /// rejection's detail quotes what a person typed).
    error: String,
    #[serde(default)]
    billing_class: Option<BillingClass>,
    charge_state: ChargeState,
    #[serde(default)]
    amount: Option<i64>,
    #[serde(default)]
    fallback: Option<BillingClass>,
    #[serde(default)]
    fallback_amount: Option<i64>,
    #[serde(default)]
    sent_at: Option<i64>,
}

/// A number as the purge keeps it: masked, or nothing when the text held no mobile number.
fn masked_number(text: &str) -> String {
    match crate::phone::mask_phones(text) {
        std::borrow::Cow::Owned(masked) => masked,
        std::borrow::Cow::Borrowed(_) => String::new(),
    }
}

impl FrozenRow {
    fn of(row: &ReportRow, sent_at: Option<i64>) -> FrozenRow {
        let outcome = match &row.outcome {
            Outcome::Rejected(reason) => FrozenOutcome::Rejected { reason: *reason },
            Outcome::Duplicate => FrozenOutcome::Duplicate,
            Outcome::Suppressed => FrozenOutcome::Suppressed,
            Outcome::Capped => FrozenOutcome::Capped,
            Outcome::Pending => FrozenOutcome::Pending,
            Outcome::Uncertain => FrozenOutcome::Uncertain,
            Outcome::Answered { status, accepted } => FrozenOutcome::Answered {
                status: status.to_string(),
                accepted: *accepted,
            },
        };
        let error = match &row.outcome {
            Outcome::Answered { .. } => crate::phone::mask_phones(&row.error).into_owned(),
            _ => String::new(),
        };
        FrozenRow {
            row: row.row,
            phone: masked_number(&row.phone),
            kind: row.kind,
            lane: row.lane,
            chunk: row.chunk,
            uid: row.uid.to_string(),
            id: row.id.to_string(),
            send_group_id: row.send_group_id.to_string(),
            outcome,
            final_result: row.final_result.to_string(),
            error,
            billing_class: row.billing_class,
            charge_state: row.charge_state,
            amount: row.amount,
            fallback: row.fallback,
            fallback_amount: row.fallback_amount,
            sent_at,
        }
    }

    fn into_row(self) -> (ReportRow, Option<i64>) {
        let outcome = match self.outcome {
            FrozenOutcome::Rejected { reason } => Outcome::Rejected(reason),
            FrozenOutcome::Duplicate => Outcome::Duplicate,
            FrozenOutcome::Suppressed => Outcome::Suppressed,
            FrozenOutcome::Capped => Outcome::Capped,
            FrozenOutcome::Pending => Outcome::Pending,
            FrozenOutcome::Uncertain => Outcome::Uncertain,
            FrozenOutcome::Answered { status, accepted } => Outcome::Answered {
                status: status.into(),
                accepted,
            },
        };
        let row = ReportRow {
            row: self.row,
            phone: self.phone.into(),
            name: Default::default(),
            kind: self.kind,
            lane: self.lane,
            chunk: self.chunk,
            uid: self.uid.into(),
            id: self.id.into(),
            send_group_id: self.send_group_id.into(),
            outcome,
            final_result: self.final_result.into(),
            error: self.error.into(),
            billing_class: self.billing_class,
            charge_state: self.charge_state,
            amount: self.amount,
            fallback: self.fallback,
            fallback_amount: self.fallback_amount,
        };
        (row, self.sent_at)
    }
}

/// Writes the rows of a purged run, one JSON line each, in input order.
pub struct FrozenWriter {
    out: std::io::BufWriter<std::fs::File>,
}

impl FrozenWriter {
    pub fn create(path: &Path) -> Result<FrozenWriter> {
        let file = crate::files::create_private(path).with_context(|| format!("cannot write {}", path.display()))?;
        Ok(FrozenWriter {
            out: std::io::BufWriter::with_capacity(256 * 1024, file),
        })
    }

    pub fn push(&mut self, row: &ReportRow, sent_at: Option<i64>) -> Result<()> {
        serde_json::to_writer(&mut self.out, &FrozenRow::of(row, sent_at))?;
        self.out.write_all(b"\n")?;
        Ok(())
    }

    /// Flushes the rows to stable storage.
    pub fn finish(self) -> Result<()> {
        let file = self.out.into_inner().map_err(|error| error.into_error())?;
        file.sync_all()?;
        Ok(())
    }
}

/// Reads a purged run's rows in order, handing each with its send time to `each`.
pub fn read(path: &Path, mut each: impl FnMut(ReportRow, Option<i64>) -> Result<()>) -> Result<()> {
    let file = std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    for (index, line) in std::io::BufReader::with_capacity(256 * 1024, file).lines().enumerate() {
        let line = line.with_context(|| format!("cannot read {}", path.display()))?;
        let (row, sent_at) = parse(&line).with_context(|| format!("{}: line {}", path.display(), index + 1))?;
        each(row, sent_at)?;
    }
    Ok(())
}

fn parse(line: &str) -> Result<(ReportRow, Option<i64>)> {
    let frozen: FrozenRow = serde_json::from_str(line)?;
    Ok(frozen.into_row())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn answered(phone: &str, error: &str) -> ReportRow {
        ReportRow {
            row: 7,
            phone: phone.into(),
            name: "김민수".into(),
            kind: Kind::Sms,
            lane: Some(Lane::Sms),
            chunk: Some(2),
            uid: "123".into(),
            id: "".into(),
            send_group_id: "g-1".into(),
            outcome: Outcome::Answered {
                status: "SMS_00".into(),
                accepted: true,
            },
            final_result: "".into(),
            error: error.into(),
            billing_class: Some(BillingClass::Sms),
            charge_state: ChargeState::Charged,
            amount: Some(9),
            fallback: None,
            fallback_amount: None,
        }
    }

    #[test]
    fn a_row_keeps_its_figures_and_loses_name_and_number() {
        let mut written = Vec::new();
        serde_json::to_writer(
            &mut written,
            &FrozenRow::of(&answered("01012345678", "to 010-1234-5678"), Some(5)),
        )
        .unwrap();
        let text = String::from_utf8(written).unwrap();
        assert!(
            !text.contains("01012345678") && !text.contains("김민수") && !text.contains("1234-5678"),
            "{text}"
        );
        let (row, sent_at) = parse(&text).unwrap();
        assert_eq!(sent_at, Some(5));
        assert_eq!(row.phone.as_str(), "010-****-5678");
        assert_eq!(row.name.as_str(), "");
        let mut expected = answered("010-****-5678", "to 010-****-5678");
        expected.name = "".into();
        assert_eq!(row, expected);
    }

    #[test]
    fn a_rejected_rows_typed_text_is_not_kept() {
        let mut row = answered("홍길동@example.com", "phone: not a Korean mobile number");
        row.outcome = Outcome::Rejected(RejectReason::PhoneInvalid);
        let (back, _) = parse(&serde_json::to_string(&FrozenRow::of(&row, None)).unwrap()).unwrap();
        assert_eq!((back.phone.as_str(), back.error.as_str()), ("", ""));
        assert_eq!(back.outcome, Outcome::Rejected(RejectReason::PhoneInvalid));
    }

    proptest! {
        /// Any line is read or refused, never a panic.
        #[test]
        fn any_line_is_read_or_refused(line in "\\PC{0,120}") {
            let _ = parse(&line);
        }

        /// What the summary counts survives the freezing whole.
        #[test]
        fn the_counted_fields_survive(
            row in 1u64..10_000_000,
            amount in proptest::option::of(0i64..100_000),
            accepted in any::<bool>(),
            status in "[A-Z_0-9]{2,10}",
            sent_at in proptest::option::of(0i64..2_000_000_000_000),
        ) {
            let mut original = answered("01012345678", "");
            original.row = row;
            original.amount = amount;
            original.outcome = Outcome::Answered { status: status.as_str().into(), accepted };
            let (back, at) = parse(&serde_json::to_string(&FrozenRow::of(&original, sent_at)).unwrap()).unwrap();
            prop_assert_eq!(at, sent_at);
            prop_assert_eq!(back.row, original.row);
            prop_assert_eq!(back.amount, original.amount);
            prop_assert_eq!(&back.outcome, &original.outcome);
            prop_assert_eq!(back.charge_state, original.charge_state);
            prop_assert_eq!(back.billing_class, original.billing_class);
        }
    }
}
