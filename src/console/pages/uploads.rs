//! Uploaded forms: the CSRF token first, files streamed to disk under generated names with a size cap (and a cap on a spreadsheet's decompressed size), never under the client's file name.

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

/// Reads a multipart form whose first field is the session's CSRF token.
pub async fn receive(console: &Console, signed: &Signed, mut form: Multipart) -> Result<Upload, ConsoleError> {
    let mut upload = Upload {
        fields: HashMap::new(),
        files: HashMap::new(),
    };
    let mut first = true;
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
    if first {
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

/// The extensions a recipients or suppression file may have.
const EXTENSIONS: [&str; 7] = ["csv", "txt", "tsv", "xlsx", "xls", "ods", "parquet"];

/// Moves a received file into the campaign folder as `ROLE.EXT`; refuses an extension the
/// engine does not read, and a spreadsheet that unpacks past the cap.
pub fn place(console: &Console, received: Received, dir: &Path, role: &str) -> Result<StoredFile, ConsoleError> {
    let extension = Path::new(&received.original)
        .extension()
        .map(|ext| ext.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if !EXTENSIONS.contains(&extension.as_str()) {
        return Err(ConsoleError::Invalid(format!(
            "{}: the console reads {} files; save it as one of these (an .xlsb as .xlsx)",
            received.original,
            EXTENSIONS.join(", ")
        )));
    }
    if matches!(extension.as_str(), "xlsx" | "ods") {
        check_unpacked_size(&received, console.max_unpacked)?;
    }
    let stored = format!("{role}.{extension}");
    std::fs::rename(&received.temporary, dir.join(&stored)).map_err(ConsoleError::from_io)?;
    Ok(StoredFile {
        stored,
        original: received.original.clone(),
        bytes: received.bytes,
    })
}

/// A zip's declared sizes, summed: a small file that unpacks to gigabytes is refused before it is read.
fn check_unpacked_size(received: &Received, cap: u64) -> Result<(), ConsoleError> {
    let file = std::fs::File::open(&received.temporary).map_err(ConsoleError::from_io)?;
    let mut archive = zip::ZipArchive::new(file)
        .map_err(|error| ConsoleError::Invalid(format!("{} is not a spreadsheet: {error}", received.original)))?;
    let mut total = 0u64;
    for index in 0..archive.len() {
        let entry = archive
            .by_index_raw(index)
            .map_err(|error| ConsoleError::Invalid(format!("{}: {error}", received.original)))?;
        total = total.saturating_add(entry.size());
    }
    if total > cap {
        return Err(ConsoleError::TooLarge(format!(
            "{} unpacks to {} MB, more than the console takes ({} MB)",
            received.original,
            total >> 20,
            cap >> 20
        )));
    }
    Ok(())
}
