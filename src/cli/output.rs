//! Printing command results: aligned text for people, JSON for scripts.

use crate::api::channel::Channel;
use crate::api::gateway::SendRecord;
use crate::phone::Masked;
use serde::Serialize;

/// Prints `value` as pretty JSON on stdout.
pub fn json<T: Serialize>(value: &T) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}

/// Prints rows as columns padded to the widest cell.
pub fn table(header: &[&str], rows: &[Vec<String>]) {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (index, cell) in row.iter().enumerate() {
            widths[index] = widths[index].max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let padded: Vec<String> = cells
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{c}{}", " ".repeat(widths[i].saturating_sub(c.chars().count()))))
            .collect();
        println!("{}", padded.join("  ").trim_end());
    };
    line(header.to_vec());
    for row in rows {
        line(row.iter().map(String::as_str).collect());
    }
}

pub fn channel_row(channel: &Channel) -> Vec<String> {
    vec![
        channel.id.clone(),
        channel.status.clone(),
        channel.channel_status.clone(),
        channel.name.clone(),
        channel.sender_key.clone(),
        channel.callback_no.clone().unwrap_or_default(),
    ]
}

pub const CHANNEL_HEADER: [&str; 6] = ["ID", "STATUS", "CHANNEL", "NAME", "SENDER KEY", "CALLBACK"];

/// A send record for people: the recipient masked, as everywhere a person reads.
pub fn record_row(record: &SendRecord) -> Vec<String> {
    let text = |v: &Option<String>| v.clone().unwrap_or_default();
    vec![
        record.id.clone(),
        text(&record.uid),
        record
            .mobile
            .as_deref()
            .map(|m| Masked(m).to_string())
            .unwrap_or_default(),
        text(&record.result),
        text(&record.status),
        text(&record.error_message),
    ]
}

pub const RECORD_HEADER: [&str; 6] = ["ID", "UID", "MOBILE", "RESULT", "STATUS", "ERROR"];

/// Per billing class, the ledger's charges and refunds beside those of `side` (the report, the runs).
pub fn class_balance(classes: &std::collections::BTreeMap<crate::api::ledger::BillingClass, [i64; 4]>, side: &str) {
    for (class, [ledger_charged, ledger_refunded, side_charged, side_refunded]) in classes {
        let mark = if ledger_charged == side_charged && ledger_refunded == side_refunded {
            "ok"
        } else {
            "DIFFERS"
        };
        println!(
            "  {class:<13} ledger charged {ledger_charged} refunded {ledger_refunded} | {side} charged {side_charged} refunded {side_refunded}  {mark}"
        );
    }
}
