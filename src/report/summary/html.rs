//! summary.html: one self-contained page (no script, no network: its Content-Security-Policy forbids both) to forward to a manager, readable on screen and printed.
//!
//! Every text that comes from the campaign or the service (the name, statuses, results, reason
//! codes) goes through [`escape`]; figures are formatted by `labels`.

use super::labels::{self, Label, Lang};
use super::{Funnel, Summary};

/// Text for HTML element content and attribute values.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = r#"
:root{color-scheme:light}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI","Noto Sans KR","Malgun Gothic","Apple SD Gothic Neo",Roboto,"DejaVu Sans",sans-serif;color:#1d2430;margin:2rem auto;max-width:60rem;padding:0 1.5rem}
header{border-bottom:3px solid #1d4ed8;padding-bottom:.8rem;margin-bottom:1.2rem}
.eyebrow{text-transform:uppercase;letter-spacing:.08em;font-size:.8rem;color:#52607a;margin:0}
h1{font-size:1.9rem;margin:.2rem 0 .4rem;overflow-wrap:anywhere}
h2{font-size:1.2rem;margin:2rem 0 .6rem;border-bottom:1px solid #d7dce5;padding-bottom:.25rem}
.meta{margin:0;color:#3b4658}
.badge{display:inline-block;padding:.05rem .55rem;border-radius:.7rem;font-size:.85rem;font-weight:600;margin-left:.4rem}
.ok{background:#dcfce7;color:#166534}.warn{background:#fef3c7;color:#92400e}
dl.facts{display:grid;grid-template-columns:repeat(3,minmax(0,1fr));gap:.4rem 1.5rem;margin:0}
dl.facts dt{font-size:.8rem;color:#52607a}dl.facts dd{margin:0;font-size:1.1rem;font-weight:600;font-variant-numeric:tabular-nums}
table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums}
th,td{padding:.35rem .6rem;border-bottom:1px solid #e5e8ef;text-align:right;vertical-align:middle}
th{font-size:.8rem;color:#52607a;font-weight:600;border-bottom:2px solid #c9d0dc}
th:first-child,td:first-child{text-align:left}
.meaning{color:#3b4658;margin-left:.5rem}
td.bar{width:40%}
td.bar svg{display:block;width:100%;height:14px}
tr.total td{font-weight:700;border-top:2px solid #c9d0dc}
tr.group td{font-weight:600;background:#f5f7fa}
.note{color:#52607a;font-size:.9rem;margin:.5rem 0}
ul.note{padding-left:1.2rem}
.alert{color:#92400e;font-weight:600}
code{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:.9em}
figure{margin:0}
figure svg{width:100%;height:auto}
svg text{font-size:11px;fill:#52607a}
footer{margin-top:2.5rem;font-size:.8rem;color:#52607a;border-top:1px solid #d7dce5;padding-top:.5rem}
@page{size:A4;margin:14mm}
@media (max-width:560px){dl.facts{grid-template-columns:minmax(0,1fr)}}
@media print{body{margin:0;max-width:none;padding:0;font-size:10.5pt}h2{break-after:avoid}table,figure,section{break-inside:avoid}.badge{border:1px solid currentColor}*{-webkit-print-color-adjust:exact;print-color-adjust:exact}}
"#;

const BLUE: &str = "#1d4ed8";
const GREEN: &str = "#15803d";

/// The page, in `lang`.
pub fn html(summary: &Summary, lang: Lang) -> String {
    let page = Page { summary, lang };
    let t = |label: Label| label.text(lang);
    format!(
        "<!doctype html>\n<html lang=\"{code}\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title}: {name}</title><style>{STYLE}</style></head>\n<body>\n{header}{when}{funnel}{charges}{chart}{lanes}{acceptance}{finals}{rejects}\
         <footer>{footer} {version}</footer>\n</body></html>\n",
        code = lang.code(),
        title = t(Label::DeliveryReport),
        name = escape(&summary.campaign_name),
        header = page.header(),
        when = page.when(),
        funnel = page.funnel(),
        lanes = page.lanes(),
        acceptance = page.acceptance(),
        finals = page.final_results(),
        charges = page.charges(),
        chart = page.chart(),
        rejects = page.rejects(),
        footer = t(Label::Footer),
        version = env!("CARGO_PKG_VERSION"),
    )
}

struct Page<'a> {
    summary: &'a Summary,
    lang: Lang,
}

/// A table: header cells, then rows of cells already made HTML (`<td>…</td>`).
fn table(header: &[&str], rows: &[String]) -> String {
    let head: String = header.iter().map(|h| format!("<th>{h}</th>")).collect();
    format!(
        "<table><thead><tr>{head}</tr></thead><tbody>{}</tbody></table>\n",
        rows.concat()
    )
}

fn td(text: impl std::fmt::Display) -> String {
    format!("<td>{text}</td>")
}

/// A row of a code the service or the plan wrote, what it means when known, and its rows.
fn coded_row(code: &str, meaning: Option<&str>, rows: u64) -> String {
    let meaning = meaning
        .map(|m| format!(" <span class=\"meaning\">{m}</span>"))
        .unwrap_or_default();
    format!(
        "<tr><td><code>{}</code>{meaning}</td>{}</tr>",
        escape(code),
        td(labels::count(rows))
    )
}

fn note(text: &str) -> String {
    format!("<p class=\"note\">{text}</p>\n")
}

fn section(title: &str, body: &str) -> String {
    format!("<section><h2>{title}</h2>\n{body}</section>\n")
}

/// `12.5%` of `whole`, or a dash when there is no whole.
fn share(part: u64, whole: u64) -> String {
    if whole == 0 {
        "–".into()
    } else {
        format!("{:.1}%", 100.0 * part as f64 / whole as f64)
    }
}

impl Page<'_> {
    fn t(&self, label: Label) -> &'static str {
        label.text(self.lang)
    }

    fn header(&self) -> String {
        let summary = self.summary;
        let (class, state) = if summary.status.complete {
            ("ok", self.t(Label::Complete))
        } else {
            ("warn", self.t(Label::Incomplete))
        };
        format!(
            "<header><p class=\"eyebrow\">{}</p><h1>{}</h1>\
             <p class=\"meta\">{}: {} <code>{}</code><span class=\"badge {class}\">{state}</span></p></header>\n",
            self.t(Label::DeliveryReport),
            escape(&summary.campaign_name),
            self.t(Label::Kind),
            escape(&labels::kind(&summary.kind, self.lang)),
            escape(&summary.kind),
        )
    }

    fn when(&self) -> String {
        let sends = &self.summary.sends;
        let (Some(first), Some(last), Some(took)) = (sends.first(), sends.last(), sends.duration_ms()) else {
            return note(self.t(Label::NothingSent));
        };
        let fact = |label: Label, value: String| format!("<div><dt>{}</dt><dd>{value}</dd></div>", self.t(label));
        format!(
            "<dl class=\"facts\">{}{}{}</dl>\n",
            fact(Label::FirstSend, format!("{} KST", labels::time(first))),
            fact(Label::LastSend, format!("{} KST", labels::time(last))),
            fact(Label::Duration, labels::duration(took, self.lang)),
        )
    }

    fn funnel(&self) -> String {
        let funnel = &self.summary.funnel;
        let status = &self.summary.status;
        let stages = [
            (Label::InputRows, funnel.rows, "#64748b"),
            (Label::Valid, funnel.valid, BLUE),
            (Label::Sent, funnel.sent, BLUE),
            (Label::Accepted, funnel.accepted, GREEN),
            (Label::Delivered, funnel.delivered, GREEN),
        ];
        let rows: Vec<String> = stages
            .iter()
            .map(|(label, value, color)| {
                let width = if funnel.rows == 0 {
                    0.0
                } else {
                    100.0 * *value as f64 / funnel.rows as f64
                };
                format!(
                    "<tr>{}{}{}<td class=\"bar\"><svg viewBox=\"0 0 100 10\" preserveAspectRatio=\"none\" aria-hidden=\"true\"><rect width=\"100\" height=\"10\" fill=\"#eef1f6\"/><rect width=\"{width:.2}\" height=\"10\" fill=\"{color}\"/></svg></td></tr>",
                    td(self.t(*label)),
                    td(labels::count(*value)),
                    td(share(*value, funnel.rows)),
                )
            })
            .collect();
        let mut notes = vec![format!(
            "{}: {} {}, {} {}, {} {}",
            self.t(Label::NotSent),
            self.t(Label::Rejected),
            labels::count(status.rejected),
            self.t(Label::Duplicates),
            labels::count(status.duplicates),
            self.t(Label::Suppressed),
            labels::count(status.suppressed),
        )];
        if status.capped > 0 {
            notes[0].push_str(&format!(", {} {}", self.t(Label::Capped), labels::count(status.capped)));
        }
        notes.push(format!(
            "{}: {}",
            self.t(Label::NotAccepted),
            labels::count(funnel.not_accepted)
        ));
        if funnel.fallback_sent > 0 {
            notes.push(format!(
                "{}: {}",
                self.t(Label::FallbackSent),
                labels::count(funnel.fallback_sent)
            ));
        }
        for (label, value) in [(Label::Uncertain, funnel.uncertain), (Label::Pending, funnel.pending)] {
            if value > 0 {
                notes.push(format!(
                    "<span class=\"alert\">{}: {}</span>",
                    self.t(label),
                    labels::count(value)
                ));
            }
        }
        let notes: String = notes.iter().map(|note| format!("<li>{note}</li>")).collect();
        let body = format!(
            "{}<ul class=\"note\">{notes}</ul>\n",
            table(
                &[
                    self.t(Label::Stage),
                    self.t(Label::Rows),
                    self.t(Label::ShareOfRows),
                    ""
                ],
                &rows
            )
        );
        section(self.t(Label::Funnel), &body)
    }

    fn lanes(&self) -> String {
        let cells = |funnel: &Funnel| {
            [
                funnel.rows,
                funnel.sent,
                funnel.accepted,
                funnel.not_accepted,
                funnel.delivered,
                funnel.fallback_sent,
                funnel.uncertain,
                funnel.pending,
            ]
            .into_iter()
            .map(|value| td(labels::count(value)))
            .collect::<String>()
        };
        let rows: Vec<String> = self
            .summary
            .lanes_in_order()
            .map(|(lane, funnel)| format!("<tr>{}{}</tr>", td(labels::lane(lane, self.lang)), cells(funnel)))
            .collect();
        if rows.is_empty() {
            return String::new();
        }
        let header = [
            Label::Lane,
            Label::Recipients,
            Label::SentShort,
            Label::AcceptedShort,
            Label::NotAccepted,
            Label::DeliveredShort,
            Label::Fallback,
            Label::Uncertain,
            Label::Pending,
        ]
        .map(|label| self.t(label));
        section(self.t(Label::ByLane), &table(&header, &rows))
    }

    fn acceptance(&self) -> String {
        let answers = &self.summary.answers;
        let mut rows = Vec::new();
        for (label, statuses) in [
            (Label::Accepted, &answers.accepted),
            (Label::NotAccepted, &answers.not_accepted),
        ] {
            if statuses.is_empty() {
                continue;
            }
            let total: u64 = statuses.values().sum();
            rows.push(format!(
                "<tr class=\"group\">{}{}</tr>",
                td(self.t(label)),
                td(labels::count(total))
            ));
            for (status, count) in statuses {
                rows.push(coded_row(status, None, *count));
            }
        }
        let body = if rows.is_empty() {
            note(self.t(Label::NothingSent))
        } else {
            note(self.t(Label::AcceptanceNote)) + &table(&[self.t(Label::Status), self.t(Label::Rows)], &rows)
        };
        section(self.t(Label::Acceptance), &body)
    }

    fn final_results(&self) -> String {
        let summary = self.summary;
        let (explained, rows): (_, Vec<String>) = if summary.kind == crate::campaign::Kind::GatewayAlimtalk.as_str() {
            let rows = summary
                .final_results
                .iter()
                .map(|(result, count)| coded_row(result, labels::final_result(result, self.lang), *count))
                .collect();
            (Label::FinalNoteGateway, rows)
        } else {
            let funnel = &summary.funnel;
            let rows = [
                (Label::Delivered, funnel.delivered),
                (Label::NotAccepted, funnel.not_accepted),
                (Label::FallbackSent, funnel.fallback_sent),
            ]
            .iter()
            .map(|(label, value)| format!("<tr>{}{}</tr>", td(self.t(*label)), td(labels::count(*value))))
            .collect();
            (Label::FinalNoteStandard, rows)
        };
        let body = if rows.is_empty() {
            note(self.t(Label::NoFinalResults))
        } else {
            note(self.t(explained)) + &table(&[self.t(Label::FinalResult), self.t(Label::Rows)], &rows)
        };
        section(self.t(Label::FinalResults), &body)
    }

    fn charges(&self) -> String {
        let summary = self.summary;
        let mut total = [0i64; 6];
        let mut rows = Vec::new();
        for (class, totals) in &summary.classes {
            let figures = [
                totals.charged_count as i64,
                totals.charged,
                totals.refunded,
                totals.provisional,
                totals.disputed,
                totals.charged - totals.refunded,
            ];
            for (sum, figure) in total.iter_mut().zip(figures) {
                *sum += figure;
            }
            rows.push(self.charge_row(td(labels::class(*class, self.lang)), figures, ""));
        }
        rows.push(self.charge_row(td(self.t(Label::Total)), total, " class=\"total\""));
        let mut body = table(
            &[
                Label::Class,
                Label::Messages,
                Label::Charged,
                Label::Refunded,
                Label::Provisional,
                Label::Disputed,
                Label::Net,
            ]
            .map(|label| self.t(label)),
            &rows,
        );
        if !summary.prices_known {
            body.push_str(&note(self.t(Label::NoPrices)));
        }
        section(self.t(Label::Charges), &body)
    }

    /// A row of the charges table: a message count, then amounts in won.
    fn charge_row(&self, first: String, [messages, amounts @ ..]: [i64; 6], class: &str) -> String {
        let amounts: String = amounts.iter().map(|amount| td(labels::won(*amount))).collect();
        format!(
            "<tr{class}>{first}{}{amounts}</tr>",
            td(labels::count(messages.max(0) as u64))
        )
    }

    fn chart(&self) -> String {
        let summary = self.summary;
        let sends = &summary.sends;
        let bars = sends.bars();
        let mut body = String::new();
        if bars.is_empty() {
            body.push_str(&note(self.t(Label::NothingSent)));
        } else {
            body.push_str(&self.chart_svg());
        }
        let not_shown = [
            (summary.funnel.uncertain, Label::UncertainNotShown),
            (sends.untimed(), Label::UntimedNotShown),
        ];
        for (rows, label) in not_shown {
            if rows > 0 {
                body.push_str(&note(&format!("{} {}", labels::count(rows), self.t(label))));
            }
        }
        section(self.t(Label::SentOverTime), &body)
    }

    /// Bars of recipients per time slot, with a y axis of round numbers and times below.
    fn chart_svg(&self) -> String {
        let sends = &self.summary.sends;
        let bars = sends.bars();
        let (left, right, top, bottom) = (56.0, 712.0, 10.0, 176.0);
        let highest = bars.iter().copied().max().unwrap_or(1).max(1);
        let step = nice_step(highest);
        let scale_top = highest.div_ceil(step) * step;
        let y = |value: u64| bottom - (bottom - top) * value as f64 / scale_top as f64;
        let mut svg = format!(
            "<figure><svg viewBox=\"0 0 720 200\" role=\"img\" aria-label=\"{}\">",
            self.t(Label::SentOverTime)
        );
        let mut tick = 0;
        while tick <= scale_top {
            svg.push_str(&format!(
                "<line x1=\"{left}\" x2=\"{right}\" y1=\"{0:.1}\" y2=\"{0:.1}\" stroke=\"#e5e8ef\"/><text x=\"{1}\" y=\"{2:.1}\" text-anchor=\"end\">{3}</text>",
                y(tick),
                left - 6.0,
                y(tick) + 4.0,
                labels::count(tick)
            ));
            tick += step;
        }
        // Slots no wider than 48 px, so that a short run does not draw one bar across the chart.
        let slot = ((right - left) / bars.len() as f64).min(48.0);
        let bar_width = if slot >= 4.0 { slot * 0.8 } else { slot };
        let time_format = if sends.duration_ms().unwrap_or(0) >= 86_400_000 {
            "%m-%d %H:%M"
        } else if sends.bar_ms() < 1_000 {
            "%H:%M:%S%.3f"
        } else {
            "%H:%M:%S"
        };
        let at = |index: usize| sends.bar_start(index).format(time_format).to_string();
        for (index, count) in bars.iter().enumerate().filter(|(_, count)| **count > 0) {
            let x = left + slot * index as f64 + (slot - bar_width) / 2.0;
            svg.push_str(&format!(
                "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{bar_width:.1}\" height=\"{:.1}\" fill=\"{BLUE}\"><title>{} – {}: {}</title></rect>",
                y(*count),
                bottom - y(*count),
                at(index),
                at(index + 1),
                labels::count(*count)
            ));
        }
        let label_y = bottom + 16.0;
        svg.push_str(&format!(
            "<line x1=\"{left}\" x2=\"{right}\" y1=\"{bottom}\" y2=\"{bottom}\" stroke=\"#52607a\"/>\
             <text x=\"{left}\" y=\"{label_y}\">{}</text>",
            at(0)
        ));
        // The end time only where it cannot run into the start time (a label is about 80 px wide).
        let end = left + slot * bars.len() as f64;
        if end - left >= 180.0 {
            svg.push_str(&format!(
                "<text x=\"{end:.1}\" y=\"{label_y}\" text-anchor=\"end\">{}</text>",
                at(bars.len())
            ));
        }
        svg.push_str("</svg>");
        let caption = self
            .t(Label::ChartCaption)
            .replace("{n}", &labels::count(bars.iter().sum()))
            .replace("{width}", &labels::width(sends.bar_ms(), self.lang));
        format!("{svg}<figcaption class=\"note\">{caption}</figcaption></figure>\n")
    }

    fn rejects(&self) -> String {
        let status = &self.summary.status;
        if status.rejected_by_reason.is_empty() {
            return section(self.t(Label::RejectsByReason), &note(self.t(Label::NoRejects)));
        }
        let mut rows: Vec<String> = status
            .rejected_by_reason
            .iter()
            .map(|(reason, count)| coded_row(reason, labels::reject_reason(reason, self.lang), *count))
            .collect();
        rows.push(format!(
            "<tr class=\"total\">{}{}</tr>",
            td(self.t(Label::Total)),
            td(labels::count(status.rejected))
        ));
        section(
            self.t(Label::RejectsByReason),
            &table(&[self.t(Label::Reason), self.t(Label::Rows)], &rows),
        )
    }
}

/// A round step (1, 2 or 5 times a power of ten) that divides `0..=highest` into at most 5 parts.
fn nice_step(highest: u64) -> u64 {
    let mut power = 1u64;
    loop {
        for factor in [1, 2, 5] {
            let step = factor * power;
            if highest.div_ceil(step) <= 5 {
                return step;
            }
        }
        power *= 10;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_from_the_campaign_and_the_service_is_escaped() {
        let mut summary = Summary {
            campaign_name: "<script>alert(1)</script> & 'co'".into(),
            kind: "gateway-alimtalk".into(),
            ..Summary::default()
        };
        summary.answers.not_accepted.insert("<img src=x>".into(), 1);
        summary.final_results.insert("<iframe>".into(), 1);
        summary.status.rejected_by_reason.insert("<object>".into(), 1);
        let page = html(&summary, Lang::En);
        for raw in ["<script", "<img", "<iframe", "<object"] {
            assert!(!page.contains(raw), "{raw} in {page}");
        }
        assert!(page.contains("<h1>&lt;script&gt;alert(1)&lt;/script&gt; &amp; &#39;co&#39;</h1>"));
        for escaped in ["&lt;img src=x&gt;", "&lt;iframe&gt;", "&lt;object&gt;"] {
            assert!(page.contains(escaped), "{escaped}");
        }
    }

    #[test]
    fn rows_without_a_send_time_are_said_to_be_outside_the_chart() {
        let mut summary = Summary::default();
        summary.funnel.uncertain = 3;
        summary.sends.record(1_795_399_200_000);
        summary.sends.record(0);
        let page = html(&summary, Lang::En);
        assert!(page.contains("1 recipients sent; one bar = 100 ms (KST)."), "{page}");
        assert!(page.contains("3 rows of uncertain requests have no send time and are not shown."));
        assert!(page.contains("1 answered rows carry no usable send time and are not shown."));
    }
}
