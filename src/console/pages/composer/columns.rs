//! The composer's columns: the recipients file's header and first row (read by the engine's own reader), each placeholder of the text with the column that fills it, and the mapping written into `[recipients]` as the engine reads it (`phone`, `name`, `sheet`, `variables = { KEY = "column" }`).

use crate::console::form::{Refused, MAPPING_KEYS};
use crate::console::settings::{parse_settings, recipients_section};
use crate::console::words::Words;
use crate::input::{ColumnSpec, RowSource};
use crate::template::{Placeholder, Template};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// What the page knows of the recipients file: its sheets, its header and its first row's values
/// (phone numbers masked), column by column.
#[derive(Debug, Default, Clone)]
pub struct Sample {
    pub sheets: Vec<String>,
    pub header: Vec<String>,
    pub first: Vec<(String, String)>,
}

impl Sample {
    pub fn value(&self, column: &str) -> Option<&str> {
        self.first
            .iter()
            .find(|(name, _)| name == column)
            .map(|(_, value)| value.as_str())
    }
}

/// The header (of `sheet`, or the first sheet) and the first row of a recipients file; what
/// cannot be read is left empty (the check names the problem).
pub fn read_sample(path: &Path, sheet: &str, encoding: crate::campaign::Encoding) -> Sample {
    let (sheets, header) = crate::console::headers::read(path, sheet);
    let first = first_row(path, sheet, encoding, &header).unwrap_or_default();
    Sample { sheets, header, first }
}

/// The first recipient's value of every (named, once-only) column, as the engine's reader reads
/// it: the same decoding, cells and numbers as a check.
fn first_row(
    path: &Path,
    sheet: &str,
    encoding: crate::campaign::Encoding,
    header: &[String],
) -> Option<Vec<(String, String)>> {
    let mut columns: Vec<String> = Vec::new();
    for name in header {
        if !name.is_empty() && header.iter().filter(|other| *other == name).count() == 1 {
            columns.push(name.clone());
        }
    }
    let format = crate::campaign::InputFormat::from_path(path)?;
    let spec = ColumnSpec {
        phone: columns.first()?.clone(),
        name: None,
        vars: columns.clone(),
    };
    let sheet = (!sheet.is_empty()).then_some(sheet);
    let mut source: Box<dyn RowSource> = crate::contained::catch(|| {
        match format {
            // One reader on one thread (blocks larger than any file): only the first row is wanted.
            crate::campaign::InputFormat::Csv => {
                crate::input::open_csv_in_blocks(path, encoding, &spec, crate::input::max_field_bytes().ok()?, 1 << 50)
            }
            _ => crate::input::open_sheet(path, format, encoding, sheet, &spec),
        }
        .ok()
    })
    .ok()
    .flatten()?;
    let row = source.next_batch(1).ok()??.into_iter().next()?;
    Some(
        columns
            .into_iter()
            .zip(row.vars)
            .map(|(column, value)| {
                let value = value.map(|text| text.to_string()).unwrap_or_default();
                (column, crate::phone::mask_phones(&value).into_owned())
            })
            .collect(),
    )
}

/// A placeholder of the text as the page shows it: its select (or text input) of columns.
#[derive(Debug, Clone)]
pub struct PlaceholderView {
    /// As written in the text: `#{VAR1}`, `#{이름}`.
    pub written: String,
    /// The form field: `name` for the name, `var.KEY` for a variable.
    pub field: String,
    pub id: String,
    /// The column chosen now, empty when none.
    pub column: String,
}

/// Each placeholder of the texts once, in order of appearance, with its column from `mapping`.
pub fn placeholders(texts: &[&str], mapping: &Mapping) -> Vec<PlaceholderView> {
    let mut seen: Vec<String> = Vec::new();
    let mut views = Vec::new();
    for text in texts {
        let template = Template::compile(text);
        for slot in template.slots() {
            let (field, column) = match slot.placeholder() {
                Placeholder::Name => ("name".to_string(), mapping.name.clone()),
                Placeholder::Var(key) => (
                    format!("var.{key}"),
                    mapping.variables.get(key).cloned().unwrap_or_default(),
                ),
            };
            if seen.contains(&field) {
                continue;
            }
            seen.push(field.clone());
            views.push(PlaceholderView {
                written: slot.written(),
                id: field_id(&field),
                field,
                column,
            });
        }
    }
    views
}

/// The `id` of a form field (`message.text` → `f-message-text`), for labels and the error
/// summary's links.
pub fn field_id(name: &str) -> String {
    let mut id = String::from("f-");
    id.extend(
        name.chars()
            .map(|c| if c.is_alphanumeric() || c == '_' { c } else { '-' }),
    );
    id
}

/// The columns of a campaign: phone, name, sheet and the variables' columns.
#[derive(Debug, Default, Clone)]
pub struct Mapping {
    pub phone: String,
    pub name: String,
    pub sheet: String,
    pub variables: BTreeMap<String, String>,
}

impl Mapping {
    /// As the settings hold it.
    pub fn of_settings(settings: &toml::Table) -> Mapping {
        let recipients = settings.get("recipients").and_then(toml::Value::as_table);
        let text = |key: &str| {
            recipients
                .and_then(|section| section.get(key))
                .and_then(toml::Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        Mapping {
            phone: text("phone"),
            name: text("name"),
            sheet: text("sheet"),
            variables: recipients
                .and_then(|section| section.get("variables"))
                .and_then(toml::Value::as_table)
                .map(|table| {
                    table
                        .iter()
                        .filter_map(|(key, value)| Some((key.clone(), value.as_str()?.to_string())))
                        .collect()
                })
                .unwrap_or_default(),
        }
    }

    /// As a form sent it.
    pub fn of_form(fields: &HashMap<String, String>) -> Mapping {
        let text = |key: &str| {
            fields
                .get(key)
                .map(|value| value.trim().to_string())
                .unwrap_or_default()
        };
        Mapping {
            phone: text("phone"),
            name: text("name"),
            sheet: text("sheet"),
            variables: variables_of_form(fields),
        }
    }
}

fn variables_of_form(fields: &HashMap<String, String>) -> BTreeMap<String, String> {
    fields
        .iter()
        .filter_map(|(name, column)| Some((name.strip_prefix("var.")?.to_string(), column.trim().to_string())))
        .filter(|(key, column)| !key.is_empty() && !column.is_empty())
        .collect()
}

/// The settings with the columns the form sent written into `[recipients]`. A column the form did
/// not send is kept as saved (`saved`), unless the settings text sets it; set in both the form and
/// the advanced settings, it is refused by name. With the file's `header` known, a column that is
/// not in it is refused on its field.
pub fn apply(
    text: &str,
    fields: &HashMap<String, String>,
    saved: &toml::Table,
    header: &[String],
    in_form: bool,
    w: &Words,
) -> Result<String, Refused> {
    let mut table = parse_settings(text).map_err(|error| Refused::settings(&error, w))?;
    let section = recipients_section(&mut table).map_err(|error| Refused::settings(&error, w))?;
    let saved_section = saved.get("recipients").and_then(toml::Value::as_table);
    // The form sends its placeholders' columns with this marker, so that none chosen is none.
    let sent_variables = fields.contains_key("mapping");
    for key in MAPPING_KEYS {
        let sent = if key == "variables" {
            sent_variables
        } else {
            fields.contains_key(key)
        };
        if !sent {
            if in_form && !section.contains_key(key) {
                if let Some(value) = saved_section.and_then(|saved| saved.get(key)) {
                    section.insert(key.into(), value.clone());
                }
            }
            continue;
        }
        if in_form && section.contains_key(key) {
            return Err(Refused::new(
                "settings",
                crate::console::words::fill(w.composer_in_both, &[("field", &format!("recipients.{key}"))]),
            ));
        }
        let value = if key == "variables" {
            let variables = variables_of_form(fields);
            (!variables.is_empty()).then(|| {
                toml::Value::Table(
                    variables
                        .into_iter()
                        .map(|(key, column)| (key, toml::Value::String(column)))
                        .collect(),
                )
            })
        } else {
            let given = fields[key].trim();
            (!given.is_empty()).then(|| toml::Value::String(given.to_string()))
        };
        match value {
            Some(value) => section.insert(key.into(), value),
            None => section.remove(key),
        };
    }
    if !header.is_empty() {
        let mapping = Mapping::of_settings(&table);
        let mut chosen = vec![("phone".to_string(), mapping.phone), ("name".to_string(), mapping.name)];
        chosen.extend(
            mapping
                .variables
                .into_iter()
                .map(|(key, column)| (format!("var.{key}"), column)),
        );
        for (field, column) in chosen {
            if !column.is_empty() && !header.contains(&column) {
                return Err(Refused::new(
                    field,
                    crate::console::words::fill(w.composer_unknown_column, &[("column", &column)]),
                ));
            }
        }
    }
    toml::to_string(&table).map_err(|error| Refused::settings(&crate::console::error::ConsoleError::internal(error), w))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::console::words::EN;

    fn fields(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn the_forms_columns_are_written_as_the_engine_reads_them() {
        let header = ["hp".to_string(), "고객명".to_string(), "쿠폰".to_string()];
        let text = apply(
            "[recipients]\npath = \"recipients.csv\"\n",
            &fields(&[
                ("mapping", "1"),
                ("phone", "hp"),
                ("name", "고객명"),
                ("var.VAR1", "쿠폰"),
                ("var.VAR2", ""),
            ]),
            &toml::Table::new(),
            &header,
            true,
            &EN,
        )
        .unwrap();
        let mapping = Mapping::of_settings(&parse_settings(&text).unwrap());
        assert_eq!((mapping.phone.as_str(), mapping.name.as_str()), ("hp", "고객명"));
        assert_eq!(
            mapping.variables,
            BTreeMap::from([("VAR1".to_string(), "쿠폰".to_string())])
        );

        let refused = apply(
            "",
            &fields(&[("mapping", "1"), ("var.VAR1", "coupon")]),
            &toml::Table::new(),
            &header,
            true,
            &EN,
        )
        .unwrap_err();
        assert_eq!(refused.field, "var.VAR1");
        let refused = apply(
            "[recipients]\nname = \"x\"\n",
            &fields(&[("name", "고객명")]),
            &toml::Table::new(),
            &header,
            true,
            &EN,
        )
        .unwrap_err();
        assert_eq!(refused.field, "settings");
    }

    #[test]
    fn a_column_the_form_did_not_send_keeps_its_saved_value() {
        let saved = parse_settings("[recipients]\nname = \"name\"\nvariables = { VAR1 = \"coupon\" }\n").unwrap();
        let text = apply("name = \"x\"\n", &HashMap::new(), &saved, &[], true, &EN).unwrap();
        let mapping = Mapping::of_settings(&parse_settings(&text).unwrap());
        assert_eq!(mapping.name, "name");
        assert_eq!(mapping.variables["VAR1"], "coupon");
    }

    #[test]
    fn each_placeholder_is_listed_once_with_its_column() {
        let mapping = Mapping {
            name: "고객명".into(),
            variables: BTreeMap::from([("VAR1".to_string(), "쿠폰".to_string())]),
            ..Mapping::default()
        };
        let views = placeholders(&["#{이름}님 #{VAR1} #<VAR1> #{name}", "#{VAR2}"], &mapping);
        let shown: Vec<(&str, &str, &str)> = views
            .iter()
            .map(|view| (view.written.as_str(), view.field.as_str(), view.column.as_str()))
            .collect();
        assert_eq!(
            shown,
            [
                ("#{이름}", "name", "고객명"),
                ("#{VAR1}", "var.VAR1", "쿠폰"),
                ("#{VAR2}", "var.VAR2", "")
            ]
        );
        assert_eq!(field_id("var.고객 등급"), "f-var-고객-등급");
    }
}
