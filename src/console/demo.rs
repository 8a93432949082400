//! `msgbatch serve --demo`: the sample campaigns as drafts, with their files, and a `sandbox` connection to the embedded sandbox with the demo prices, so a newcomer sees the whole console at once.

use super::campaigns::{self, CampaignRecord, State, StoredFile};
use super::error::ConsoleError;
use super::Console;

const RECIPIENTS_CSV: &[u8] = include_bytes!("../../samples/recipients.csv");
const RECIPIENTS_XLSX: &[u8] = include_bytes!("../../samples/recipients.xlsx");
const SUPPRESSION_CSV: &[u8] = include_bytes!("../../samples/suppression.csv");

/// (campaign file, recipients file name, its bytes)
const SAMPLES: [(&str, &str, &[u8]); 3] = [
    (
        include_str!("../../samples/alimtalk.toml"),
        "recipients.csv",
        RECIPIENTS_CSV,
    ),
    (
        include_str!("../../samples/excel-campaign.toml"),
        "recipients.xlsx",
        RECIPIENTS_XLSX,
    ),
    (
        include_str!("../../samples/brand.toml"),
        "recipients.csv",
        RECIPIENTS_CSV,
    ),
];

/// Adds the samples once (a workspace that already holds campaigns is left as it is).
pub fn fill(console: &Console) -> Result<(), ConsoleError> {
    if !console.store.campaigns::<CampaignRecord>()?.is_empty() {
        return Ok(());
    }
    if super::connections::text(&console.workspace)?.trim().is_empty() {
        super::connections::save(
            &console.workspace,
            &console.store,
            super::connections::DEMO_CONNECTIONS,
            "console",
        )?;
    }
    for (text, recipients_name, recipients_bytes) in SAMPLES {
        let id = campaigns::new_id();
        let dir = console.workspace.campaign_dir(&id);
        crate::files::create_private_dir(&dir).map_err(ConsoleError::from_io)?;
        let recipients = StoredFile {
            stored: recipients_name.to_string(),
            original: recipients_name.to_string(),
            bytes: recipients_bytes.len() as u64,
        };
        let suppression = StoredFile {
            stored: "suppression.csv".into(),
            original: "suppression.csv".into(),
            bytes: SUPPRESSION_CSV.len() as u64,
        };
        write(&dir.join(recipients_name), recipients_bytes)?;
        write(&dir.join("suppression.csv"), SUPPRESSION_CSV)?;
        // The sample's endpoint and prices are the workspace's `sandbox` connection here.
        let mut settings = super::settings::parse_settings(text)?;
        super::settings::drop_workspace_keys(&mut settings);
        settings.insert("connection".into(), toml::Value::String("sandbox".into()));
        let text = toml::to_string(&settings).map_err(ConsoleError::internal)?;
        let text = super::settings::with_stored_paths(&text, Some(&recipients), Some(&suppression))?;
        write(&dir.join(campaigns::CAMPAIGN_FILE), text.as_bytes())?;
        let campaign = super::compose::load(&console.workspace, &id)?;
        let now = campaigns::now_text();
        let record = CampaignRecord {
            id: id.clone(),
            name: campaign.name.clone(),
            kind: campaign.kind.as_str().to_string(),
            state: State::Draft,
            author: "admin".into(),
            created_at: now.clone(),
            updated_at: now,
            updated_by: "admin".into(),
            recipients: Some(recipients),
            suppression: Some(suppression),
            check: None,
            submitted_by: None,
            approval: None,
            run: None,
        };
        console.store.put_campaign(&id, &record)?;
        console.store.audit("console", "demo", Some(&id), "sample campaign")?;
    }
    Ok(())
}

fn write(path: &std::path::Path, bytes: &[u8]) -> Result<(), ConsoleError> {
    std::io::Write::write_all(
        &mut crate::files::create_private(path).map_err(ConsoleError::from_io)?,
        bytes,
    )
    .map_err(ConsoleError::from_io)
}
