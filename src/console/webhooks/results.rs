//! A run's final results, page by page: read from its `report.raw.csv` from a cursor (the byte where the page starts), so that the API answers the same page a `campaign.results` webhook carried, and a receiver can fetch again any page it missed.

use super::{Endpoint, RESULTS_PAGE};
use crate::console::error::ConsoleError;
use crate::console::Console;
use serde::Serialize;
use std::io::{BufRead, Seek, SeekFrom};
use std::path::Path;

/// One page of results.
#[derive(Debug, Clone, Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct ResultsPage {
    /// Where this page starts (`null`: the first page).
    pub cursor: Option<String>,
    /// Where the next page starts; `null` on the last page.
    pub next_cursor: Option<String>,
    /// One object a recipient, with the columns of report.raw.csv (`row`, `phone`, `final_result`,
    /// `charge_state`, `amount`…).
    #[schema(value_type = Vec<Object>)]
    pub results: Vec<serde_json::Map<String, serde_json::Value>>,
}

/// The page of `limit` rows from `cursor` (`None`: the first row) of a run's results.
pub fn page(run_dir: &Path, cursor: Option<&str>, limit: usize) -> Result<ResultsPage, ConsoleError> {
    let path = run_dir.join(crate::report::RAW_CSV_FILE);
    let file = std::fs::File::open(&path).map_err(|_| ConsoleError::NotFound)?;
    let mut reader = std::io::BufReader::new(file);
    let mut header_line = String::new();
    let header_end = reader.read_line(&mut header_line).map_err(ConsoleError::from_io)? as u64;
    let header: Vec<String> = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(header_line.as_bytes())
        .records()
        .next()
        .and_then(Result::ok)
        .map(|record| record.iter().map(str::to_string).collect())
        .unwrap_or_default();
    let start = match cursor {
        None => header_end,
        Some(cursor) => {
            let offset: u64 = cursor.parse().map_err(|_| invalid_cursor(cursor))?;
            // A cursor is where a line starts: right after the header, or after a line's end.
            let at_line_start = offset == header_end
                || (offset > header_end && {
                    reader
                        .seek(SeekFrom::Start(offset - 1))
                        .map_err(ConsoleError::from_io)?;
                    let mut byte = [0u8; 1];
                    std::io::Read::read_exact(&mut reader, &mut byte).is_ok() && byte[0] == b'\n'
                });
            if !at_line_start {
                return Err(invalid_cursor(cursor));
            }
            offset
        }
    };
    reader.seek(SeekFrom::Start(start)).map_err(ConsoleError::from_io)?;
    let mut csv = csv::ReaderBuilder::new().has_headers(false).from_reader(reader);
    let mut results = Vec::new();
    let mut record = csv::StringRecord::new();
    let mut next = start;
    while results.len() < limit && csv.read_record(&mut record).map_err(ConsoleError::internal)? {
        let row: serde_json::Map<String, serde_json::Value> = header
            .iter()
            .zip(record.iter())
            .filter(|(name, _)| name.as_str() != "name")
            .map(|(name, value)| (name.clone(), serde_json::Value::String(value.to_string())))
            .collect();
        results.push(row);
        next = start + csv.position().byte();
    }
    let more = csv.read_record(&mut record).map_err(ConsoleError::internal)?;
    Ok(ResultsPage {
        cursor: cursor.map(str::to_string),
        next_cursor: more.then(|| next.to_string()),
        results,
    })
}

fn invalid_cursor(cursor: &str) -> ConsoleError {
    ConsoleError::invalid(crate::word!(refuse_cursor), vec![("cursor", cursor.into())])
}

/// Queues one endpoint's results message of a campaign's run from `cursor`; the page after it is
/// queued when this one is delivered.
pub fn enqueue_page(
    console: &Console,
    endpoint: &Endpoint,
    campaign: &str,
    cursor: Option<&str>,
) -> Result<(), ConsoleError> {
    let page = page(&console.workspace.run_dir(campaign), cursor, RESULTS_PAGE)?;
    let name = crate::console::campaigns::find(&console.store, campaign)
        .map(|record| record.name)
        .unwrap_or_default();
    let next = page.next_cursor.clone();
    let data = serde_json::json!({
        "campaign": super::campaign_data(campaign, &name),
        "cursor": page.cursor,
        "next_cursor": page.next_cursor,
        "results": page.results,
    });
    super::deliver::put_message(
        console,
        endpoint,
        "campaign.results",
        Some(campaign.to_string()),
        &data,
        next,
    )?;
    console.store.flush()?;
    console.webhooks.wake.notify_one();
    Ok(())
}
