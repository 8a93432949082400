//! The statement's files: `statement.csv` (one line per day, run and billing class; its formula-like texts marked for spreadsheets), `statement.xlsx` and `statement.html` (for people). A run is named by its directory's own name, never a path.

use super::{LedgerComparison, Line, RunInfo, Statement};
use crate::report::xlsx::{self, Formats, TOTALS_HEADER};
use crate::report::{csv_writer, escape, won, Cell, ClassSummary, Staged, CLASS_TOTALS};
use anyhow::{Context, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The columns of `statement.csv`: the line's keys, its class totals as summary.json names them,
/// and `net`. Pinned: scripts read them by name.
fn csv_columns() -> Vec<&'static str> {
    ["day", "campaign", "run", "kind", "billing_class"]
        .into_iter()
        .chain(CLASS_TOTALS)
        .chain(["net"])
        .collect()
}

fn text(value: impl ToString) -> Cell<'static> {
    Cell::Text(value.to_string().into())
}

/// Totals and what stays charged, as cells.
fn totals_and_net(totals: &ClassSummary) -> impl Iterator<Item = Cell<'static>> {
    xlsx::totals_cells(totals)
        .into_iter()
        .chain([Cell::Money(Some(totals.net()))])
}

fn line_cells(line: &Line) -> Vec<Cell<'_>> {
    [
        text(&line.day),
        text(&line.campaign),
        text(&line.run),
        text(&line.kind),
        text(line.billing_class),
    ]
    .into_iter()
    .chain(totals_and_net(&line.totals))
    .collect()
}

fn run_cells(run: &RunInfo) -> Vec<Cell<'_>> {
    let count = |n: u64| Cell::Count(Some(n));
    vec![
        text(&run.name),
        text(&run.campaign),
        text(&run.kind),
        Cell::Flag(run.status.complete),
        count(run.sends_in_month),
        count(run.status.rows),
        count(run.status.sent),
        count(run.status.uncertain),
        count(run.status.pending),
    ]
}

const RUN_HEADER: [&str; 9] = [
    "run",
    "campaign",
    "kind",
    "complete",
    "sent in month",
    "rows",
    "sent",
    "uncertain",
    "pending",
];

/// A header: the key columns, then the totals.
fn totals_header<'a>(keys: &[&'a str]) -> Vec<&'a str> {
    keys.iter().copied().chain(TOTALS_HEADER).chain(["net"]).collect()
}

/// One row per key with its totals.
fn totals_rows<'a, K: ToString>(totals: impl IntoIterator<Item = (K, &'a ClassSummary)>) -> Vec<Vec<Cell<'static>>> {
    totals
        .into_iter()
        .map(|(key, totals)| std::iter::once(text(key)).chain(totals_and_net(totals)).collect())
        .collect()
}

fn ledger_rows(comparison: &LedgerComparison) -> Vec<Vec<Cell<'_>>> {
    comparison
        .classes
        .iter()
        .map(|(class, [lc, lr, rc, rr])| {
            let money = |n: &i64| Cell::Money(Some(*n));
            vec![
                text(class),
                money(lc),
                money(lr),
                money(rc),
                money(rr),
                Cell::Flag(lc == rc && lr == rr),
            ]
        })
        .collect()
}

const LEDGER_HEADER: [&str; 6] = [
    "billing class",
    "ledger charged",
    "ledger refunded",
    "runs charged",
    "runs refunded",
    "agree",
];

const MISMATCH_HEADER: [&str; 8] = [
    "problem",
    "reference",
    "billing class",
    "entry",
    "ledger amount",
    "report amount",
    "run",
    "row",
];

fn mismatch_rows(statement: &Statement, comparison: &LedgerComparison) -> Vec<Vec<Cell<'static>>> {
    comparison
        .mismatches
        .iter()
        .map(|mismatch| {
            let run = mismatch
                .origin
                .and_then(|origin| statement.runs.get(origin.run))
                .map(|run| run.name.clone())
                .unwrap_or_default();
            vec![
                text(mismatch.problem.as_str()),
                text(&mismatch.reference),
                text(mismatch.billing_class),
                text(mismatch.entry.as_str()),
                Cell::Money(mismatch.ledger_amount),
                Cell::Money(mismatch.report_amount),
                Cell::Text(run.into()),
                Cell::Count(mismatch.origin.map(|origin| origin.row)),
            ]
        })
        .collect()
}

/// Writes the three files into `out`, each complete or not at all.
pub(super) fn write_all(statement: &Statement, out: &Path, bom: bool) -> Result<Vec<PathBuf>> {
    let csv_file = Staged::new(out.join("statement.csv"));
    let mut writer = csv_writer(csv_file.create()?, bom)?;
    writer.write_record(csv_columns())?;
    // Opened by people in spreadsheets: a campaign named `=…` must not become a formula.
    for line in &statement.lines {
        writer.write_record(line_cells(line).iter().map(Cell::spreadsheet_text))?;
    }
    writer.flush()?;
    drop(writer);

    let xlsx_file = Staged::new(out.join("statement.xlsx"));
    let mut workbook = xlsx::streaming_workbook(out)?;
    let formats = Formats::new();
    let total = std::iter::once(("total", &statement.total));
    xlsx::table_sheet(
        &mut workbook,
        "By class",
        &totals_header(&["billing class"]),
        totals_rows(
            statement
                .classes
                .iter()
                .map(|(class, totals)| (class.as_str(), totals))
                .chain(total),
        ),
        &formats,
    )?;
    xlsx::table_sheet(
        &mut workbook,
        "By campaign",
        &totals_header(&["campaign"]),
        totals_rows(&statement.campaigns),
        &formats,
    )?;
    xlsx::table_sheet(
        &mut workbook,
        "By day",
        &totals_header(&["day"]),
        totals_rows(&statement.days),
        &formats,
    )?;
    xlsx::table_sheet(
        &mut workbook,
        "Lines",
        &totals_header(&["day", "campaign", "run", "kind", "billing class"]),
        statement.lines.iter().map(line_cells),
        &formats,
    )?;
    xlsx::table_sheet(
        &mut workbook,
        "Runs",
        &RUN_HEADER,
        statement.runs.iter().map(run_cells),
        &formats,
    )?;
    if let Some(comparison) = &statement.ledger {
        xlsx::table_sheet(
            &mut workbook,
            "Ledger",
            &LEDGER_HEADER,
            ledger_rows(comparison),
            &formats,
        )?;
        xlsx::table_sheet(
            &mut workbook,
            "Mismatches",
            &MISMATCH_HEADER,
            mismatch_rows(statement, comparison),
            &formats,
        )?;
    }
    workbook.save_to_writer(std::io::BufWriter::new(xlsx_file.create()?))?;

    let html_file = Staged::new(out.join("statement.html"));
    html_file
        .create()?
        .write_all(html(statement).as_bytes())
        .with_context(|| format!("cannot write {}", out.join("statement.html").display()))?;
    Ok(vec![csv_file.commit()?, xlsx_file.commit()?, html_file.commit()?])
}

/// An HTML table of cells, amounts in won.
fn html_table<'a>(header: &[&str], rows: impl IntoIterator<Item = Vec<Cell<'a>>>) -> String {
    let mut table = String::from("<table><tr>");
    for name in header {
        table.push_str(&format!("<th>{}</th>", escape(name)));
    }
    table.push_str("</tr>");
    for cells in rows {
        table.push_str("<tr>");
        for cell in cells {
            let shown = match cell {
                Cell::Money(Some(amount)) => won(amount),
                Cell::Flag(true) => "yes".into(),
                Cell::Flag(false) => "no".into(),
                other => other.text(),
            };
            table.push_str(&format!("<td>{}</td>", escape(&shown)));
        }
        table.push_str("</tr>");
    }
    table.push_str("</table>");
    table
}

/// A self-contained page: the month's totals, by class, campaign and day, the runs and the ledger comparison.
fn html(statement: &Statement) -> String {
    let total = &statement.total;
    let mut body = format!(
        "<h1>Statement {}</h1><p><strong>charged {} − refunded {} = {}</strong> over {} run(s){}</p>",
        statement.month,
        won(total.charged),
        won(total.refunded),
        won(total.net()),
        statement.runs.len(),
        if total.unsettled() {
            format!(
                "; of the charges, {} provisional (results not settled) and {} disputed (given up)",
                won(total.provisional),
                won(total.disputed)
            )
        } else {
            String::new()
        }
    );
    let total_row = std::iter::once(("total", total));
    body.push_str("<h2>By billing class</h2>");
    body.push_str(&html_table(
        &totals_header(&["billing class"]),
        totals_rows(statement.classes.iter().map(|(c, t)| (c.as_str(), t)).chain(total_row)),
    ));
    body.push_str("<h2>By campaign</h2>");
    body.push_str(&html_table(
        &totals_header(&["campaign"]),
        totals_rows(&statement.campaigns),
    ));
    body.push_str("<h2>By day</h2>");
    body.push_str(&html_table(&totals_header(&["day"]), totals_rows(&statement.days)));
    body.push_str("<h2>Runs</h2>");
    body.push_str(&html_table(&RUN_HEADER, statement.runs.iter().map(run_cells)));
    if statement.runs.iter().any(|run| !run.status.complete) {
        body.push_str("<p>A run that is not complete counts only what the service answered for: its uncertain and pending rows are not charged here.</p>");
    }
    if let Some(comparison) = &statement.ledger {
        body.push_str(&format!(
            "<h2>Ledger</h2><p>{} ({} entries of {}; {} of other months left out): <strong>{}</strong></p>",
            // The file's own name: its folder is the server's (an upload, in the console).
            escape(&comparison.ledger.file_name().unwrap_or_default().to_string_lossy()),
            comparison.entries,
            statement.month,
            comparison.other_months,
            if comparison.balanced {
                "agrees with the runs".to_string()
            } else {
                format!("{} mismatch(es)", comparison.mismatches.len())
            }
        ));
        body.push_str(&html_table(&LEDGER_HEADER, ledger_rows(comparison)));
        if !comparison.mismatches.is_empty() {
            body.push_str(&html_table(&MISMATCH_HEADER, mismatch_rows(statement, comparison)));
        }
    }
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>msgbatch statement {}</title>\
         <style>body{{font-family:sans-serif;margin:2em;max-width:70em}}table{{border-collapse:collapse;margin-bottom:1em}}td,th{{border:1px solid #ccc;padding:.3em .6em;text-align:right}}td:first-child,th:first-child{{text-align:left}}</style></head>\
         <body>{body}</body></html>\n",
        statement.month
    )
}
