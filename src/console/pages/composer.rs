//! The composer: the new-campaign and edit forms (kind by its name, text, each placeholder tied to a column of the recipients file, a preview of the first recipient's message, advanced settings); a refused form comes back with the person's input and an error summary; any change voids the check and the approval.

mod columns;
mod preview;

use super::filters;
use super::uploads::{self, Upload};
use super::{render, to, Me};
use crate::console::auth::{Editor, Signed};
use crate::console::campaigns::{self, CampaignRecord, Found, State};
use crate::console::error::{ConsoleError, Refusal};
use crate::console::form::{FieldView, Refused};
use crate::console::words::Words;
use crate::console::workflow::{self, Applied, Step};
use crate::console::Shared;
use askama::Template;
use axum::extract::{Multipart, State as Console};
use axum::http::StatusCode;
use axum::response::Response;
use columns::{field_id, Mapping, PlaceholderView, Sample};
use std::collections::HashMap;

/// Why a form was not taken: a refusal the form shows on its field (with its status: 422, or 413
/// for a file past the caps), or an error page.
pub(crate) enum Failure {
    Form(Refused, StatusCode),
    Page(ConsoleError),
}

impl From<ConsoleError> for Failure {
    fn from(error: ConsoleError) -> Failure {
        Failure::Page(error)
    }
}

impl Failure {
    /// The refusal as an error of its own (the API's answer: a problem naming the field).
    pub(crate) fn into_error(self) -> ConsoleError {
        match self {
            Failure::Form(refused, status) => ConsoleError::Field {
                field: refused.field,
                message: refused.message,
                too_large: status == StatusCode::PAYLOAD_TOO_LARGE,
            },
            Failure::Page(error) => error,
        }
    }

    /// A refusal of what was sent (422) is shown on `field` of the form; anything else is a page.
    fn on_field(error: ConsoleError, field: &str, lead: &str, w: &Words) -> Failure {
        let status = match error {
            ConsoleError::Invalid(_) | ConsoleError::Said(Refusal::Invalid, _) => StatusCode::UNPROCESSABLE_ENTITY,
            ConsoleError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            other => return Failure::Page(other),
        };
        let said = match &error {
            ConsoleError::Said(_, said) => said.in_words(w),
            other => other.to_string(),
        };
        let detail = crate::console::error::without_server_paths(&said);
        Failure::Form(
            Refused::new(field, crate::console::words::fill(lead, &[("detail", &detail)])),
            status,
        )
    }

    /// A refusal of the form (422).
    fn form(refused: Refused) -> Failure {
        Failure::Form(refused, StatusCode::UNPROCESSABLE_ENTITY)
    }
}

/// The error summary at the top of a form, each entry linking to its field.
pub struct ErrorView {
    pub id: String,
    pub message: String,
}

fn error_views(refused: &[Refused]) -> Vec<ErrorView> {
    refused
        .iter()
        .map(|refused| ErrorView {
            id: field_id(&refused.field),
            message: refused.message.clone(),
        })
        .collect()
}

fn refused_page(page: impl Template, status: StatusCode) -> Result<Response, ConsoleError> {
    let mut response = render(page)?;
    *response.status_mut() = status;
    Ok(response)
}

#[derive(Template)]
#[template(path = "console/new.html")]
struct NewPage {
    w: &'static Words,
    me: Me,
    /// (kind, its name in the page's language)
    kinds: Vec<(&'static str, String)>,
    name: String,
    kind: String,
    errors: Vec<ErrorView>,
}

impl NewPage {
    fn of(signed: &Signed, name: String, kind: String, errors: Vec<ErrorView>) -> NewPage {
        NewPage {
            w: signed.words,
            me: Me::of(signed),
            kinds: crate::console::starters::KINDS
                .iter()
                .map(|(kind, _)| (*kind, signed.words.kind(kind)))
                .collect(),
            name,
            kind,
            errors,
        }
    }

    /// The message of the field's error, empty when it has none.
    fn error(&self, field: &str) -> &str {
        field_error(&self.errors, field)
    }
}

fn field_error<'a>(errors: &'a [ErrorView], field: &str) -> &'a str {
    let id = field_id(field);
    errors
        .iter()
        .find(|error| error.id == id)
        .map_or("", |error| error.message.as_str())
}

pub async fn new_form(Editor(signed): Editor) -> Result<Response, ConsoleError> {
    render(NewPage::of(&signed, String::new(), String::new(), Vec::new()))
}

/// Places the uploaded recipients and suppression files in the campaign folder; a file refused
/// is refused on its own field.
fn place_files(
    console: &Shared,
    upload: &mut Upload,
    dir: &std::path::Path,
    record: &mut CampaignRecord,
    w: &Words,
) -> Result<bool, Failure> {
    let mut changed = false;
    for role in ["recipients", "suppression"] {
        let Some(received) = upload.files.remove(role) else {
            continue;
        };
        let placed = uploads::place(console, received, dir, role)
            .map_err(|error| Failure::on_field(error, role, w.composer_refused_file, w))?;
        let slot = if role == "recipients" {
            &mut record.recipients
        } else {
            &mut record.suppression
        };
        if let Some(old) = slot.replace(placed.clone()) {
            if old.stored != placed.stored {
                let _ = std::fs::remove_file(dir.join(&old.stored));
            }
        }
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
    let mut upload = uploads::receive(&console, &signed, form, uploads::Sender::Page).await?;
    let record = match create_campaign(&console, &signed, &mut upload) {
        Ok(record) => record,
        Err(Failure::Form(refused, status)) => {
            return refused_page(
                NewPage::of(
                    &signed,
                    upload.field("name").to_string(),
                    upload.field("kind").to_string(),
                    error_views(&[refused]),
                ),
                status,
            )
        }
        Err(Failure::Page(error)) => return Err(error),
    };
    Ok(to(format!("/campaigns/{}/edit", record.id)))
}

/// A new campaign from the new-campaign form (the page's or the API's), audited.
pub(crate) fn create_campaign(
    console: &Shared,
    signed: &Signed,
    upload: &mut Upload,
) -> Result<CampaignRecord, Failure> {
    let record = create_draft(console, signed, upload)?;
    let files: Vec<&str> = [record.recipients.as_ref(), record.suppression.as_ref()]
        .into_iter()
        .flatten()
        .map(|file| file.original.as_str())
        .collect();
    console
        .store
        .audit(&signed.user.name, "created", Some(&record.id), &files.join(", "))?;
    Ok(record)
}

/// A new draft from the kind's starting settings or an uploaded campaign file, with its files.
fn create_draft(console: &Shared, signed: &Signed, upload: &mut Upload) -> Result<CampaignRecord, Failure> {
    let w = signed.words;
    let from_file = upload.files.contains_key("campaign_file");
    // Where a refusal of the settings is shown: the campaign file, or the kind they start from.
    let settings_field = if from_file { "campaign_file" } else { "kind" };
    let refused_settings =
        |error: ConsoleError| Failure::on_field(error, settings_field, w.composer_campaign_file_refused, w);
    let settings = match upload.files.remove("campaign_file") {
        Some(received) => std::fs::read_to_string(&received.temporary).map_err(|_| {
            refused_settings(ConsoleError::Invalid(format!(
                "{} is not UTF-8 text",
                received.original
            )))
        })?,
        None => {
            let starter = crate::console::starters::starter(upload.field("kind"))
                .ok_or_else(|| Failure::form(Refused::new("kind", w.composer_choose_kind)))?;
            toml::to_string(&starter).map_err(ConsoleError::internal)?
        }
    };
    let mut settings: toml::Table = toml::from_str(&settings)
        .map_err(|error| refused_settings(ConsoleError::Invalid(format!("campaign file: {error}"))))?;
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
    new_draft_with(console, &signed.user.name, &settings, |record, dir| {
        place_files(console, upload, dir, record, w).map(drop)
    })
    .map_err(|failure| match failure {
        Failure::Page(error) => refused_settings(error),
        form => form,
    })
}

/// A new draft made by `by` from `settings`, its files placed by `files` into its new folder; the
/// folder is taken away again when anything is refused.
pub(super) fn new_draft(
    console: &Shared,
    by: &str,
    settings: &toml::Table,
    files: impl FnOnce(&mut CampaignRecord, &std::path::Path) -> Result<(), ConsoleError>,
) -> Result<CampaignRecord, ConsoleError> {
    new_draft_with(console, by, settings, files)
}

/// [`new_draft`], whose files may be refused with an error of their own.
fn new_draft_with<E: From<ConsoleError>>(
    console: &Shared,
    by: &str,
    settings: &toml::Table,
    files: impl FnOnce(&mut CampaignRecord, &std::path::Path) -> Result<(), E>,
) -> Result<CampaignRecord, E> {
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
        write_settings(console, &record, &text).map_err(E::from)
    })();
    if let Err(error) = made {
        let _ = std::fs::remove_dir_all(&dir);
        return Err(error);
    }
    (record.name, record.kind) = name_and_kind(settings);
    console.store.put_campaign(&id, &record)?;
    Ok(record)
}

fn name_and_kind(settings: &toml::Table) -> (String, String) {
    let text = |key: &str| settings.get(key).and_then(|v| v.as_str()).unwrap_or("").to_string();
    (text("name"), text("kind"))
}

#[derive(Template)]
#[template(path = "console/edit.html")]
struct EditPage {
    w: &'static Words,
    me: Me,
    c: CampaignRecord,
    kind_name: String,
    /// The settings the form does not show, as TOML.
    settings: String,
    fields: Vec<FieldView>,
    /// The placeholders of the texts, each with its column.
    placeholders: Vec<PlaceholderView>,
    /// The text has the name placeholder: its column is chosen among the placeholders.
    name_in_text: bool,
    mapping: Mapping,
    sample: Sample,
    preview: preview::Preview,
    /// The preview as the phone-style partial draws it.
    phone: crate::console::phone_view::Phone,
    errors: Vec<ErrorView>,
}

impl EditPage {
    /// The message of the field's error, empty when it has none.
    fn error(&self, field: &str) -> &str {
        field_error(&self.errors, field)
    }

    fn id(&self, field: &str) -> String {
        field_id(field)
    }

    fn in_header(&self, column: &str) -> bool {
        self.sample.header.iter().any(|name| name == column)
    }
}

/// What the form shows: from the saved settings, or as a refused form sent it.
enum Shown<'a> {
    Saved(&'a str),
    Posted(&'a HashMap<String, String>),
}

/// The edit page of `record`, showing `shown`, with `errors`.
async fn edit_page(
    console: &Shared,
    signed: &Signed,
    record: CampaignRecord,
    shown: Shown<'_>,
    errors: Vec<ErrorView>,
) -> Result<EditPage, ConsoleError> {
    let w = signed.words;
    let (fields, settings, mapping) = match shown {
        Shown::Saved(text) => match toml::from_str::<toml::Table>(text) {
            Ok(parsed) => (
                crate::console::form::views(&record.kind, &parsed, w),
                crate::console::form::others(&record.kind, &parsed)?,
                Mapping::of_settings(&parsed),
            ),
            // Settings that no longer parse are shown whole, as written, for the person to mend.
            Err(_) => (Vec::new(), text.to_string(), Mapping::default()),
        },
        Shown::Posted(fields) => {
            let settings = fields.get("settings").cloned().unwrap_or_default();
            if fields.get("form_kind") == Some(&record.kind) {
                (
                    crate::console::form::posted_views(&record.kind, fields, w),
                    settings,
                    Mapping::of_form(fields),
                )
            } else {
                (Vec::new(), settings, Mapping::default())
            }
        }
    };
    let sample = sample_of(console, &record, &mapping.sheet, &settings).await?;
    let texts: Vec<&str> = fields
        .iter()
        .filter(|field| field.input == "message")
        .map(|field| field.value.as_str())
        .collect();
    let placeholders = if fields.is_empty() {
        Vec::new()
    } else {
        columns::placeholders(&texts, &mapping)
    };
    let text = fields
        .iter()
        .find(|field| field.name == "message.text")
        .map_or("", |field| field.value.as_str());
    let preview = preview::preview(&record.kind, text, &mapping, &sample, w);
    let kind_name = w.kind(&record.kind);
    let value_of = |name: &str| {
        fields
            .iter()
            .find(|field| field.name == name)
            .map_or("", |field| field.value.as_str())
    };
    let phone_column = if mapping.phone.is_empty() {
        "phone"
    } else {
        mapping.phone.as_str()
    };
    let phone = crate::console::phone_view::Phone {
        lane: kind_name.clone(),
        row: 2,
        phone: sample.value(phone_column).unwrap_or("").to_string(),
        chosen: "first".into(),
        billing_class: preview.class.clone(),
        sender: [value_of("message.callback_no"), value_of("message.channel_id")]
            .into_iter()
            .find(|sender| !sender.is_empty())
            .unwrap_or("")
            .to_string(),
        text: preview.text.clone(),
        chars: Some(preview.text.chars().count() as u64),
        bytes: crate::text::euc_kr_len(&preview.text).ok().map(|bytes| bytes as u64),
        filled_by_service: false,
        variables: String::new(),
        length: preview.size.clone(),
        fallback: None,
        fallback_said: None,
    };
    Ok(EditPage {
        w,
        me: Me::of(signed),
        kind_name,
        preview,
        phone,
        name_in_text: placeholders.iter().any(|placeholder| placeholder.field == "name"),
        c: record,
        settings,
        fields,
        placeholders,
        mapping,
        sample,
        errors,
    })
}

/// The header and first row of the campaign's recipients file, read off the request's thread.
async fn sample_of(
    console: &Shared,
    record: &CampaignRecord,
    sheet: &str,
    settings: &str,
) -> Result<Sample, ConsoleError> {
    let Some(file) = &record.recipients else {
        return Ok(Sample::default());
    };
    let path = campaigns::stored_path(&console.workspace.campaign_dir(&record.id), file);
    let encoding = toml::from_str::<toml::Table>(settings)
        .ok()
        .and_then(|table| table.get("recipients")?.get("encoding")?.clone().try_into().ok())
        .unwrap_or_default();
    let sheet = sheet.to_string();
    tokio::task::spawn_blocking(move || columns::read_sample(&path, &sheet, encoding))
        .await
        .map_err(ConsoleError::internal)
}

pub async fn edit_form(
    Console(console): Console<Shared>,
    Editor(signed): Editor,
    Found(record): Found,
) -> Result<Response, ConsoleError> {
    let settings = std::fs::read_to_string(console.workspace.campaign_file(&record.id)).unwrap_or_default();
    render(edit_page(&console, &signed, record, Shown::Saved(&settings), Vec::new()).await?)
}

pub async fn edit(
    Console(console): Console<Shared>,
    Editor(signed): Editor,
    Found(record): Found,
    form: Multipart,
) -> Result<Response, ConsoleError> {
    let id = record.id.clone();
    let mut upload = uploads::receive(&console, &signed, form, uploads::Sender::Page).await?;
    match edit_campaign(&console, &signed, &id, &mut upload).await? {
        (None, _) => Ok(to(format!("/campaigns/{id}"))),
        (Some((refused, status)), record) => refused_page(
            edit_page(
                &console,
                &signed,
                record,
                Shown::Posted(&upload.fields),
                error_views(&[refused]),
            )
            .await?,
            status,
        ),
    }
}

/// Takes an edit (the page's form or the API's): files placed and settings saved under the
/// workflow's rule; a refusal of a field is answered with the record as it then stands.
pub(crate) async fn edit_campaign(
    console: &Shared,
    signed: &Signed,
    id: &str,
    upload: &mut Upload,
) -> Result<(Option<(Refused, StatusCode)>, CampaignRecord), ConsoleError> {
    let by = &signed.user.name;
    let w = signed.words;
    workflow::take(console, id, Step::Edit, by, async |record| {
        let mut changed = false;
        let failure = match save(console, upload, record, w, &mut changed).await {
            Ok(()) => {
                record.void_check(by);
                return Ok(Applied::Changed {
                    detail: String::new(),
                    then: None,
                });
            }
            Err(failure) => failure,
        };
        if changed {
            // Files placed before the form was refused: the check is void all the same.
            record.void_check(by);
            record.touch(by);
            console.store.put_campaign(id, record)?;
        }
        match failure {
            Failure::Form(refused, status) => Ok(Applied::Unchanged(Some((refused, status)))),
            Failure::Page(error) => Err(error),
        }
    })
    .await
}

/// Takes the edit form: its files, its fields and columns merged into the settings, written once
/// they compose.
async fn save(
    console: &Shared,
    upload: &mut Upload,
    record: &mut CampaignRecord,
    w: &'static Words,
    changed: &mut bool,
) -> Result<(), Failure> {
    let dir = console.workspace.campaign_dir(&record.id);
    *changed = place_files(console, upload, &dir, record, w)?;
    // The form's fields are merged only when the page sent them for this kind.
    let in_form = upload.field("form_kind") == record.kind;
    let text = if in_form {
        crate::console::form::merge(&record.kind, upload.field("settings"), &upload.fields, w).map_err(Failure::form)?
    } else {
        upload.field("settings").to_string()
    };
    let saved_text = std::fs::read_to_string(console.workspace.campaign_file(&record.id)).unwrap_or_default();
    let saved: toml::Table = toml::from_str(&saved_text).unwrap_or_default();
    let sheet = match upload.fields.get("sheet") {
        Some(sheet) => sheet.clone(),
        None => Mapping::of_settings(&saved).sheet,
    };
    let sample = sample_of(console, record, &sheet, &text).await?;
    let text = columns::apply(&text, &upload.fields, &saved, &sample.header, in_form, w).map_err(Failure::form)?;
    let settings =
        crate::console::settings::parse_settings(&text).map_err(|error| Failure::form(Refused::settings(&error, w)))?;
    write_settings(console, record, &text)
        .map_err(|error| Failure::on_field(error, "settings", w.composer_refused_settings, w))?;
    (record.name, record.kind) = name_and_kind(&settings);
    Ok(())
}
