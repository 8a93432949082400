//! Uploaded forms: the CSRF token first, files streamed to disk under generated names with a size cap, their format told by their bytes (a workbook's decompressed size capped whatever its name), never under the client's file name.

use crate::console::auth::{same_token, Signed};
use crate::console::campaigns::StoredFile;
use crate::console::error::ConsoleError;
use crate::console::Console;
use axum::extract::Multipart;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Text fields are short: settings and column names.
const TEXT_FIELD_LIMIT: usize = 1 << 20;

/// A file received into the uploads folder, not yet placed.
pub struct Received {
    pub temporary: PathBuf,
    pub original: String,
    pub bytes: u64,
}

impl Drop for Received {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.temporary);
    }
}

/// A multipart form: its text fields and files.
pub struct Upload {
    pub fields: HashMap<String, String>,
    pub files: HashMap<String, Received>,
}

impl Upload {
    pub fn field(&self, name: &str) -> &str {
        self.fields.get(name).map(String::as_str).unwrap_or("")
    }
}

/// Who sent a multipart form: a page, whose first field must be the session's CSRF token, or the
/// API, on a token and without cookies (no CSRF field is read).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sender {
    Page,
    Api,
}

/// Reads a multipart form: from a page, its first field is the session's CSRF token.
pub async fn receive(
    console: &Console,
    signed: &Signed,
    mut form: Multipart,
    sender: Sender,
) -> Result<Upload, ConsoleError> {
    let mut upload = Upload {
        fields: HashMap::new(),
        files: HashMap::new(),
    };
    let mut first = sender == Sender::Page;
    while let Some(mut field) = form.next_field().await.map_err(multipart_error)? {
        let name = field.name().unwrap_or("").to_string();
        if first {
            first = false;
            let token = field.text().await.map_err(multipart_error)?;
            if name != "csrf" || !same_token(&token, &signed.session.csrf) {
                return Err(ConsoleError::Csrf);
            }
            continue;
        }
        match field.file_name().map(str::to_string) {
            Some(original) if !original.is_empty() => {
                let temporary = console
                    .workspace
                    .uploads_dir()
                    .join(format!("{}.part", crate::console::auth::random_token()));
                let mut received = Received {
                    temporary,
                    original: original.rsplit(['/', '\\']).next().unwrap_or("").to_string(),
                    bytes: 0,
                };
                let mut file = tokio::fs::File::from_std(
                    crate::files::create_private(&received.temporary).map_err(ConsoleError::from_io)?,
                );
                while let Some(chunk) = field.chunk().await.map_err(multipart_error)? {
                    received.bytes += chunk.len() as u64;
                    if received.bytes > console.max_upload {
                        return Err(ConsoleError::TooLarge(format!(
                            "{} is larger than the console takes ({} MB): split it, or ask the administrator to raise --max-upload-mb",
                            received.original,
                            console.max_upload >> 20
                        )));
                    }
                    tokio::io::AsyncWriteExt::write_all(&mut file, &chunk)
                        .await
                        .map_err(ConsoleError::from_io)?;
                }
                tokio::io::AsyncWriteExt::flush(&mut file)
                    .await
                    .map_err(ConsoleError::from_io)?;
                upload.files.insert(name, received);
            }
            // A file input left empty, or a text field.
            Some(_) => {}
            None => {
                let mut text = Vec::new();
                while let Some(chunk) = field.chunk().await.map_err(multipart_error)? {
                    text.extend_from_slice(&chunk);
                    if text.len() > TEXT_FIELD_LIMIT {
                        return Err(ConsoleError::TooLarge(format!("the field {name} is too long")));
                    }
                }
                let text = String::from_utf8(text)
                    .map_err(|_| ConsoleError::Invalid(format!("the field {name} is not UTF-8 text")))?;
                upload.fields.insert(name, text);
            }
        }
    }
    if first && sender == Sender::Page {
        return Err(ConsoleError::Csrf);
    }
    Ok(upload)
}

fn multipart_error(error: axum::extract::multipart::MultipartError) -> ConsoleError {
    if error.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
        ConsoleError::TooLarge("the upload is larger than the console takes".into())
    } else {
        ConsoleError::Invalid(format!("the upload could not be read: {}", error.body_text()))
    }
}

/// A recipients or suppression file's format, told by its first bytes, never by its name or a
/// setting: a workbook is a zip (checked against the unpacked cap) whatever it is called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sniffed {
    Xlsx,
    Ods,
    Xls,
    Parquet,
    /// Delimited text (CSV, TSV, TXT): the extension kept when the name says which.
    Text(&'static str),
}

impl Sniffed {
    pub fn extension(self) -> &'static str {
        match self {
            Sniffed::Xlsx => "xlsx",
            Sniffed::Ods => "ods",
            Sniffed::Xls => "xls",
            Sniffed::Parquet => "parquet",
            Sniffed::Text(extension) => extension,
        }
    }
}

const ZIP: &[u8] = b"PK\x03\x04";
const OLE: &[u8] = &[0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1];
const PARQUET: &[u8] = b"PAR1";
const READS: &str = "CSV (UTF-8 or CP949), XLSX, XLS, ODS or Parquet";

/// Tells the format from the file's first bytes; refuses an empty file and one the engine does
/// not read, naming it.
fn sniff(path: &Path, original: &str, unpacked_cap: u64) -> Result<Sniffed, ConsoleError> {
    let mut head = Vec::with_capacity(8192);
    std::io::Read::read_to_end(
        &mut std::io::Read::take(std::fs::File::open(path).map_err(ConsoleError::from_io)?, 8192),
        &mut head,
    )
    .map_err(ConsoleError::from_io)?;
    if head.iter().all(u8::is_ascii_whitespace) {
        return Err(ConsoleError::invalid(
            crate::word!(refuse_file_empty),
            vec![("file", original.into())],
        ));
    }
    if head.starts_with(ZIP) {
        return workbook_kind(path, original, unpacked_cap);
    }
    if head.starts_with(OLE) {
        return Ok(Sniffed::Xls);
    }
    if head.starts_with(PARQUET) {
        return Ok(Sniffed::Parquet);
    }
    if head.contains(&0) {
        return Err(ConsoleError::invalid(
            crate::word!(refuse_file_kind),
            vec![("file", original.into()), ("reads", READS.into())],
        ));
    }
    let named = Path::new(original)
        .extension()
        .map(|ext| ext.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    Ok(Sniffed::Text(match named.as_str() {
        "tsv" => "tsv",
        "txt" => "txt",
        _ => "csv",
    }))
}

/// A zip is an XLSX or an ODS by what it holds, or no spreadsheet at all; its declared sizes are
/// summed first, so that a small file that unpacks to gigabytes is refused before anything reads it.
fn workbook_kind(path: &Path, original: &str, cap: u64) -> Result<Sniffed, ConsoleError> {
    let file = std::fs::File::open(path).map_err(ConsoleError::from_io)?;
    let mut archive = zip::ZipArchive::new(file)
        .map_err(|error| ConsoleError::Invalid(format!("{original} is not a spreadsheet: {error}")))?;
    let mut total = 0u64;
    for index in 0..archive.len() {
        let entry = archive
            .by_index_raw(index)
            .map_err(|error| ConsoleError::Invalid(format!("{original}: {error}")))?;
        total = total.saturating_add(entry.size());
    }
    if total > cap {
        return Err(ConsoleError::TooLarge(format!(
            "{original} unpacks to {} MB, more than the console takes ({} MB)",
            total >> 20,
            cap >> 20
        )));
    }
    if archive.index_for_name("xl/workbook.xml").is_some() {
        return Ok(Sniffed::Xlsx);
    }
    if let Ok(mut mimetype) = archive.by_name("mimetype") {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut std::io::Read::take(&mut mimetype, 200), &mut text);
        if text.starts_with("application/vnd.oasis.opendocument.spreadsheet") {
            return Ok(Sniffed::Ods);
        }
    }
    Err(ConsoleError::Invalid(format!(
        "{original} is a zip archive but not a spreadsheet ({READS})"
    )))
}

/// Whether a text file holds a row after its header (read only until it finds one).
fn text_has_a_row(path: &Path) -> Result<bool, ConsoleError> {
    let file = std::fs::File::open(path).map_err(ConsoleError::from_io)?;
    let mut lines = 0;
    for line in std::io::BufRead::split(std::io::BufReader::new(file), b'\n') {
        let line = line.map_err(ConsoleError::from_io)?;
        if !line
            .iter()
            .all(|byte| byte.is_ascii_whitespace() || *byte == b',' || *byte == b';')
        {
            lines += 1;
            if lines >= 2 {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// Moves a received file into the campaign folder as `ROLE.EXT`, EXT told by its content; refuses
/// a file the engine does not read, an empty or header-only recipients list, and a workbook that
/// unpacks past the cap.
pub fn place(console: &Console, received: Received, dir: &Path, role: &str) -> Result<StoredFile, ConsoleError> {
    let sniffed = sniff(&received.temporary, &received.original, console.max_unpacked)?;
    if role == "recipients" && matches!(sniffed, Sniffed::Text(_)) && !text_has_a_row(&received.temporary)? {
        return Err(ConsoleError::invalid(
            crate::word!(refuse_file_header_only),
            vec![("file", received.original.as_str().into())],
        ));
    }
    let stored = format!("{role}.{}", sniffed.extension());
    std::fs::rename(&received.temporary, dir.join(&stored)).map_err(ConsoleError::from_io)?;
    Ok(StoredFile {
        stored,
        original: received.original.clone(),
        bytes: received.bytes,
    })
}
