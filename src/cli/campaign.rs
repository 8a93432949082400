//! Campaign commands: `validate`, `run`, `resume`, `send-test` and `status`, with text for people and `--json` for scripts.

use super::exit::Exit;
use super::output;
use super::progress::Terminal;
use crate::campaign::quiet::QuietWindow;
use crate::campaign::{Campaign, Lane};
use crate::engine::rules::RunOutcome;
use crate::engine::test_send::{TestSend, TestSendOptions};
use crate::engine::{self, Control, Event, RunEnd, RunOptions, RunReport, Sink, Status};
use crate::plan::Scan;
use crate::preview::{MessagePreview, Previews};
use crate::report::won;
use anyhow::{Context, Result};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Serialize)]
struct ValidateOutput<'a> {
    campaign: &'a Path,
    rejects: &'a Path,
    #[serde(flatten)]
    scan: &'a Scan,
    chunks: std::collections::BTreeMap<String, u64>,
    quiet_hours_now: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    preview: Option<BTreeMap<Lane, Vec<MessagePreview>>>,
}

fn default_rejects_path(campaign: &Campaign) -> PathBuf {
    let stem = campaign
        .file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "campaign".into());
    campaign.file.with_file_name(format!("{stem}.rejects.csv"))
}

pub fn validate(
    path: &Path,
    rejects: Option<PathBuf>,
    strict: bool,
    preview: Option<usize>,
    json: bool,
) -> Result<Exit> {
    let campaign = Campaign::load(path)?;
    let rejects = rejects.unwrap_or_else(|| default_rejects_path(&campaign));
    let mut previews = preview.map(|n| Previews::new(&campaign, n));
    let mut see = previews
        .as_mut()
        .map(|previews| move |row: &crate::plan::PlannedRow| previews.see(row));
    let inspect = see.as_mut().map(|see| see as &mut dyn FnMut(&crate::plan::PlannedRow));
    let scan = engine::validate_with(&campaign, &rejects, &Terminal::new(json), inspect)?;
    let preview = previews.map(Previews::finish);
    let quiet_hours_now = QuietWindow::in_force_now(&campaign);
    let chunks = scan.chunks_by_lane(&campaign);
    if json {
        output::json(&ValidateOutput {
            campaign: path,
            rejects: &rejects,
            scan: &scan,
            chunks,
            quiet_hours_now,
            preview,
        })?;
    } else {
        println!("campaign   {} ({})", path.display(), campaign.kind.as_str());
        println!("input      {} ({})", campaign.recipients.path.display(), scan.encoding);
        println!("rows       {}", scan.rows);
        println!("valid      {}", scan.valid);
        for (lane, count) in &scan.per_lane {
            println!(
                "  {:<9}{count} in {} chunk(s) of up to {}",
                lane.as_str(),
                scan.chunks_in(*lane, campaign.send.chunk_size),
                campaign.send.chunk_size
            );
        }
        println!("rejected   {}", scan.rejected);
        for (reason, count) in &scan.rejected_by_reason {
            println!("  {reason:<18}{count}");
        }
        println!("duplicates {}", scan.duplicates);
        println!(
            "suppressed {}{}",
            scan.suppressed,
            if campaign.recipients.suppression.is_some() {
                format!(" (list of {})", scan.suppression_entries)
            } else {
                String::new()
            }
        );
        if campaign.opt_outs_applied().is_some() {
            println!(
                "  opted out {} (opt-out list of {})",
                scan.opted_out, scan.opt_out_entries
            );
        } else if campaign.recipients.opt_outs.is_some() {
            println!("  opt-out list not applied: the campaign does not advertise");
        }
        if campaign.frequency_capped_applied().is_some() {
            println!(
                "capped     {} (frequency cap's list of {})",
                scan.capped, scan.capped_entries
            );
        }
        if let Some(charge) = &scan.estimated_charge {
            let total: i64 = charge.values().sum();
            let parts: Vec<String> = charge
                .iter()
                .map(|(class, amount)| format!("{class} {}", won(*amount)))
                .collect();
            println!(
                "estimate   {} ({}; fallbacks not included)",
                won(total),
                parts.join(", ")
            );
            if let Some(worst) = scan.worst_case_charge.filter(|worst| *worst > total) {
                println!("           {} at most, were every fallback sent", won(worst));
            }
            if let Some(limit) = campaign.send.budget {
                let verdict = if total > limit {
                    "OVER: `msgbatch run` refuses it"
                } else {
                    "within it"
                };
                println!("budget     {} ([send] budget): the estimate is {verdict}", won(limit));
            }
        }
        for warning in &scan.warnings {
            println!("warning    {warning}");
        }
        if let Some(quiet) = &quiet_hours_now {
            println!("quiet hrs  {quiet}");
        }
        println!("rejects    {}", rejects.display());
        if let Some(preview) = &preview {
            print_previews(preview);
        }
    }
    Ok(if strict && scan.rejected > 0 {
        Exit::Failed
    } else {
        Exit::Done
    })
}

fn print_previews(previews: &BTreeMap<Lane, Vec<MessagePreview>>) {
    for (lane, messages) in previews {
        println!();
        println!("preview    {} ({} message(s))", lane.as_str(), messages.len());
        for message in messages {
            let length = message.length_text();
            println!(
                "  row {} {} ({}; {}; billed {})",
                message.row, message.phone, message.chosen, length, message.billing_class
            );
            match &message.text {
                Some(text) => {
                    for line in text.lines() {
                        println!("    | {line}");
                    }
                }
                None => {
                    let vars: Vec<String> = message.variables.iter().map(|(k, v)| format!("{k}={v}")).collect();
                    println!("    | (the service's template, with {})", vars.join(", "));
                }
            }
            if let Some(fallback) = &message.fallback {
                println!("    fallback ({}, {} bytes EUC-KR):", fallback.class, fallback.bytes);
                for line in fallback.text.lines() {
                    println!("    | {line}");
                }
            }
        }
    }
}

/// Ctrl-C stops the run through its control handle, as `msgbatch stop` does; a second one quits at once.
fn stop_on_interrupt(control: &Control, terminal: Arc<Terminal>) -> Result<tokio::task::JoinHandle<()>> {
    // Installed here, before the run promises that Ctrl-C leaves it resumable.
    let mut interrupts = crate::interrupt::Interrupts::listen().context("cannot listen for Ctrl-C")?;
    let control = control.clone();
    Ok(tokio::spawn(async move {
        if interrupts.next().await.is_some() {
            terminal.event(&Event::Stopping);
            control.stop();
            if interrupts.next().await.is_some() {
                std::process::exit(130);
            }
        }
    }))
}

pub async fn run(path: &Path, options: RunOptions, json: bool) -> Result<Exit> {
    let campaign = Campaign::load(path)?;
    let control = Control::new();
    let terminal = Arc::new(Terminal::new(json));
    let interrupts = stop_on_interrupt(&control, terminal.clone())?;
    let report = engine::run(campaign, options, &control, terminal).await;
    interrupts.abort();
    finish(report?, json)
}

/// Continues a run that no process holds.
pub async fn resume(run_dir: &Path, options: RunOptions, json: bool) -> Result<Exit> {
    let control = Control::new();
    let terminal = Arc::new(Terminal::new(json));
    let interrupts = stop_on_interrupt(&control, terminal.clone())?;
    let report = engine::resume(run_dir, options, &control, terminal).await;
    interrupts.abort();
    finish(report?, json)
}

fn finish(report: RunReport, json: bool) -> Result<Exit> {
    if json {
        output::json(&report)?;
    } else {
        println!("{}", status_lines(&report.status));
        match &report.end {
            RunEnd::Complete => {}
            RunEnd::Stopped => eprintln!("stopped: chunks not yet sent are pending"),
            RunEnd::BudgetReached(reached) => {
                // The spend once the requests in flight ended, not at the moment of the stop.
                let spent = report.status.budget.unwrap_or_default();
                eprintln!(
                    "budget reached: charged {} and reserved {} of the budget {}; the next chunk needs up to {}; chunks not yet sent are pending",
                    won(spent.charged),
                    won(spent.reserved),
                    won(reached.limit),
                    won(reached.next_chunk)
                )
            }
            RunEnd::Failed(reason) => eprintln!("msgbatch: run stopped: {reason}"),
        }
        if let Some(collected) = &report.collected {
            print_collected(collected);
        }
        println!("run directory {}", report.run_dir.display());
        for step in next_steps(&report) {
            eprintln!("{step}");
        }
    }
    Ok(RunOutcome::of_report(&report).into())
}

/// What to do after a run: resume what is left, collect gateway results, then read the report.
fn next_steps(report: &RunReport) -> Vec<String> {
    let status = &report.status;
    let mut steps = Vec::new();
    if let (RunEnd::BudgetReached(_), Some(needed)) = (&report.end, report.budget_to_finish) {
        steps.push(format!(
            "resume with: {} --budget {needed} (what is spent and reserved, plus the pending rows at their worst case)",
            engine::resume_command(&report.run_dir)
        ));
    } else if status.pending > 0 || status.uncertain > 0 {
        let uncertain = if status.uncertain > 0 {
            format!(
                " ({} uncertain recipient(s) are not resent unless you add --resend-uncertain)",
                status.uncertain
            )
        } else {
            String::new()
        };
        steps.push(format!(
            "resume with: {}{uncertain}",
            engine::resume_command(&report.run_dir)
        ));
    }
    let gateway = status.kind == crate::campaign::Kind::GatewayAlimtalk.as_str();
    if gateway && report.collected.is_none() && status.accepted > 0 {
        steps.push(format!(
            "final results: msgbatch collect {} (the service settles them about 5 minutes after acceptance)",
            report.run_dir.display()
        ));
    }
    if status.sent > 0 || status.rows > 0 {
        steps.push(format!(
            "report:      msgbatch report {} (report.csv, report.xlsx, report.parquet, summary.html)",
            report.run_dir.display()
        ));
    }
    steps
}

/// The accounting equation, the sent rows' codes and each lane, one per line.
fn status_lines(status: &Status) -> String {
    let mut lines = Vec::new();
    lines.push(status.equation());
    if status.sent > 0 {
        let codes: Vec<String> = status.statuses.iter().map(|(code, n)| format!("{code} {n}")).collect();
        lines.push(format!(
            "  sent: accepted {}, not accepted {} ({})",
            status.accepted,
            status.not_accepted,
            codes.join(", ")
        ));
    }
    if let Some(budget) = &status.budget {
        let limit = budget
            .limit
            .map_or("no budget".to_string(), |limit| format!("budget {}", won(limit)));
        lines.push(format!(
            "  {limit}: charged {}, reserved {}",
            won(budget.charged),
            won(budget.reserved)
        ));
    }
    for (lane, detail) in &status.lanes {
        lines.push(format!(
            "  {:<9}valid {}, sent {}, uncertain {}, pending {}{} ({} of {} chunks done)",
            lane.as_str(),
            detail.valid,
            detail.sent,
            detail.uncertain,
            detail.pending,
            if detail.sending > 0 {
                format!(", sending {}", detail.sending)
            } else {
                String::new()
            },
            detail.chunks_done,
            detail.chunks
        ));
    }
    lines.join("\n")
}

pub async fn status(run_dir: &Path, watch: bool, json: bool) -> Result<Exit> {
    let mut last: Option<String> = None;
    loop {
        let seen = engine::look(run_dir)?;
        let line = match &seen {
            Some(snapshot) if json => serde_json::to_string(snapshot)?,
            Some(snapshot) => status_text(run_dir, snapshot),
            None if json => serde_json::json!({ "live": true, "reading_input": true }).to_string(),
            None => "the run is starting: it is reading its input".to_string(),
        };
        if last.as_deref() != Some(&line) {
            println!("{line}");
            last = Some(line);
        }
        let running = seen.as_ref().is_none_or(|snapshot| snapshot.live);
        if !watch || !running {
            return Ok(Exit::Done);
        }
        tokio::time::sleep(engine::status::SNAPSHOT_EVERY).await;
    }
}

/// A status for people: the campaign, whether it is running, the accounting and the lanes.
fn status_text(run_dir: &Path, snapshot: &engine::Snapshot) -> String {
    let status = &snapshot.status;
    let mut text = format!("campaign {} ({})", status.campaign.display(), status.kind);
    if snapshot.live {
        let updated_at = snapshot.updated_at.clone().unwrap_or_default();
        let at = chrono::DateTime::parse_from_rfc3339(&updated_at)
            .map(|t| {
                t.with_timezone(&crate::campaign::quiet::kst())
                    .format("%H:%M:%S KST")
                    .to_string()
            })
            .unwrap_or(updated_at);
        text.push_str(&format!("\nrunning: live figures as of {at}"));
        match &snapshot.paused {
            Some(engine::events::PauseCause::Asked) => text.push_str(&format!(
                "\npaused: no new chunk is sent; go on with: {}",
                engine::resume_command(run_dir)
            )),
            Some(engine::events::PauseCause::QuietHours { window, until, .. }) => {
                text.push_str(&format!("\npaused: quiet hours {window}, going on at {until}"))
            }
            Some(engine::events::PauseCause::Failing { percent, window, failed }) => text.push_str(&format!(
                "\npaused: {failed} of the last {window} answered recipients were not accepted (more than {percent} %); look into it, then go on with {} or stop it",
                engine::resume_command(run_dir)
            )),
            None if pause_asked(run_dir) => text.push_str(
                "\npausing: asked to pause; no new chunk goes once the current wait (the rate, a free request) ends",
            ),
            None => {}
        }
        if snapshot.stopping {
            text.push_str("\nstopping: requests in flight are ending");
        }
        if snapshot.budget_reached {
            text.push_str("\nbudget reached: no new chunk is sent");
        }
        if let Some(pace) = &snapshot.pace {
            let rate = pace
                .rate
                .map_or("no rate limit".to_string(), |rate| format!("rate {rate}/s"));
            text.push_str(&format!("\n{rate}, concurrency {}", pace.concurrency));
        }
    }
    text.push('\n');
    text.push_str(&status_lines(status));
    if !snapshot.live && !status.complete {
        text.push_str(&format!("\nresume with: {}", engine::resume_command(run_dir)));
    }
    text
}

/// Whether the running process was asked to pause (its control file), before it holds.
fn pause_asked(run_dir: &Path) -> bool {
    engine::control::ControlFile::read(run_dir).is_ok_and(|file| file.is_some_and(|file| file.controls.paused))
}

pub async fn collect(run_dir: &Path, options: &crate::engine::collect::CollectOptions, json: bool) -> Result<Exit> {
    let control = Control::new();
    let terminal = Arc::new(Terminal::new(json));
    let interrupts = stop_on_interrupt(&control, terminal.clone())?;
    let report = engine::collect_results(run_dir, options, &control, terminal.as_ref()).await;
    interrupts.abort();
    let report = report?;
    if json {
        output::json(&report)?;
    } else {
        print_collected(&report);
    }
    Ok(
        if report.provisional > 0 || report.missing > 0 || report.left_by_stop > 0 {
            Exit::Incomplete
        } else {
            Exit::Done
        },
    )
}

fn print_collected(report: &crate::engine::collect::CollectReport) {
    println!("{}", report.line());
    if report.left_by_stop > 0 {
        println!(
            "stopped: {} accepted recipient(s) still to read; `msgbatch collect` again goes on",
            report.left_by_stop
        );
    }
}

pub fn report(run_dir: &Path, out: Option<&Path>, options: &crate::report::ReportOptions, json: bool) -> Result<Exit> {
    let summary = crate::report::write(run_dir, out, options)?;
    if json {
        output::json(&summary)?;
    } else {
        println!("{}", summary.status.equation());
        for (class, totals) in &summary.classes {
            println!(
                "  {class:<13} charged {} ({} rows), refunded {}, provisional {}, disputed {}",
                totals.charged, totals.charged_count, totals.refunded, totals.provisional, totals.disputed
            );
        }
        for file in &summary.files {
            println!("wrote {}", file.display());
        }
        if let Some(why) = &summary.workbook_left_out {
            println!("{why}");
        }
    }
    Ok(Exit::Done)
}

pub fn reconcile(run_dir: &Path, ledger: &Path, json: bool) -> Result<Exit> {
    let result = crate::reconcile::reconcile(run_dir, ledger)?;
    if json {
        output::json(&result)?;
    } else {
        output::class_balance(&result.classes, "report");
        println!(
            "{} ledger entries, {} mismatch(es){}",
            result.ledger_entries,
            result.mismatches,
            if result.mismatches > 0 {
                format!(": see {}", result.mismatches_file.display())
            } else {
                String::new()
            }
        );
    }
    Ok(if result.balanced { Exit::Done } else { Exit::Failed })
}

pub fn retry(run_dir: &Path, only: crate::retry::Only, out: Option<&Path>, json: bool) -> Result<Exit> {
    let plan = crate::retry::plan(run_dir, only, out)?;
    if json {
        output::json(&plan)?;
    } else {
        println!("{} recipient(s) in {}", plan.recipients, plan.recipients_file.display());
        if only == crate::retry::Only::Uncertain {
            println!("warning: their earlier request may have reached the service; sending again may send twice");
        }
        println!("check it with: msgbatch validate {}", plan.campaign.display());
        println!("send it with:  msgbatch run {}", plan.campaign.display());
    }
    Ok(Exit::Done)
}

pub async fn send_test(path: &Path, options: &TestSendOptions, json: bool) -> Result<Exit> {
    let campaign = Campaign::load(path)?;
    let control = Control::new();
    let terminal = Arc::new(Terminal::new(json));
    let interrupts = stop_on_interrupt(&control, terminal.clone())?;
    let sent = engine::test_send::send_test(&campaign, options, &control, terminal).await;
    interrupts.abort();
    let sent = sent?;
    if json {
        output::json(&sent)?;
    } else {
        print_test_send(&sent);
    }
    let all_taken = sent
        .messages
        .iter()
        .all(|message| message.answers.iter().all(|answer| answer.accepted));
    Ok(if all_taken { Exit::Done } else { Exit::Failed })
}

fn print_test_send(sent: &TestSend) {
    for message in &sent.messages {
        let preview = &message.preview;
        let length = preview.length_text();
        println!(
            "row {} ({}): lane {}, billed {}, {length}",
            preview.row,
            preview.chosen,
            preview.lane.as_str(),
            preview.billing_class
        );
        match &preview.text {
            Some(text) => text.lines().for_each(|line| println!("  | {line}")),
            None => {
                let vars: Vec<String> = preview.variables.iter().map(|(k, v)| format!("{k}={v}")).collect();
                println!("  | (the service's template, with {})", vars.join(", "));
            }
        }
        for answer in &message.answers {
            let said = match (answer.outcome, &answer.status) {
                ("answered", Some(status)) => format!(
                    "{status} ({}){}",
                    if answer.accepted { "accepted" } else { "not accepted" },
                    answer
                        .uid
                        .as_ref()
                        .map(|uid| format!(", uid {uid}"))
                        .unwrap_or_default()
                ),
                (outcome, _) => format!(
                    "{outcome}{}",
                    answer.error.as_ref().map(|e| format!(": {e}")).unwrap_or_default()
                ),
            };
            println!("  to {}: {said}", answer.to);
        }
    }
    println!("test send {}", sent.dir.display());
}
