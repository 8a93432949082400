//! The run's summary for people: what the rows add up to (funnel, lanes, the service's answers, send times), as Markdown and a self-contained HTML page.

mod html;
mod labels;
mod reject_detail;
mod timeline;

pub(crate) use html::escape;
pub use html::html;
pub use labels::Lang;
pub use labels::{
    class as class_label, final_result as final_result_label, kind as kind_label, lane as lane_label, reject_reason,
    status as status_label, won,
};
pub use reject_detail::reject_detail;
pub use timeline::SendTimes;

use super::row::{ChargeState, Outcome, ReportRow};
use super::Summary;
use crate::campaign::Lane;
use serde::Serialize;
use std::collections::BTreeMap;

/// How far the rows got: each stage counts the rows that reached it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Funnel {
    pub rows: u64,
    /// Neither rejected, nor a duplicate, nor suppressed.
    pub valid: u64,
    /// In a request the service answered.
    pub sent: u64,
    pub accepted: u64,
    pub not_accepted: u64,
    /// The primary message reached the phone: accepted on the standard deployment (its send
    /// response is the final record), final result `OK` on the gateway.
    pub delivered: u64,
    pub fallback_sent: u64,
    pub uncertain: u64,
    pub pending: u64,
}

impl Funnel {
    fn count(&mut self, row: &ReportRow) {
        self.rows += 1;
        match &row.outcome {
            Outcome::Rejected(_) | Outcome::Duplicate | Outcome::Suppressed | Outcome::Capped => return,
            Outcome::Pending => self.pending += 1,
            Outcome::Uncertain => self.uncertain += 1,
            Outcome::Answered { accepted, .. } => {
                self.sent += 1;
                if *accepted {
                    self.accepted += 1;
                } else {
                    self.not_accepted += 1;
                }
            }
        }
        self.valid += 1;
        // `charged` is exactly "the primary message was delivered" (row::charge decides it once).
        if row.charge_state == ChargeState::Charged {
            self.delivered += 1;
        }
        if row.fallback.is_some() {
            self.fallback_sent += 1;
        }
    }
}

/// The service's per-recipient statuses, split by whether each meant it took the message.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Answers {
    pub accepted: BTreeMap<String, u64>,
    pub not_accepted: BTreeMap<String, u64>,
}

impl Summary {
    /// Adds a row to the figures people read; `sent_at` is its send time (epoch ms) if it has one.
    pub(super) fn count_for_people(&mut self, row: &ReportRow, sent_at: Option<i64>) {
        self.funnel.count(row);
        if let Some(lane) = row.lane {
            self.lanes.entry(lane).or_default().count(row);
        }
        if let Outcome::Answered { status, accepted } = &row.outcome {
            let statuses = if *accepted {
                &mut self.answers.accepted
            } else {
                &mut self.answers.not_accepted
            };
            super::count_text(statuses, status);
            if let Some(date) = sent_at {
                self.sends.record(date);
            }
        }
    }

    /// The lanes in the order of [`Lane::ALL`].
    fn lanes_in_order(&self) -> impl Iterator<Item = (Lane, &Funnel)> {
        Lane::ALL
            .into_iter()
            .filter_map(|lane| self.lanes.get(&lane).map(|funnel| (lane, funnel)))
    }
}

pub(super) fn markdown(summary: &Summary) -> String {
    let status = &summary.status;
    let mut out = format!(
        "# Delivery report: {}\n\nKind: `{}`\n\n",
        summary.campaign_name, summary.kind
    );
    let sends = &summary.sends;
    if let (Some(first), Some(last), Some(took)) = (sends.first(), sends.last(), sends.duration_ms()) {
        out.push_str(&format!(
            "Sent {} – {} KST ({})\n\n",
            labels::time(first),
            labels::time(last),
            labels::duration(took, Lang::En)
        ));
    }
    let funnel = &summary.funnel;
    out.push_str(&format!(
        "Rows {} → valid {} → sent {} → accepted {} → delivered {}\n\n",
        funnel.rows, funnel.valid, funnel.sent, funnel.accepted, funnel.delivered
    ));
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
