//! The workspace's opt-out list (numbers that asked not to get advertising): read from what a person types or uploads, and placed in each advertising campaign as a file its run reads, so that an approval binds the list it saw.

use super::campaigns::{CampaignRecord, State, Workspace};
use super::error::ConsoleError;
use super::settings::{parse_settings, recipients_section};
use crate::campaign::Campaign;
use std::collections::BTreeSet;
use std::path::Path;

/// The file, in an advertising campaign's folder, that holds the list as it was when checked.
pub const SNAPSHOT_FILE: &str = "opt-outs.csv";

/// What a person typed, read: the numbers (normalised) and the lines that are not mobile numbers.
#[derive(Debug, Default, PartialEq)]
pub struct Typed {
    pub numbers: BTreeSet<String>,
    pub refused: Vec<String>,
}

/// Reads numbers typed one per line (or separated by commas, semicolons or tabs).
pub fn read_typed(text: &str) -> Typed {
    let mut typed = Typed::default();
    for item in text
        .split(['\n', ',', ';', '\t'])
        .map(str::trim)
        .filter(|item| !item.is_empty())
    {
        match crate::phone::normalize(item) {
            Ok(number) => {
                typed.numbers.insert(number.to_string());
            }
            Err(_) => typed.refused.push(item.to_string()),
        }
    }
    typed
}

/// Reads an uploaded list as a suppression list is read: the `phone` column, or the only one.
pub fn read_file(path: &Path, original: &str) -> Result<BTreeSet<String>, ConsoleError> {
    let mut numbers = BTreeSet::new();
    crate::plan::phone_list::read_phone_list(path, "phone", |number| {
        numbers.insert(number.to_string());
    })
    .map_err(|error| ConsoleError::Invalid(format!("{original}: {error}")))?;
    Ok(numbers)
}

/// The list as the snapshot file holds it: a `phone` header and one number a line, in order.
pub fn snapshot_text(numbers: &[String]) -> String {
    let mut text = String::with_capacity(12 * (numbers.len() + 1));
    text.push_str("phone\n");
    for number in numbers {
        text.push_str(number);
        text.push('\n');
    }
    text
}

/// Makes the campaign read the workspace's list when it advertises (the snapshot file and the
/// `opt_outs` setting), and not otherwise. Called by the check, before the fingerprint is taken.
pub fn place(workspace: &Workspace, id: &str, campaign: &Campaign, numbers: &[String]) -> Result<(), ConsoleError> {
    let dir = workspace.campaign_dir(id);
    let snapshot = dir.join(SNAPSHOT_FILE);
    let path = workspace.campaign_file(id);
    let text = std::fs::read_to_string(&path).map_err(ConsoleError::from_io)?;
    let mut table = parse_settings(&text)?;
    let section = recipients_section(&mut table)?;
    if campaign.is_advertising() {
        write_private(&snapshot, &snapshot_text(numbers))?;
        section.insert("opt_outs".into(), toml::Value::String(SNAPSHOT_FILE.into()));
    } else {
        section.remove("opt_outs");
        let _ = std::fs::remove_file(&snapshot);
    }
    let changed = toml::to_string(&table).map_err(ConsoleError::internal)?;
    if changed != text {
        write_private(&path, &changed)?;
    }
    Ok(())
}

/// After the list changed: every campaign that holds a snapshot and has not started gets the new
/// list, and one that was checked goes back to draft (its check and approval bound the old list).
/// Answers the ids sent back to draft.
pub fn spread(
    workspace: &Workspace,
    records: &mut [CampaignRecord],
    numbers: &[String],
    by: &str,
) -> Result<Vec<String>, ConsoleError> {
    let mut voided = Vec::new();
    // `editable`: not started yet (draft, checked, awaiting approval, approved).
    for record in records.iter_mut().filter(|record| record.state.editable()) {
        let snapshot = workspace.campaign_dir(&record.id).join(SNAPSHOT_FILE);
        if !snapshot.exists() {
            continue;
        }
        write_private(&snapshot, &snapshot_text(numbers))?;
        if record.state != State::Draft {
            record.void_check(by);
            voided.push(record.id.clone());
        }
    }
    Ok(voided)
}

fn write_private(path: &Path, text: &str) -> Result<(), ConsoleError> {
    let mut file = crate::files::create_private(path).map_err(ConsoleError::from_io)?;
    std::io::Write::write_all(&mut file, text.as_bytes()).map_err(ConsoleError::from_io)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn typed_numbers_are_normalised_and_the_rest_named() {
        let typed = read_typed("010-1234-5678\n+82 10 1234 5678, 01098765432;\n\n02-123-4567\tabc\n");
        assert_eq!(
            typed.numbers.into_iter().collect::<Vec<_>>(),
            ["01012345678", "01098765432"]
        );
        assert_eq!(typed.refused, ["02-123-4567", "abc"]);
    }

    proptest! {
        /// Whatever is typed, nothing panics and every item lands on one side.
        #[test]
        fn every_typed_item_is_a_number_or_refused(text in "[0-9+ \\-.,;\n\tA-Za-z가-힣]{0,200}") {
            let typed = read_typed(&text);
            let items = text.split(['\n', ',', ';', '\t']).map(str::trim).filter(|i| !i.is_empty()).count();
            prop_assert!(typed.numbers.len() + typed.refused.len() <= items);
            prop_assert!(typed.refused.len() <= items);
            for number in &typed.numbers {
                prop_assert!(number.starts_with("01") && number.bytes().all(|b| b.is_ascii_digit()));
            }
        }
    }
}
