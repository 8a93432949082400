//! Campaign pages: the list with its state filter, a new campaign (kind, settings, files), the overview with what can be done next, and the edit form (any change voids the check and the approval).

use super::filters;
use super::uploads::{self, Upload};
use super::{render, to, Me};
use crate::console::auth::{Editor, Posted, Signed};
use crate::console::campaigns::{self, CampaignRecord, Found, State};
use crate::console::error::ConsoleError;
use crate::console::store::{AuditEntry, Role};
use crate::console::words::Words;
use crate::console::workflow::{self, Applied, Step};
use crate::console::Shared;
use askama::Template;
use axum::extract::{Multipart, Query, State as Console};
use axum::response::Response;
use serde::Deserialize;

/// The state shown: a campaign this process sends is `paused` or `scheduled` while it is.
pub fn shown_state(console: &Shared, record: &CampaignRecord) -> &'static str {
    if record.state == State::Sending {
        match crate::console::runner::active(console, &record.id) {
            Some(run) => match run.board.phase() {
                "paused" => "paused",
                "scheduled" => "scheduled",
                _ => "sending",
            },
            None => "interrupted",
        }
    } else {
        record.state.as_str()
    }
}

pub struct Row {
    pub id: String,
    pub name: String,
    pub kind: String,
    pub state: &'static str,
    pub rows: String,
    pub sent: String,
    pub spend: String,
    pub author: String,
    pub updated: String,
}

#[derive(Template)]
#[template(path = "console/campaigns.html")]
struct ListPage {
    w: &'static Words,
    me: Me,
    rows: Vec<Row>,
    filter: String,
    states: Vec<&'static str>,
    can_edit: bool,
}

#[derive(Deserialize)]
pub struct ListQuery {
    #[serde(default)]
    state: String,
}

pub async fn list(
    Console(console): Console<Shared>,
    signed: Signed,
    Query(query): Query<ListQuery>,
) -> Result<Response, ConsoleError> {
    let mut records: Vec<CampaignRecord> = console.store.campaigns()?;
    records.sort_by(|a, b| b.updated_at.cmp(&a.updated_at));
    let mut rows = Vec::new();
    for record in records {
        let state = shown_state(&console, &record);
        if !query.state.is_empty() && query.state != state {
            continue;
        }
        let (sent, spend) = progress(&console, &record);
        rows.push(Row {
            rows: record
                .check
                .as_ref()
                .and_then(|check| check.scan.as_ref())
                .map(|scan| scan.rows.to_string())
                .unwrap_or_else(|| "–".into()),
            sent,
            spend,
            id: record.id,
            name: record.name,
            kind: record.kind,
            state,
            author: record.author,
            updated: record.updated_at,
        });
    }
    let mut states: Vec<&'static str> = State::ALL.iter().map(|state| state.as_str()).collect();
    states.insert(5, "paused");
    states.insert(5, "scheduled");
    render(ListPage {
        w: signed.words,
        can_edit: signed.can(Role::Editor),
        me: Me::of(&signed),
        rows,
        filter: query.state,
        states,
    })
}

/// Sent so far, and charged against the budget, from the live board or the run's checkpoint.
fn progress(console: &Shared, record: &CampaignRecord) -> (String, String) {
    if let Some(run) = crate::console::runner::active(console, &record.id) {
        let view = run.board.view();
        return (
            view.sent.to_string(),
            crate::console::runner::spend_text(view.charged, view.budget),
        );
    }
    if let Some(figures) = record.run.as_ref().and_then(|run| run.figures) {
        return (
            figures.sent.to_string(),
            crate::console::runner::spend_text(figures.charged, figures.budget),
        );
    }
    // A run recorded before its figures were kept in the record.
    if record.state.has_run() {
        if let Ok(status) = crate::engine::status(&console.workspace.run_dir(&record.id)) {
            let budget = status.budget.unwrap_or_default();
            return (
                status.sent.to_string(),
                crate::console::runner::spend_text(status.budget.map(|b| b.charged), budget.limit),
            );
        }
    }
    let budget = record.check.as_ref().and_then(|check| check.budget);
    ("0".into(), crate::console::runner::spend_text(None, budget))
}

#[derive(Template)]
#[template(path = "console/new.html")]
struct NewPage {
    w: &'static Words,
    me: Me,
    kinds: Vec<(&'static str, &'static str)>,
}

pub async fn new_form(Editor(signed): Editor) -> Result<Response, ConsoleError> {
    render(NewPage {
        w: signed.words,
        me: Me::of(&signed),
        kinds: crate::console::starters::KINDS.to_vec(),
    })
}

/// Places the uploaded recipients and suppression files in the campaign folder.
fn place_files(
    console: &Shared,
    upload: &mut Upload,
    dir: &std::path::Path,
    record: &mut CampaignRecord,
) -> Result<bool, ConsoleError> {
    let mut changed = false;
    if let Some(received) = upload.files.remove("recipients") {
        if let Some(old) = &record.recipients {
            let _ = std::fs::remove_file(dir.join(&old.stored));
        }
        record.recipients = Some(uploads::place(console, received, dir, "recipients")?);
        changed = true;
    }
    if let Some(received) = upload.files.remove("suppression") {
        if let Some(old) = &record.suppression {
            let _ = std::fs::remove_file(dir.join(&old.stored));
        }
        record.suppression = Some(uploads::place(console, received, dir, "suppression")?);
        changed = true;
    }
    if upload.field("remove_suppression") == "on" {
        if let Some(old) = record.suppression.take() {
            let _ = std::fs::remove_file(dir.join(&old.stored));
            changed = true;
        }
    }
    Ok(changed)
}

/// Writes campaign.toml from the settings given, with the stored file names, once they compose as
/// the engine will load them; the error names the setting.
fn write_settings(console: &Shared, record: &CampaignRecord, text: &str) -> Result<(), ConsoleError> {
    let text =
        crate::console::settings::with_stored_paths(text, record.recipients.as_ref(), record.suppression.as_ref())?;
    // Composed first: settings the console refuses (a path outside the folder, a connection that
    // is not there) are named on save, and never written.
    crate::console::compose::compose_settings(&console.workspace, &record.id, &text)?;
    let path = console.workspace.campaign_file(&record.id);
    std::io::Write::write_all(
        &mut crate::files::create_private(&path).map_err(ConsoleError::from_io)?,
        text.as_bytes(),
    )
    .map_err(ConsoleError::from_io)
}

pub async fn create(
    Console(console): Console<Shared>,
    Editor(signed): Editor,
    form: Multipart,
) -> Result<Response, ConsoleError> {
    let mut upload = uploads::receive(&console, &signed, form).await?;
    let settings = match upload.files.remove("campaign_file") {
        Some(received) => std::fs::read_to_string(&received.temporary)
            .map_err(|_| ConsoleError::Invalid(format!("{} is not UTF-8 text", received.original)))?,
        None => {
            let starter = crate::console::starters::starter(upload.field("kind"))
                .ok_or_else(|| ConsoleError::Invalid("choose a kind, or upload a campaign file".into()))?;
            toml::to_string(&starter).map_err(ConsoleError::internal)?
        }
    };
    let mut settings: toml::Table =
        toml::from_str(&settings).map_err(|error| ConsoleError::Invalid(format!("campaign file: {error}")))?;
    if !settings.contains_key("connection") {
        // The workspace's first connection, to be changed in the settings if it has several.
        let connections = crate::console::connections::load(&console.workspace)?;
        if let Some(name) = connections.keys().next() {
            settings.insert("connection".into(), toml::Value::String(name.clone()));
        }
    }
    let name = upload.field("name").trim().to_string();
    if !name.is_empty() {
        settings.insert("name".into(), toml::Value::String(name));
    }
    let record = new_draft(&console, &signed.user.name, &settings, |record, dir| {
        place_files(&console, &mut upload, dir, record).map(drop)
    })?;
    let files: Vec<&str> = [record.recipients.as_ref(), record.suppression.as_ref()]
        .into_iter()
        .flatten()
        .map(|file| file.original.as_str())
        .collect();
    console
        .store
        .audit(&signed.user.name, "created", Some(&record.id), &files.join(", "))?;
    Ok(to(format!("/campaigns/{}/edit", record.id)))
}

/// A new draft made by `by` from `settings`, its files placed by `files` into its new folder; the
/// folder is taken away again when anything is refused.
fn new_draft(
    console: &Shared,
    by: &str,
    settings: &toml::Table,
    files: impl FnOnce(&mut CampaignRecord, &std::path::Path) -> Result<(), ConsoleError>,
) -> Result<CampaignRecord, ConsoleError> {
    let id = campaigns::new_id();
    let dir = console.workspace.campaign_dir(&id);
    crate::files::create_private_dir(&dir).map_err(ConsoleError::from_io)?;
    let now = campaigns::now_text();
    let mut record = CampaignRecord {
        id: id.clone(),
        name: String::new(),
        kind: String::new(),
        state: State::Draft,
        author: by.to_string(),
        created_at: now.clone(),
        updated_at: now,
        updated_by: by.to_string(),
        recipients: None,
        suppression: None,
        check: None,
        submitted_by: None,
        approval: None,
        run: None,
    };
    let made = (|| {
        files(&mut record, &dir)?;
        let text = toml::to_string(settings).map_err(ConsoleError::internal)?;
        write_settings(console, &record, &text)
    })();
    if let Err(error) = made {
        let _ = std::fs::remove_dir_all(&dir);
        return Err(error);
    }
    (record.name, record.kind) = name_and_kind(settings);
    console.store.put_campaign(&id, &record)?;
    Ok(record)
}

/// A new draft with the settings, text and mappings of a campaign (a team sends the same kind of
/// campaign every week), without its files, check or approval.
pub async fn copy(
    Console(console): Console<Shared>,
    Found(source): Found,
    posted: Posted<super::flow::Empty, Editor>,
) -> Result<Response, ConsoleError> {
    let Editor(signed) = posted.signed;
    let text = std::fs::read_to_string(console.workspace.campaign_file(&source.id)).map_err(ConsoleError::from_io)?;
    let mut settings = crate::console::settings::parse_settings(&text)?;
    // The copy reads the files uploaded to it, not the source's.
    if let Some(recipients) = settings.get_mut("recipients").and_then(toml::Value::as_table_mut) {
        for key in ["suppression", "opt_outs"] {
            recipients.remove(key);
        }
    }
    settings.insert(
        "name".into(),
        toml::Value::String(format!("{} ({})", source.name, signed.words.copy_suffix)),
    );
    let record = new_draft(&console, &signed.user.name, &settings, |_, _| Ok(()))?;
    console.store.audit(
        &signed.user.name,
        "copied",
        Some(&record.id),
        &format!("from {} ({})", source.name, source.id),
    )?;
    Ok(to(format!("/campaigns/{}/edit", record.id)))
}

fn name_and_kind(settings: &toml::Table) -> (String, String) {
    let text = |key: &str| settings.get(key).and_then(|v| v.as_str()).unwrap_or("").to_string();
    (text("name"), text("kind"))
}

#[derive(Template)]
#[template(path = "console/campaign.html")]
struct OverviewPage {
    w: &'static Words,
    me: Me,
    c: CampaignRecord,
    state: &'static str,
    settings: String,
    history: Vec<AuditEntry>,
    can_edit: bool,
    can_approve: bool,
    own: bool,
    two_person: bool,
    estimate: String,
    uncertain: u64,
    /// Inside enforced quiet hours: when the campaign may start (KST), offered as its start time.
    quiet_until: String,
    /// The same time as the start form's date-time field takes it (`2026-11-27T08:00`).
    quiet_until_input: String,
    /// A start was just refused for quiet hours.
    refused_quiet: bool,
}

#[derive(Deserialize)]
pub struct OverviewQuery {
    #[serde(default)]
    refused: String,
}

pub async fn overview(
    Console(console): Console<Shared>,
    signed: Signed,
    Found(record): Found,
    Query(query): Query<OverviewQuery>,
) -> Result<Response, ConsoleError> {
    let id = record.id.clone();
    let quiet_end = if record.state == State::Approved {
        crate::console::compose::load(&console.workspace, &id)
            .ok()
            .and_then(|campaign| crate::console::check::enforced_quiet_hours_end(&campaign))
    } else {
        None
    };
    let quiet_until = quiet_end
        .map(|end| end.format("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_default();
    let quiet_until_input = quiet_end
        .map(|end| end.format("%Y-%m-%dT%H:%M").to_string())
        .unwrap_or_default();

    let settings = std::fs::read_to_string(console.workspace.campaign_file(&id)).unwrap_or_default();
    let uncertain = if record.state.resumable() {
        crate::engine::status(&console.workspace.run_dir(&id))
            .map(|status| status.uncertain)
            .unwrap_or(0)
    } else {
        0
    };
    let estimate = super::won_opt(record.check.as_ref().and_then(|check| check.estimate));
    render(OverviewPage {
        w: signed.words,
        state: shown_state(&console, &record),
        settings,
        history: console
            .store
            .audit_log(&crate::console::store::AuditFilter::campaign(&id), 50)?,
        can_edit: signed.can(Role::Editor),
        can_approve: signed.can(Role::Approver),
        own: record.is_own(&signed.user.name),
        two_person: console.two_person,
        estimate,
        uncertain,
        refused_quiet: query.refused == "quiet_hours" && !quiet_until.is_empty(),
        quiet_until,
        quiet_until_input,
        me: Me::of(&signed),
        c: record,
    })
}

#[derive(Template)]
#[template(path = "console/edit.html")]
struct EditPage {
    w: &'static Words,
    me: Me,
    c: CampaignRecord,
    /// The settings the form does not show, as TOML.
    settings: String,
    fields: Vec<crate::console::form::FieldView>,
    columns: Vec<String>,
    sheets: Vec<String>,
    phone: String,
    name: String,
    sheet: String,
}

pub async fn edit_form(
    Console(console): Console<Shared>,
    Editor(signed): Editor,
    Found(record): Found,
) -> Result<Response, ConsoleError> {
    let id = record.id.clone();
    let settings = std::fs::read_to_string(console.workspace.campaign_file(&id)).unwrap_or_default();
    let table: toml::Table = toml::from_str(&settings).unwrap_or_default();
    let mapped = |key: &str| {
        table
            .get("recipients")
            .and_then(|section| section.get(key))
            .and_then(|value| value.as_str())
            .unwrap_or("")
            .to_string()
    };
    let (sheets, columns) = match &record.recipients {
        Some(file) => {
            let path = campaigns::stored_path(&console.workspace.campaign_dir(&id), file);
            let sheet = mapped("sheet");
            tokio::task::spawn_blocking(move || super::super::headers::read(&path, &sheet))
                .await
                .map_err(ConsoleError::internal)?
        }
        None => (Vec::new(), Vec::new()),
    };
    // Settings that no longer parse are shown whole, as written, for the person to mend.
    let (fields, settings) = match toml::from_str::<toml::Table>(&settings) {
        Ok(parsed) => (
            crate::console::form::views(&record.kind, &parsed, signed.words.lang == "ko"),
            crate::console::form::others(&record.kind, &parsed)?,
        ),
        Err(_) => (Vec::new(), settings),
    };
    render(EditPage {
        w: signed.words,
        me: Me::of(&signed),
        phone: mapped("phone"),
        name: mapped("name"),
        sheet: mapped("sheet"),
        c: record,
        fields,
        settings,
        columns,
        sheets,
    })
}

pub async fn edit(
    Console(console): Console<Shared>,
    Editor(signed): Editor,
    Found(record): Found,
    form: Multipart,
) -> Result<Response, ConsoleError> {
    let id = record.id.clone();
    let mut upload = uploads::receive(&console, &signed, form).await?;
    let by = &signed.user.name;
    workflow::take(&console, &id, Step::Edit, by, async |record| {
        let dir = console.workspace.campaign_dir(&id);
        place_files(&console, &mut upload, &dir, record)?;
        // The form's fields are merged only when the page sent them for this kind.
        let mut text = if upload.field("form_kind") == record.kind {
            crate::console::form::merge(&record.kind, upload.field("settings"), &upload.fields)?
        } else {
            upload.field("settings").to_string()
        };
        if upload.fields.contains_key("phone") {
            text = crate::console::settings::with_columns(
                &text,
                upload.field("phone"),
                upload.field("name"),
                upload.field("sheet"),
            )?;
        }
        let settings: toml::Table = crate::console::settings::parse_settings(&text)?;
        let written = write_settings(&console, record, &text);
        (record.name, record.kind) = name_and_kind(&settings);
        record.void_check(by);
        if let Err(refused) = written {
            // Files placed before the settings were refused: the check is void all the same.
            console.store.put_campaign(&id, record)?;
            return Err(refused);
        }
        Ok(Applied::Changed {
            detail: String::new(),
            then: (),
        })
    })
    .await?;
    Ok(to(format!("/campaigns/{id}")))
}
