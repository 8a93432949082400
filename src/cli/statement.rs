//! `msgbatch statement`: a month's charges over runs, printed for people or as JSON, exiting 1 when the ledger disagrees.

use super::exit::Exit;
use super::output;
use crate::statement::{self, StatementOptions};
use anyhow::Result;
use std::path::PathBuf;

pub fn statement(run_dirs: &[PathBuf], options: &StatementOptions, json: bool) -> Result<Exit> {
    let statement = statement::write(run_dirs, options)?;
    if json {
        output::json(&statement)?;
    } else {
        let won = statement::won;
        println!("statement {}: {} run(s)", statement.month, statement.runs.len());
        let total = &statement.total;
        for (name, totals) in statement
            .classes
            .iter()
            .map(|(class, totals)| (class.as_str(), totals))
            .chain([("total", total)])
        {
            println!(
                "  {name:<13} charged {} ({} rows), refunded {}, net {}{}",
                won(totals.charged),
                totals.charged_count,
                won(totals.refunded),
                won(totals.net()),
                if totals.unsettled() {
                    format!(
                        " (provisional {}, disputed {})",
                        won(totals.provisional),
                        won(totals.disputed)
                    )
                } else {
                    String::new()
                }
            );
        }
        for (campaign, totals) in &statement.campaigns {
            println!("  campaign {campaign}: net {}", won(totals.net()));
        }
        for run in &statement.runs {
            if !run.status.complete {
                eprintln!(
                    "warning: run {} is not complete (uncertain {}, pending {}): only what the service answered for is counted",
                    run.run_dir.display(),
                    run.status.uncertain,
                    run.status.pending
                );
            }
            if run.sends_in_month == 0 {
                eprintln!(
                    "warning: run {} sent nothing in {}",
                    run.run_dir.display(),
                    statement.month
                );
            }
        }
        if let Some(ledger) = &statement.ledger {
            output::class_balance(&ledger.classes, "runs");
            println!(
                "ledger {}: {} entries of {} ({} of other months left out), {} mismatch(es){}",
                ledger.ledger.display(),
                ledger.entries,
                statement.month,
                ledger.other_months,
                ledger.mismatches.len(),
                if ledger.mismatches.is_empty() {
                    String::new()
                } else {
                    format!(": see {}", ledger.mismatches_file.display())
                }
            );
        }
        for file in &statement.files {
            println!("wrote {}", file.display());
        }
    }
    Ok(match &statement.ledger {
        Some(ledger) if !ledger.balanced => Exit::Failed,
        _ => Exit::Done,
    })
}
