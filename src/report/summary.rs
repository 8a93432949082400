//! The run's summary for people: Markdown and a self-contained HTML page.

use super::Summary;

pub(super) fn markdown(summary: &Summary) -> String {
    let status = &summary.status;
    let mut out = format!(
        "# Delivery report: {}\n\nKind: `{}`\n\n",
        summary.campaign.display(),
        summary.kind
    );
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

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A self-contained page: the accounting equation, a bar chart of rows by acceptance, and the charges.
pub(super) fn html(summary: &Summary) -> String {
    let status = &summary.status;
    let buckets = [
        ("rejected", status.rejected, "#c0392b"),
        ("duplicates", status.duplicates, "#7f8c8d"),
        ("suppressed", status.suppressed, "#95a5a6"),
        ("sent", status.sent, "#27ae60"),
        ("uncertain", status.uncertain, "#e67e22"),
        ("pending", status.pending, "#2980b9"),
    ];
    let max = buckets.iter().map(|(_, n, _)| *n).max().unwrap_or(0).max(1);
    let mut bars = String::new();
    for (index, (label, count, color)) in buckets.iter().enumerate() {
        let width = 420.0 * *count as f64 / max as f64;
        let y = 10 + index * 30;
        bars.push_str(&format!(
            "<text x=\"0\" y=\"{}\" font-size=\"13\">{label}</text><rect x=\"100\" y=\"{y}\" width=\"{width:.1}\" height=\"20\" fill=\"{color}\"/><text x=\"{:.1}\" y=\"{}\" font-size=\"13\">{count}</text>",
            y + 15,
            106.0 + width,
            y + 15
        ));
    }
    let mut classes = String::new();
    for (class, totals) in &summary.classes {
        classes.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(class.as_str()),
            totals.charged,
            totals.charged_count,
            totals.refunded,
            totals.provisional,
            totals.disputed
        ));
    }
    let mut results = String::new();
    for (result, count) in summary.acceptance.iter().chain(summary.final_results.iter()) {
        results.push_str(&format!("<tr><td>{}</td><td>{count}</td></tr>", escape(result)));
    }
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>msgbatch report</title>\
         <style>body{{font-family:sans-serif;margin:2em;max-width:60em}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:.3em .6em;text-align:right}}td:first-child,th:first-child{{text-align:left}}</style></head>\
         <body><h1>Delivery report</h1><p>{}</p><p>Kind <code>{}</code></p><p><strong>{}</strong></p>\
         <svg width=\"640\" height=\"{}\" role=\"img\" aria-label=\"rows by bucket\">{bars}</svg>\
         <h2>Statuses</h2><table><tr><th>status</th><th>rows</th></tr>{results}</table>\
         <h2>Charges by billing class</h2><table><tr><th>class</th><th>charged</th><th>charged rows</th><th>refunded</th><th>provisional</th><th>disputed</th></tr>{classes}</table>\
         </body></html>\n",
        escape(&summary.campaign.display().to_string()),
        escape(&summary.kind),
        escape(&status.equation()),
        buckets.len() * 30 + 20
    )
}
