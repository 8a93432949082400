//! The lines of figures a page writes in words: the check's accounting (rows = valid + rejected + duplicates + suppressed, + capped when the frequency cap held rows back) and a run's (rows = rejected + duplicates + suppressed + sent + uncertain + pending, + capped likewise).

use super::Words;
use crate::text::count;

/// The accounting line in words: rows = valid + rejected + duplicates + suppressed (+ capped,
/// when the frequency cap held rows back).
pub fn accounting_line(w: &Words, [rows, valid, rejected, duplicates, suppressed, capped]: [u64; 6]) -> String {
    let mut line = format!(
        "{} {} = {} {} + {} {} + {} {} + {} {}",
        w.accounting_rows,
        count(rows),
        w.valid,
        count(valid),
        w.rejected,
        count(rejected),
        w.duplicates,
        count(duplicates),
        w.suppressed,
        count(suppressed)
    );
    if capped > 0 {
        line.push_str(&format!(" + {} {}", w.capped, count(capped)));
    }
    line
}

/// The check's figures in the order [`accounting_line`] takes them.
pub fn scan_figures(scan: &crate::plan::Scan) -> [u64; 6] {
    [
        scan.rows,
        scan.valid,
        scan.rejected,
        scan.duplicates,
        scan.suppressed,
        scan.capped,
    ]
}

/// A run's status as one line in words; `sending` only while requests are out.
pub fn status_equation(w: &Words, status: &crate::engine::Status) -> String {
    let mut line = format!(
        "{} {} = {} {} + {} {} + {} {} + {} {} + {} {} + {} {}",
        w.accounting_rows,
        count(status.rows),
        w.rejected,
        count(status.rejected),
        w.duplicates,
        count(status.duplicates),
        w.suppressed,
        count(status.suppressed),
        w.sent,
        count(status.sent),
        w.uncertain,
        count(status.uncertain),
        w.pending,
        count(status.pending)
    );
    if status.capped > 0 {
        line.push_str(&format!(" + {} {}", w.capped, count(status.capped)));
    }
    if status.sending > 0 {
        line.push_str(&format!(" + {} {}", w.in_flight, count(status.sending)));
    }
    line
}
