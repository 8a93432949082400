//! Reading back the workbooks msgbatch writes, as Excel would: unzip, then read the sheets' XML (cells with their types and number formats, frozen panes, autofilters).
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

/// A cell as stored: its type and text, and its style's number format.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Text(String),
    Number(f64),
    Bool(bool),
}

#[derive(Debug, Clone)]
pub struct Cell {
    pub value: Value,
    pub number_format: Option<String>,
}

impl Cell {
    pub fn text(&self) -> &str {
        match &self.value {
            Value::Text(text) => text,
            other => panic!("not a text cell: {other:?}"),
        }
    }

    pub fn number(&self) -> f64 {
        match &self.value {
            Value::Number(number) => *number,
            other => panic!("not a number cell: {other:?}"),
        }
    }
}

pub struct Sheet {
    pub name: String,
    pub xml: String,
    /// Cells by reference (`B2`).
    pub cells: BTreeMap<String, Cell>,
}

impl Sheet {
    pub fn cell(&self, reference: &str) -> Option<&Cell> {
        self.cells.get(reference)
    }

    /// Whether the first row is frozen: a pane split below row 1, frozen.
    pub fn header_frozen(&self) -> bool {
        self.xml.contains("<pane ")
            && self.xml.contains("ySplit=\"1\"")
            && self.xml.contains("topLeftCell=\"A2\"")
            && self.xml.contains("state=\"frozen\"")
    }

    /// The `ref` of the sheet's autofilter, like `A1:R14`.
    pub fn autofilter(&self) -> Option<String> {
        attribute(&self.xml, "<autoFilter ", "ref")
    }

    /// Rows that hold a cell, the header included.
    pub fn rows(&self) -> usize {
        self.xml.matches("<row ").count()
    }

    /// The texts of the first row, from column A until a blank.
    pub fn column_headers(&self) -> Vec<&str> {
        ('A'..='Z')
            .map_while(|column| self.cells.get(&format!("{column}1")))
            .map(Cell::text)
            .collect()
    }

    /// The cells of column `column` (a letter), from row `from` down, in order.
    pub fn column(&self, column: &str, from: u32) -> Vec<&Cell> {
        (from..=self.rows() as u32)
            .filter_map(|row| self.cells.get(&format!("{column}{row}")))
            .collect()
    }

    /// The first row (from the top) whose column A holds the text `key`.
    fn row_labelled(&self, key: &str) -> u32 {
        (1..=self.rows() as u32 * 2)
            .find(|row| {
                self.cells.get(&format!("A{row}")).map(|cell| &cell.value) == Some(&Value::Text(key.to_string()))
            })
            .unwrap_or_else(|| panic!("sheet {} has no row {key:?} in column A", self.name))
    }

    /// The value next to the label `label` in column A (column B on the same row).
    pub fn labelled(&self, label: &str) -> &Cell {
        let row = self.row_labelled(label);
        self.cells
            .get(&format!("B{row}"))
            .unwrap_or_else(|| panic!("sheet {}: nothing beside {label:?}", self.name))
    }

    /// The cells of the first row whose column A is `key`, from column A until a blank.
    pub fn row_of(&self, key: &str) -> Vec<&Cell> {
        let row = self.row_labelled(key);
        ('A'..='Z')
            .map_while(|column| self.cells.get(&format!("{column}{row}")))
            .collect()
    }
}

pub struct Workbook {
    pub sheets: Vec<Sheet>,
}

impl Workbook {
    pub fn open(path: &Path) -> Workbook {
        let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("open {}: {e}", path.display()));
        let mut archive = zip::ZipArchive::new(file).expect("an xlsx file is a zip archive");
        let mut read = |name: &str| -> String {
            let mut text = String::new();
            archive
                .by_name(name)
                .unwrap_or_else(|e| panic!("{name} in {}: {e}", path.display()))
                .read_to_string(&mut text)
                .unwrap();
            text
        };
        let workbook = read("xl/workbook.xml");
        let styles = read("xl/styles.xml");
        let formats = number_formats(&styles);
        let names: Vec<String> = elements(&workbook, "<sheet ")
            .map(|tag| attribute(tag, "<sheet ", "name").expect("a sheet has a name"))
            .collect();
        let sheets = names
            .into_iter()
            .enumerate()
            .map(|(index, name)| {
                let xml = read(&format!("xl/worksheets/sheet{}.xml", index + 1));
                let cells = cells(&xml, &formats);
                Sheet { name, xml, cells }
            })
            .collect();
        Workbook { sheets }
    }

    pub fn names(&self) -> Vec<&str> {
        self.sheets.iter().map(|sheet| sheet.name.as_str()).collect()
    }

    pub fn sheet(&self, name: &str) -> &Sheet {
        self.sheets
            .iter()
            .find(|sheet| sheet.name == name)
            .unwrap_or_else(|| panic!("no sheet {name:?} in {:?}", self.names()))
    }
}

/// Each start tag beginning with `open` (like `<sheet `), up to its `>`.
fn elements<'a>(xml: &'a str, open: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    xml.match_indices(open).map(move |(at, _)| {
        let end = xml[at..].find('>').expect("a tag ends");
        &xml[at..at + end + 1]
    })
}

/// The attribute `name` of the first tag beginning with `open`.
fn attribute(xml: &str, open: &str, name: &str) -> Option<String> {
    let tag = elements(xml, open).next()?;
    let key = format!(" {name}=\"");
    let start = tag.find(&key)? + key.len();
    let end = tag[start..].find('"')?;
    Some(unescape(&tag[start..start + end]))
}

fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// The number format of each cell style (`cellXfs` index), where it has one of its own.
fn number_formats(styles: &str) -> Vec<Option<String>> {
    let custom: BTreeMap<String, String> = elements(styles, "<numFmt ")
        .map(|tag| {
            (
                attribute(tag, "<numFmt ", "numFmtId").unwrap(),
                attribute(tag, "<numFmt ", "formatCode").unwrap(),
            )
        })
        .collect();
    let xfs_start = styles.find("<cellXfs").expect("styles have cellXfs");
    let xfs_end = styles[xfs_start..].find("</cellXfs>").unwrap() + xfs_start;
    elements(&styles[xfs_start..xfs_end], "<xf ")
        .map(|tag| attribute(tag, "<xf ", "numFmtId").and_then(|id| custom.get(&id).cloned()))
        .collect()
}

/// Every cell of a sheet: inline strings (as "constant memory" sheets write them), numbers and booleans.
fn cells(xml: &str, formats: &[Option<String>]) -> BTreeMap<String, Cell> {
    let mut cells = BTreeMap::new();
    let mut rest = xml;
    while let Some(at) = rest.find("<c ") {
        rest = &rest[at..];
        let tag_end = rest.find('>').unwrap();
        let tag = &rest[..=tag_end];
        let (body, next) = if tag.ends_with("/>") {
            ("", &rest[tag_end + 1..])
        } else {
            let close = rest.find("</c>").unwrap();
            (&rest[tag_end + 1..close], &rest[close + 4..])
        };
        let reference = attribute(tag, "<c ", "r").unwrap();
        let kind = attribute(tag, "<c ", "t");
        let style: Option<usize> = attribute(tag, "<c ", "s").map(|s| s.parse().unwrap());
        let inner = |open: &str, close: &str| -> Option<String> {
            let start = body.find(open)?;
            let start = start + body[start..].find('>')? + 1;
            let end = body[start..].find(close)? + start;
            Some(unescape(&body[start..end]))
        };
        let value = match kind.as_deref() {
            Some("inlineStr") => inner("<t", "</t>").map(Value::Text),
            Some("str") => inner("<v", "</v>").map(Value::Text),
            Some("b") => inner("<v", "</v>").map(|v| Value::Bool(v == "1")),
            Some("s") => panic!("cell {reference} uses the shared string table; the reader knows inline strings only"),
            _ => inner("<v", "</v>").map(|v| Value::Number(v.parse().unwrap())),
        };
        if let Some(value) = value {
            let number_format = style.and_then(|s| formats.get(s).cloned().flatten());
            cells.insert(reference, Cell { value, number_format });
        }
        rest = next;
    }
    cells
}
