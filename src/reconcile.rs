//! Reconciliation: a ledger export compared with the run's report, entry by entry and per billing class.

use crate::api::ledger::BillingClass;
use crate::api::ledger::{Ledger, LedgerKind};
use crate::files;
use crate::report::{self, ChargeState};
use anyhow::{Context, Result};
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

/// One difference between the ledger and the report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mismatch {
    pub problem: Problem,
    pub reference: String,
    pub billing_class: BillingClass,
    pub entry: LedgerKind,
    pub ledger_amount: Option<i64>,
    pub report_amount: Option<i64>,
    pub row: Option<u64>,
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

/// Compares `ledger_path` (the sandbox's `/_sandbox/ledger` JSON) with the run's report rows and
/// writes `reconcile.csv` (the mismatches) into the run directory.
pub fn reconcile(run_dir: &Path, ledger_path: &Path) -> Result<Reconciliation> {
    let text = std::fs::read_to_string(ledger_path)
        .with_context(|| format!("cannot read ledger {}", ledger_path.display()))?;
    let ledger: Ledger = serde_json::from_str(&text).with_context(|| {
        format!(
            "{} is not a ledger export (the sandbox's /_sandbox/ledger JSON)",
            ledger_path.display()
        )
    })?;
    // What the report says the ledger must hold: (reference, class, entry) -> (amount, row).
    let mut expected: BTreeMap<Key, (i64, u64)> = BTreeMap::new();
    let summary = report::RunRows::open(run_dir)?.walk(|row, _| {
        let reference = if row.id.is_empty() {
            row.uid.clone()
        } else {
            row.id.clone()
        };
        let amount = row.amount.unwrap_or(0);
        let mut expect = |class: BillingClass, entry: LedgerKind, amount: i64| {
            expected.insert((reference.clone(), class, entry), (amount, row.row));
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
        Ok(())
    })?;
    let mut result = Reconciliation {
        ledger_entries: ledger.entries.len() as u64,
        ..Reconciliation::default()
    };
    let mut mismatches = Vec::new();
    for entry in &ledger.entries {
        let totals = result.classes.entry(entry.billing_class).or_default();
        totals[if entry.kind == LedgerKind::Charge { 0 } else { 1 }] += entry.amount;
        let key = (entry.reference.clone(), entry.billing_class, entry.kind);
        let (problem, report_amount, row) = match expected.remove(&key) {
            Some((amount, _)) if amount == entry.amount => continue,
            Some((amount, row)) => (Problem::AmountDiffers, Some(amount), Some(row)),
            None => (Problem::OnlyInLedger, None, None),
        };
        mismatches.push(Mismatch {
            problem,
            reference: entry.reference.clone(),
            billing_class: entry.billing_class,
            entry: entry.kind,
            ledger_amount: Some(entry.amount),
            report_amount,
            row,
        });
    }
    for ((reference, billing_class, entry), (amount, row)) in expected {
        mismatches.push(Mismatch {
            problem: Problem::OnlyInReport,
            reference,
            billing_class,
            entry,
            ledger_amount: None,
            report_amount: Some(amount),
            row: Some(row),
        });
    }
    for (class, totals) in &summary.classes {
        let entry = result.classes.entry(*class).or_default();
        entry[2] += totals.charged;
        entry[3] += totals.refunded;
    }
    let path = run_dir.join("reconcile.csv");
    let mut writer = csv::Writer::from_writer(files::create_private(&path)?);
    writer.write_record([
        "problem",
        "reference",
        "billing_class",
        "entry",
        "ledger_amount",
        "report_amount",
        "row",
    ])?;
    let optional = |value: Option<i64>| value.map(|v| v.to_string()).unwrap_or_default();
    for mismatch in &mismatches {
        writer.write_record([
            mismatch.problem.as_str().to_string(),
            mismatch.reference.clone(),
            mismatch.billing_class.as_str().to_string(),
            mismatch.entry.as_str().to_string(),
            optional(mismatch.ledger_amount),
            optional(mismatch.report_amount),
            mismatch.row.map(|r| r.to_string()).unwrap_or_default(),
        ])?;
    }
    writer.flush()?;
    result.mismatches = mismatches.len() as u64;
    result.mismatches_file = path;
    result.balanced = mismatches.is_empty() && result.classes.values().all(|t| t[0] == t[2] && t[1] == t[3]);
    Ok(result)
}
