//! A run's report as the console writes it: the report files and each viewer's summary, and at a run's end the sends the frequency cap counts, gathered by the same walk.

use super::{waiting_for_run_dir, Console};
use crate::console::error::ConsoleError;

/// Writes report.csv (and report.raw.csv for programs), report.parquet, report.xlsx and the
/// summaries into the run directory.
pub async fn write_report(console: &Console, id: &str) -> Result<(), ConsoleError> {
    written_report(console, id, false).await.map(drop)
}

/// [`write_report`] at a run's end: the same walk gathers what an advertising run sent, recorded
/// in the frequency cap's history (a failure there is logged: the run and its report stand).
pub(super) async fn write_report_and_sends(console: &Console, id: &str) -> Result<(), ConsoleError> {
    let advertising =
        crate::console::compose::load(&console.workspace, id).is_ok_and(|campaign| campaign.is_advertising());
    let sends = written_report(console, id, advertising).await?;
    let rule = crate::console::frequency::rule(&console.store).ok().flatten();
    let (workspace, task_id) = (console.workspace.clone(), id.to_string());
    let recorded =
        tokio::task::spawn_blocking(move || crate::console::frequency::record_sends(&workspace, &task_id, sends, rule))
            .await;
    if let Ok(Err(error)) | Err(error) = recorded.map_err(anyhow::Error::from) {
        tracing::error!("campaign {id}: cannot record its sends for the frequency cap: {error:#}");
    }
    Ok(())
}

/// Writes the report and the viewers' summaries; with `gather`, answers the run's sends too.
async fn written_report(console: &Console, id: &str, gather: bool) -> Result<Vec<u64>, ConsoleError> {
    let run_dir = console.workspace.run_dir(id);
    let options = report_options(console);
    let written = options.lang;
    let (summary, sends) = waiting_for_run_dir({
        let run_dir = run_dir.clone();
        move || {
            let mut sends = crate::console::frequency::history::Sends::default();
            let summary = crate::report::write_seeing(&run_dir, None, &options, |walked| {
                if gather {
                    sends.see(walked)
                }
            })?;
            Ok((summary, sends.into_vec()))
        }
    })
    .await
    .map_err(ConsoleError::from)?;
    write_viewer_summaries(&run_dir, &summary, written).map_err(ConsoleError::from_io)?;
    Ok(sends)
}

/// What the console's reports hold: summary.html in the console's language, report.raw.csv for
/// programs, report.xlsx when the rows fit one sheet.
pub fn report_options(console: &Console) -> crate::report::ReportOptions {
    crate::report::ReportOptions {
        lang: console.report_lang(),
        csv_bom: false,
        xlsx: crate::report::Workbook::WhenOneSheet,
        raw_csv: crate::report::RawCsv::Write,
    }
}

/// The file of the run's summary in one language, written beside summary.html.
pub fn viewer_summary_name(lang: crate::report::Lang) -> String {
    format!("summary.{}.html", lang.code())
}

/// After a report written in `written` (its summary.html): the summary in each other language a
/// viewer may read, owner-only like the report. One in `written` left by an earlier report (of a
/// console then in another language) is taken away: summary.html says it, and is current.
pub fn write_viewer_summaries(
    run_dir: &std::path::Path,
    summary: &crate::report::Summary,
    written: crate::report::Lang,
) -> std::io::Result<()> {
    use std::io::Write;
    for lang in [crate::report::Lang::En, crate::report::Lang::Ko] {
        let path = run_dir.join(viewer_summary_name(lang));
        if lang == written {
            match std::fs::remove_file(&path) {
                Err(error) if error.kind() != std::io::ErrorKind::NotFound => return Err(error),
                _ => continue,
            }
        }
        let temporary = run_dir.join(format!(".{}.tmp", viewer_summary_name(lang)));
        let mut file = crate::files::create_private(&temporary)?;
        file.write_all(crate::report::summary_html(summary, lang).as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&temporary, &path)?;
    }
    Ok(())
}
