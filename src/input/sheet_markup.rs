//! What calamine's values do not say, read from a spreadsheet's own XML: the ODS cells a merge covers, and the XLSX texts of only whitespace that calamine trimmed to nothing.
//!
//! calamine reads a LibreOffice cell hidden under a merge (`table:covered-table-cell`, which keeps
//! its content when the merge was made with "keep the contents of the hidden cells") as an
//! ordinary cell, and says nothing of ODS merges. It trims an XLSX `<t>` without
//! `xml:space="preserve"`, as openpyxl (and pandas through it) writes a text of only whitespace,
//! so a cell holding a line break reads as empty text. Both are read here, each only when it can
//! matter: the ODS scan when `content.xml` holds a covered cell at all, the XLSX one when the
//! sheet holds a cell of empty text.

use quick_xml::events::{BytesStart, Event};
use quick_xml::name::QName;
use quick_xml::{Reader, XmlVersion};
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

/// A rectangle of cells, 0-based and inclusive, as calamine places them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Area {
    pub first: (u32, u32),
    pub last: (u32, u32),
}

type Zip = zip::ZipArchive<BufReader<File>>;

fn open_zip(path: &Path) -> Result<Zip, String> {
    let file = File::open(path).map_err(|error| error.to_string())?;
    zip::ZipArchive::new(BufReader::new(file)).map_err(|error| error.to_string())
}

/// The name under which the part `name` is stored, found as calamine finds it (case and `\` ignored).
fn stored_name(zip: &Zip, name: &str) -> Option<String> {
    let wanted = name.trim_start_matches('/').to_ascii_lowercase();
    zip.file_names()
        .flatten()
        .find(|stored| stored.replace('\\', "/").to_ascii_lowercase() == wanted)
        .map(|stored| stored.into_owned())
}

/// The bytes of the part `name`; `None` when absent.
fn part(zip: &mut Zip, name: &str) -> Result<Option<Vec<u8>>, String> {
    let Some(stored) = stored_name(zip, name) else {
        return Ok(None);
    };
    let mut entry = zip.by_name(&stored).map_err(|error| error.to_string())?;
    let mut bytes = Vec::with_capacity(usize::try_from(entry.size()).unwrap_or(0));
    entry
        .read_to_end(&mut bytes)
        .map_err(|error| format!("{stored}: {error}"))?;
    Ok(Some(bytes))
}

fn reader(xml: &[u8]) -> Reader<&[u8]> {
    let mut reader = Reader::from_reader(xml);
    let config = reader.config_mut();
    // An empty element is a start and an end, so one loop reads `<c/>` and `<c>…</c>` alike.
    config.expand_empty_elements = true;
    config.check_end_names = false;
    reader
}

/// The attribute `name` (as written, prefix included), its entities resolved.
fn attribute(element: &BytesStart, name: &str) -> Result<Option<String>, String> {
    match element.try_get_attribute(name).map_err(|error| error.to_string())? {
        None => Ok(None),
        Some(value) => value
            .normalized_value(XmlVersion::Implicit1_0)
            .map(|value| Some(value.into_owned()))
            .map_err(|error| error.to_string()),
    }
}

/// A count attribute such as `table:number-columns-repeated` (1 when absent or not a number).
fn count(element: &BytesStart, name: &str) -> Result<u32, String> {
    Ok(attribute(element, name)?
        .and_then(|value| value.trim().parse::<u32>().ok())
        .unwrap_or(1)
        .max(1))
}

// ---------------------------------------------------------------------------------------------
// ODS: covered cells.

/// The cells of table `sheet` that a merge covers, each run of them as one area. Reading stops at
/// the end of that table.
pub fn ods_covered(path: &Path, sheet: &str) -> Result<Vec<Area>, String> {
    let mut zip = open_zip(path)?;
    let Some(content) = part(&mut zip, "content.xml")? else {
        return Ok(Vec::new());
    };
    if memchr::memmem::find(&content, b"covered-table-cell").is_none() {
        return Ok(Vec::new());
    }
    let mut xml = reader(&content);
    let mut covered = Vec::new();
    let mut in_sheet = false;
    let mut row = 0u32;
    let mut rows_here = 1u32;
    let mut column = 0u32;
    loop {
        match xml.read_event().map_err(|error| error.to_string())? {
            // A table inside a cell is never met here: each cell is read to its end below.
            Event::Start(element) if element.name() == QName("table:table") => {
                in_sheet = attribute(&element, "table:name")?.as_deref() == Some(sheet);
            }
            Event::End(element) if in_sheet && element.name() == QName("table:table") => break,
            Event::Start(element) if in_sheet && element.name() == QName("table:table-row") => {
                rows_here = count(&element, "table:number-rows-repeated")?;
                column = 0;
            }
            Event::End(element) if in_sheet && element.name() == QName("table:table-row") => {
                row = row.saturating_add(rows_here);
            }
            Event::Start(element)
                if in_sheet
                    && (element.name() == QName("table:table-cell")
                        || element.name() == QName("table:covered-table-cell")) =>
            {
                let columns_here = count(&element, "table:number-columns-repeated")?;
                if element.name() == QName("table:covered-table-cell") {
                    covered.push(Area {
                        first: (row, column),
                        last: (
                            row.saturating_add(rows_here - 1),
                            column.saturating_add(columns_here - 1),
                        ),
                    });
                }
                column = column.saturating_add(columns_here);
                xml.read_to_end(element.name()).map_err(|error| error.to_string())?;
            }
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(covered)
}

// ---------------------------------------------------------------------------------------------
// XLSX: texts of only whitespace.

/// The relationships of a part: id → target.
fn relationships(xml: &[u8]) -> Result<HashMap<String, (String, String)>, String> {
    let mut xml = reader(xml);
    let mut found = HashMap::new();
    loop {
        match xml.read_event().map_err(|error| error.to_string())? {
            Event::Start(element) if element.local_name().as_ref() == "Relationship" => {
                if let (Some(id), Some(target)) = (attribute(&element, "Id")?, attribute(&element, "Target")?) {
                    let kind = attribute(&element, "Type")?.unwrap_or_default();
                    found.insert(id, (target, kind));
                }
            }
            Event::Eof => return Ok(found),
            _ => {}
        }
    }
}

/// Where a relationship's target is: from the package root when absolute, else beside `directory`.
fn resolve(directory: &str, target: &str) -> String {
    match target.strip_prefix('/') {
        Some(absolute) => absolute.to_string(),
        None => format!("{directory}{target}"),
    }
}

/// The workbook part's directory (`xl/`) and name (`workbook.xml`), as the package says.
fn workbook_part(zip: &mut Zip) -> Result<(String, String), String> {
    let standard = || ("xl/".to_string(), "workbook.xml".to_string());
    let Some(package) = part(zip, "_rels/.rels")? else {
        return Ok(standard());
    };
    let target = relationships(&package)?
        .into_values()
        .find(|(_, kind)| kind.ends_with("/relationships/officeDocument"))
        .map(|(target, _)| resolve("", &target));
    Ok(match target {
        Some(target) => match target.rfind('/') {
            Some(slash) => (target[..=slash].to_string(), target[slash + 1..].to_string()),
            None => (String::new(), target),
        },
        None => standard(),
    })
}

/// The part holding worksheet `sheet`.
fn worksheet_part(zip: &mut Zip, sheet: &str) -> Result<Option<(String, String)>, String> {
    let (directory, name) = workbook_part(zip)?;
    let Some(links) = part(zip, &format!("{directory}_rels/{name}.rels"))? else {
        return Ok(None);
    };
    let links = relationships(&links)?;
    let Some(workbook) = part(zip, &format!("{directory}{name}"))? else {
        return Ok(None);
    };
    let mut xml = reader(&workbook);
    loop {
        match xml.read_event().map_err(|error| error.to_string())? {
            Event::Start(element) if element.local_name().as_ref() == "sheet" => {
                if attribute(&element, "name")?.as_deref() != Some(sheet) {
                    continue;
                }
                // The id's prefix is whatever the file binds the relationships namespace to.
                let id = element
                    .attributes()
                    .with_checks(false)
                    .flatten()
                    .find(|attribute| attribute.key.local_name().as_ref() == "id")
                    .map(|attribute| attribute.value.into_owned());
                return Ok(id
                    .and_then(|id| links.get(&id))
                    .map(|(target, _)| (resolve(&directory, target), directory.clone())));
            }
            Event::Eof => return Ok(None),
            _ => {}
        }
    }
}

/// The text of the `<t>` elements up to the end of the element just started (`<si>` or `<is>`),
/// phonetic runs left out as calamine leaves them out, when it is whitespace and not empty.
fn whitespace_text(xml: &mut Reader<&[u8]>, end: &str) -> Result<Option<String>, String> {
    let mut text = String::new();
    let (mut in_text, mut phonetic) = (false, false);
    loop {
        match xml.read_event().map_err(|error| error.to_string())? {
            Event::Start(element) if element.local_name().as_ref() == "rPh" => phonetic = true,
            Event::End(element) if element.local_name().as_ref() == "rPh" => phonetic = false,
            Event::Start(element) if element.local_name().as_ref() == "t" => in_text = !phonetic,
            Event::End(element) if element.local_name().as_ref() == "t" => in_text = false,
            Event::Text(content) if in_text => text.push_str(&content.xml10_content()),
            Event::GeneralRef(reference) if in_text => match reference.resolve_char_ref() {
                Ok(Some(character)) => text.push(character),
                // `&amp;` and its kind are not whitespace; the text is then no candidate.
                _ => text.push('&'),
            },
            Event::End(element) if element.local_name().as_ref() == end => break,
            Event::Eof => break,
            _ => {}
        }
    }
    Ok((!text.is_empty() && text.chars().all(char::is_whitespace)).then_some(text))
}

/// Of the `cells` (0-based row and column) of worksheet `sheet`, those whose text is whitespace
/// that is not empty, with that text. Everything else, and a package this cannot follow, gives none.
pub fn xlsx_whitespace_texts(
    path: &Path,
    sheet: &str,
    cells: &HashSet<(u32, u32)>,
) -> Result<HashMap<(u32, u32), String>, String> {
    let mut zip = open_zip(path)?;
    let Some((sheet_part, directory)) = worksheet_part(&mut zip, sheet)? else {
        return Ok(HashMap::new());
    };
    let Some(sheet_xml) = part(&mut zip, &sheet_part)? else {
        return Ok(HashMap::new());
    };
    // Shared strings that are whitespace, by index.
    let mut shared = HashMap::new();
    if let Some(strings) = part(&mut zip, &format!("{directory}sharedStrings.xml"))? {
        let mut xml = reader(&strings);
        let mut index = 0usize;
        loop {
            match xml.read_event().map_err(|error| error.to_string())? {
                Event::Start(element) if element.local_name().as_ref() == "si" => {
                    if let Some(text) = whitespace_text(&mut xml, "si")? {
                        shared.insert(index, text);
                    }
                    index += 1;
                }
                Event::Eof => break,
                _ => {}
            }
        }
    }
    let mut found = HashMap::new();
    let mut xml = reader(&sheet_xml);
    // A row or cell without its reference follows the one before, as calamine places it.
    let (mut row, mut column) = (0u32, 0u32);
    let mut next_row = 0u32;
    loop {
        match xml.read_event().map_err(|error| error.to_string())? {
            Event::Start(element) if element.local_name().as_ref() == "row" => {
                row = attribute(&element, "r")?
                    .and_then(|r| r.parse::<u32>().ok())
                    .map_or(next_row, |r| r.saturating_sub(1));
                next_row = row.saturating_add(1);
                column = 0;
            }
            Event::Start(element) if element.local_name().as_ref() == "c" => {
                let at = match attribute(&element, "r")?.as_deref().and_then(cell_position) {
                    Some(at) => at,
                    None => (row, column),
                };
                column = at.1.saturating_add(1);
                if !cells.contains(&at) {
                    xml.read_to_end(element.name()).map_err(|error| error.to_string())?;
                    continue;
                }
                let text = match attribute(&element, "t")?.as_deref() {
                    Some("inlineStr") => whitespace_inline(&mut xml)?,
                    Some("s") => shared_index(&mut xml)?.and_then(|index| shared.get(&index).cloned()),
                    _ => None,
                };
                if let Some(text) = text {
                    found.insert(at, text);
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(found)
}

/// Whether worksheet `sheet` has merged cells at all, told from its bytes without parsing them
/// (calamine's own reading of the merges parses the whole sheet again). The part is searched as
/// it is unzipped, never held whole.
pub fn xlsx_has_merges(path: &Path, sheet: &str) -> Result<bool, String> {
    const NEEDLE: &[u8] = b"mergeCell";
    let mut zip = open_zip(path)?;
    // A package this cannot follow is left to calamine's reading.
    let Some((sheet_part, _)) = worksheet_part(&mut zip, sheet)? else {
        return Ok(true);
    };
    let Some(stored) = stored_name(&zip, &sheet_part) else {
        return Ok(true);
    };
    let mut entry = zip.by_name(&stored).map_err(|error| error.to_string())?;
    let finder = memchr::memmem::Finder::new(NEEDLE);
    let mut window = vec![0u8; 64 * 1024];
    // The last bytes of one read are kept before the next, so a needle cut in two is still found.
    let mut kept = 0;
    loop {
        let read = entry
            .read(&mut window[kept..])
            .map_err(|error| format!("{stored}: {error}"))?;
        if read == 0 {
            return Ok(false);
        }
        let filled = kept + read;
        if finder.find(&window[..filled]).is_some() {
            return Ok(true);
        }
        kept = filled.min(NEEDLE.len() - 1);
        window.copy_within(filled - kept..filled, 0);
    }
}

/// The whitespace text of the inline string in the cell just started.
fn whitespace_inline(xml: &mut Reader<&[u8]>) -> Result<Option<String>, String> {
    let mut text = None;
    loop {
        match xml.read_event().map_err(|error| error.to_string())? {
            Event::Start(element) if element.local_name().as_ref() == "is" => {
                text = whitespace_text(xml, "is")?;
            }
            Event::End(element) if element.local_name().as_ref() == "c" => return Ok(text),
            Event::Eof => return Ok(text),
            _ => {}
        }
    }
}

/// The shared-string index in the cell just started.
fn shared_index(xml: &mut Reader<&[u8]>) -> Result<Option<usize>, String> {
    let (mut index, mut in_value) = (None, false);
    loop {
        match xml.read_event().map_err(|error| error.to_string())? {
            Event::Start(element) if element.local_name().as_ref() == "v" => in_value = true,
            Event::End(element) if element.local_name().as_ref() == "v" => in_value = false,
            Event::Text(content) if in_value => index = content.xml10_content().trim().parse().ok(),
            Event::End(element) if element.local_name().as_ref() == "c" => return Ok(index),
            Event::Eof => return Ok(index),
            _ => {}
        }
    }
}

/// `B3` as (row 2, column 1); `None` for anything else.
fn cell_position(reference: &str) -> Option<(u32, u32)> {
    let digits = reference.find(|c: char| c.is_ascii_digit())?;
    let (letters, number) = reference.split_at(digits);
    if letters.is_empty() || !letters.bytes().all(|b| b.is_ascii_alphabetic()) {
        return None;
    }
    let column = letters.bytes().try_fold(0u32, |column, letter| {
        column
            .checked_mul(26)?
            .checked_add(u32::from(letter.to_ascii_uppercase() - b'A') + 1)
    })?;
    let row = number.parse::<u32>().ok()?.checked_sub(1)?;
    Some((row, column - 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cell_references_become_zero_based_positions() {
        assert_eq!(cell_position("A1"), Some((0, 0)));
        assert_eq!(cell_position("B3"), Some((2, 1)));
        assert_eq!(cell_position("aa10"), Some((9, 26)));
        assert_eq!(cell_position("XFD1048576"), Some((1_048_575, 16_383)));
        for bad in ["", "A", "1", "A0", "A-1", "$A$1"] {
            assert_eq!(cell_position(bad), None, "{bad}");
        }
    }

    #[test]
    fn only_text_of_whitespace_is_a_candidate() {
        let texts = |xml: &str| {
            let mut reader = reader(xml.as_bytes());
            let mut found = Vec::new();
            loop {
                match reader.read_event().unwrap() {
                    Event::Start(element) if element.local_name().as_ref() == "si" => {
                        found.push(whitespace_text(&mut reader, "si").unwrap())
                    }
                    Event::Eof => return found,
                    _ => {}
                }
            }
        };
        let found = texts(
            "<sst><si><t>\n</t></si><si><t/></si><si><t>&#10;</t></si><si><t> a </t></si>\
             <si><r><t> </t></r><r><t>\t</t></r></si><si><t>&amp;</t></si><si><t>x</t><rPh><t> </t></rPh></si></sst>",
        );
        let expected = [Some("\n"), None, Some("\n"), None, Some(" \t"), None, None];
        assert_eq!(found, expected.map(|text| text.map(String::from)));
    }
}
