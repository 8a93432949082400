//! Reconciliation: a ledger export compared with reports, entry by entry and per billing class (one run here, a month of runs in `statement`).

use crate::api::ledger::{BillingClass, ClassTotals, Ledger, LedgerEntry, LedgerKind};
use crate::files;
use crate::report::{self, ChargeState, ClassSummary, ReportRow};
use anyhow::Result;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// How the ledger and the report disagree on an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Problem {
    OnlyInLedger,
    OnlyInReport,
    AmountDiffers,
}

impl Problem {
    pub fn as_str(self) -> &'static str {
        match self {
            Problem::OnlyInLedger => "only_in_ledger",
            Problem::OnlyInReport => "only_in_report",
            Problem::AmountDiffers => "amount_differs",
        }
    }
}

/// Where a report's entry comes from: the run (its place among the runs compared) and its input row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Origin {
    pub run: usize,
    pub row: u64,
}

/// One difference between the ledger and the report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mismatch {
    pub problem: Problem,
    pub reference: String,
    pub billing_class: BillingClass,
    pub entry: LedgerKind,
    pub ledger_amount: Option<i64>,
    pub report_amount: Option<i64>,
    /// `None` for an entry only the ledger has.
    pub origin: Option<Origin>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Reconciliation {
    /// Per billing class: (ledger charged, ledger refunded, report charged, report refunded).
    pub classes: BTreeMap<BillingClass, [i64; 4]>,
    pub ledger_entries: u64,
    pub mismatches: u64,
    pub mismatches_file: PathBuf,
    pub balanced: bool,
}

type Key = (String, BillingClass, LedgerKind);

/// The ledger entries reports account for: (reference, class, entry) → (amount, origin).
#[derive(Debug, Default)]
pub struct Expected(BTreeMap<Key, (i64, Origin)>);

impl Expected {
    /// Adds the entries a report row of run `run` makes: the charge of its message (and its
    /// refund), and the charge of the fallback SMS/LMS the service sent for it.
    pub fn add(&mut self, row: &ReportRow, run: usize) {
        let reference = if row.id.is_empty() {
            row.uid.to_string()
        } else {
            row.id.to_string()
        };
        let origin = Origin { run, row: row.row };
        let amount = row.amount.unwrap_or(0);
        let mut expect = |class: BillingClass, entry: LedgerKind, amount: i64| {
            self.0.insert((reference.clone(), class, entry), (amount, origin));
        };
        if let (true, Some(class)) = (row.charge_state.billed(), row.billing_class) {
            expect(class, LedgerKind::Charge, amount);
            if row.charge_state == ChargeState::Refunded {
                expect(class, LedgerKind::Refund, amount);
            }
        }
        if let Some(class) = row.fallback {
            expect(class, LedgerKind::Charge, row.fallback_amount.unwrap_or(0));
        }
    }

    /// Adds the entries of other rows.
    pub fn extend(&mut self, other: Expected) {
        self.0.extend(other.0);
    }

    /// Matches ledger entries with these, entry by entry: answers every entry found on one side
    /// only or with another amount.
    pub fn compare<'a>(mut self, entries: impl IntoIterator<Item = &'a LedgerEntry>) -> Vec<Mismatch> {
        let mut mismatches = Vec::new();
        for entry in entries {
            let key = (entry.reference.clone(), entry.billing_class, entry.kind);
            let (problem, report_amount, origin) = match self.0.remove(&key) {
                Some((amount, _)) if amount == entry.amount => continue,
                Some((amount, origin)) => (Problem::AmountDiffers, Some(amount), Some(origin)),
                None => (Problem::OnlyInLedger, None, None),
            };
            mismatches.push(Mismatch {
                problem,
                reference: entry.reference.clone(),
                billing_class: entry.billing_class,
                entry: entry.kind,
                ledger_amount: Some(entry.amount),
                report_amount,
                origin,
            });
        }
        for ((reference, billing_class, entry), (amount, origin)) in self.0 {
            mismatches.push(Mismatch {
                problem: Problem::OnlyInReport,
                reference,
                billing_class,
                entry,
                ledger_amount: None,
                report_amount: Some(amount),
                origin: Some(origin),
            });
        }
        mismatches
    }
}

/// Reads a ledger export: the sandbox's `/_sandbox/ledger` JSON.
/// A ledger that cannot be read or is not an export refuses the comparison (exit 2, a page that
/// names the file in the console), as any input not fit to use does.
pub fn load_ledger(path: &Path) -> Result<Ledger> {
    let text = std::fs::read_to_string(path)
        .map_err(|error| crate::engine::Refusal(format!("cannot read ledger {}: {error}", path.display())))?;
    serde_json::from_str(&text).map_err(|error| {
        crate::engine::Refusal(format!(
            "{} is not a ledger export (the sandbox's /_sandbox/ledger JSON): {error}",
            path.display()
        ))
        .into()
    })
}

/// Per billing class: (ledger charged, ledger refunded, report charged, report refunded).
pub fn class_balance(
    ledger: &BTreeMap<BillingClass, ClassTotals>,
    report: &BTreeMap<BillingClass, ClassSummary>,
) -> BTreeMap<BillingClass, [i64; 4]> {
    let mut classes: BTreeMap<BillingClass, [i64; 4]> = BTreeMap::new();
    for (class, totals) in ledger {
        let entry = classes.entry(*class).or_default();
        entry[0] += totals.charged;
        entry[1] += totals.refunded;
    }
    for (class, totals) in report {
        let entry = classes.entry(*class).or_default();
        entry[2] += totals.charged;
        entry[3] += totals.refunded;
    }
    classes
}

/// Whether the ledger and the reports agree: no mismatched entry, and equal totals in every class.
pub fn balanced(mismatches: &[Mismatch], classes: &BTreeMap<BillingClass, [i64; 4]>) -> bool {
    mismatches.is_empty() && classes.values().all(|t| t[0] == t[2] && t[1] == t[3])
}

/// Writes the mismatches as CSV; with `runs`, a `run` column names the run each report entry came from.
pub fn write_mismatches(path: &Path, mismatches: &[Mismatch], runs: Option<&[PathBuf]>, bom: bool) -> Result<()> {
    let mut writer = report::csv_writer(files::create_private(path)?, bom)?;
    let mut header = vec![
        "problem",
        "reference",
        "billing_class",
        "entry",
        "ledger_amount",
        "report_amount",
    ];
    if runs.is_some() {
        header.push("run");
    }
    header.push("row");
    writer.write_record(&header)?;
    let optional = |value: Option<i64>| value.map(|v| v.to_string()).unwrap_or_default();
    for mismatch in mismatches {
        let mut record = vec![
            mismatch.problem.as_str().to_string(),
            mismatch.reference.clone(),
            mismatch.billing_class.as_str().to_string(),
            mismatch.entry.as_str().to_string(),
            optional(mismatch.ledger_amount),
            optional(mismatch.report_amount),
        ];
        if let Some(runs) = runs {
            let run = mismatch.origin.and_then(|origin| runs.get(origin.run));
            record.push(run.map(|run| run.display().to_string()).unwrap_or_default());
        }
        record.push(mismatch.origin.map(|o| o.row.to_string()).unwrap_or_default());
        writer.write_record(&record)?;
    }
    writer.flush()?;
    Ok(())
}

/// Compares `ledger_path` (the sandbox's `/_sandbox/ledger` JSON) with the run's report rows and
/// writes `reconcile.csv` (the mismatches) into the run directory.
pub fn reconcile(run_dir: &Path, ledger_path: &Path) -> Result<Reconciliation> {
    let ledger = load_ledger(ledger_path)?;
    let mut expected = Expected::default();
    let summary = report::RunRows::open(run_dir)?.walk(|row, _| {
        expected.add(&row, 0);
        Ok(())
    })?;
    let mismatches = expected.compare(&ledger.entries);
    let classes = class_balance(&ledger.totals(), &summary.classes);
    let path = run_dir.join("reconcile.csv");
    write_mismatches(&path, &mismatches, None, false)?;
    Ok(Reconciliation {
        balanced: balanced(&mismatches, &classes),
        classes,
        ledger_entries: ledger.entries.len() as u64,
        mismatches: mismatches.len() as u64,
        mismatches_file: path,
    })
}
