//! `msgbatch purge`: each run's personal data destroyed (or kept, when it ended less than `--older-than` days ago), said run by run.

use super::exit::Exit;
use super::output;
use crate::purge::Purged;
use anyhow::Result;
use std::path::PathBuf;

pub fn purge(run_dirs: &[PathBuf], older_than: Option<u32>, json: bool) -> Result<Exit> {
    // The report written again from the kept rows: as `msgbatch report` writes it by default.
    let options = crate::report::ReportOptions {
        lang: crate::report::Lang::En,
        csv_bom: false,
        xlsx: crate::report::Workbook::WhenOneSheet,
        raw_csv: crate::report::RawCsv::Leave,
    };
    let mut done = Vec::new();
    for run_dir in run_dirs {
        let purged = crate::purge::purge(run_dir, older_than, &options)?;
        if !json {
            let ended = |at: Option<i64>| {
                at.and_then(chrono::DateTime::from_timestamp_millis)
                    .map(|at| {
                        at.with_timezone(&crate::campaign::quiet::kst())
                            .format("%Y-%m-%d %H:%M KST")
                            .to_string()
                    })
                    .unwrap_or_else(|| "nothing answered".into())
            };
            match &purged {
                Purged::Purged { rows, ended_at, .. } => {
                    println!(
                        "{}: purged ({} rows kept countable, numbers masked; last answer {})",
                        run_dir.display(),
                        crate::text::count(*rows),
                        ended(*ended_at)
                    );
                    if let Ok(Some(input)) = input_file(run_dir) {
                        println!(
                            "  the recipients file it was sent from, {}, is yours: it still holds names and numbers",
                            input.display()
                        );
                    }
                }
                Purged::Already => println!("{}: purged before", run_dir.display()),
                Purged::Kept { ended_at } => println!(
                    "{}: kept (last answer {}, less than {} days ago)",
                    run_dir.display(),
                    ended(*ended_at),
                    older_than.unwrap_or_default()
                ),
            }
        }
        done.push(serde_json::json!({ "run_dir": run_dir, "result": purged }));
    }
    if json {
        output::json(&done)?;
    }
    Ok(Exit::Done)
}

/// The input file a purged run named, if it is still there.
fn input_file(run_dir: &std::path::Path) -> Result<Option<PathBuf>> {
    let checkpoint = crate::engine::checkpoint::Checkpoint::open(&crate::engine::checkpoint_dir(run_dir), false)?;
    Ok(checkpoint
        .meta()?
        .map(|meta| meta.input_file)
        .filter(|path| path.exists()))
}
