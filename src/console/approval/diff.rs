//! A line diff of two texts (the settings approved and the settings asked now): the longest common subsequence of their lines, so that a changed line shows as the old one removed and the new one added.

/// One line of the diff, in the order of both texts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edit {
    /// In both texts.
    Same(String),
    /// Only in the old text.
    Removed(String),
    /// Only in the new text.
    Added(String),
}

/// Past this many cells (lines of the old middle × lines of the new) the middle is not searched
/// for common lines: it is shown removed, then added. Settings are a few dozen lines.
const MAX_CELLS: usize = 4_000_000;

/// The edits that turn `old` into `new`, line by line (a line's end is not part of it).
pub fn line_diff(old: &str, new: &str) -> Vec<Edit> {
    let old: Vec<&str> = old.lines().collect();
    let new: Vec<&str> = new.lines().collect();
    let prefix = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let suffix = old[prefix..]
        .iter()
        .rev()
        .zip(new[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let (old_middle, new_middle) = (&old[prefix..old.len() - suffix], &new[prefix..new.len() - suffix]);
    let mut edits: Vec<Edit> = old[..prefix].iter().map(|line| Edit::Same(line.to_string())).collect();
    edits.extend(middle(old_middle, new_middle));
    edits.extend(
        old[old.len() - suffix..]
            .iter()
            .map(|line| Edit::Same(line.to_string())),
    );
    edits
}

/// The edits of two texts with no common first or last line.
fn middle(old: &[&str], new: &[&str]) -> Vec<Edit> {
    let removed = |line: &&str| Edit::Removed(line.to_string());
    let added = |line: &&str| Edit::Added(line.to_string());
    if old.is_empty() || new.is_empty() || old.len().saturating_mul(new.len()) > MAX_CELLS {
        return old.iter().map(removed).chain(new.iter().map(added)).collect();
    }
    // common[i][j]: the length of the longest common subsequence of old[i..] and new[j..].
    let width = new.len() + 1;
    let mut common = vec![0u32; (old.len() + 1) * width];
    for i in (0..old.len()).rev() {
        for j in (0..new.len()).rev() {
            common[i * width + j] = if old[i] == new[j] {
                common[(i + 1) * width + j + 1] + 1
            } else {
                common[(i + 1) * width + j].max(common[i * width + j + 1])
            };
        }
    }
    let mut edits = Vec::with_capacity(old.len() + new.len());
    let (mut i, mut j) = (0, 0);
    while i < old.len() && j < new.len() {
        if old[i] == new[j] {
            edits.push(Edit::Same(old[i].to_string()));
            i += 1;
            j += 1;
        } else if common[(i + 1) * width + j] >= common[i * width + j + 1] {
            edits.push(removed(&old[i]));
            i += 1;
        } else {
            edits.push(added(&new[j]));
            j += 1;
        }
    }
    edits.extend(old[i..].iter().map(removed));
    edits.extend(new[j..].iter().map(added));
    edits
}

/// A changed line as a page lists it: removed or added, with the `[section]` it is in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changed {
    pub added: bool,
    /// The TOML table header above the line in its own text (`[message]`), or empty.
    pub section: String,
    pub line: String,
}

/// The removed and added lines of [`line_diff`], each with the table it belongs to.
pub fn changed_lines(old: &str, new: &str) -> Vec<Changed> {
    let (mut old_section, mut new_section) = (String::new(), String::new());
    let mut changed = Vec::new();
    for edit in line_diff(old, new) {
        let (line, added) = match &edit {
            Edit::Same(line) => (line, None),
            Edit::Removed(line) => (line, Some(false)),
            Edit::Added(line) => (line, Some(true)),
        };
        let header = line.trim_start().starts_with('[');
        if header && added != Some(true) {
            old_section = line.trim().to_string();
        }
        if header && added != Some(false) {
            new_section = line.trim().to_string();
        }
        if let Some(added) = added {
            let section = if added { &new_section } else { &old_section };
            changed.push(Changed {
                added,
                section: if header { String::new() } else { section.clone() },
                line: line.clone(),
            });
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn old_of(edits: &[Edit]) -> Vec<String> {
        edits
            .iter()
            .filter_map(|edit| match edit {
                Edit::Same(line) | Edit::Removed(line) => Some(line.clone()),
                Edit::Added(_) => None,
            })
            .collect()
    }

    fn new_of(edits: &[Edit]) -> Vec<String> {
        edits
            .iter()
            .filter_map(|edit| match edit {
                Edit::Same(line) | Edit::Added(line) => Some(line.clone()),
                Edit::Removed(_) => None,
            })
            .collect()
    }

    #[test]
    fn a_changed_line_is_the_old_removed_and_the_new_added() {
        let old = "name = \"a\"\n[message]\ntext = \"hello\"\nservice = 1\n";
        let new = "name = \"a\"\n[message]\ntext = \"안녕\"\nservice = 1\n[send]\nbudget = 100\n";
        assert_eq!(
            line_diff(old, new),
            vec![
                Edit::Same("name = \"a\"".into()),
                Edit::Same("[message]".into()),
                Edit::Removed("text = \"hello\"".into()),
                Edit::Added("text = \"안녕\"".into()),
                Edit::Same("service = 1".into()),
                Edit::Added("[send]".into()),
                Edit::Added("budget = 100".into()),
            ]
        );
        let changed = changed_lines(old, new);
        assert_eq!(changed.len(), 4);
        assert_eq!(
            changed[0],
            Changed {
                added: false,
                section: "[message]".into(),
                line: "text = \"hello\"".into()
            }
        );
        assert_eq!(changed[1].section, "[message]");
        assert!(changed[1].added);
        assert_eq!(changed[2].section, "", "a header is its own section");
        assert_eq!(changed[3].section, "[send]");
    }

    #[test]
    fn only_the_lines_that_moved_or_changed_are_edits() {
        let edits = line_diff("a\nb\nc\nd", "a\nc\nb\nd");
        let changes = edits.iter().filter(|edit| !matches!(edit, Edit::Same(_))).count();
        assert_eq!(changes, 2, "{edits:?}");
        assert!(line_diff("", "").is_empty());
        assert_eq!(line_diff("", "x"), vec![Edit::Added("x".into())]);
        assert_eq!(line_diff("x", ""), vec![Edit::Removed("x".into())]);
    }

    proptest! {
        #[test]
        fn a_text_against_itself_has_no_edit(lines in proptest::collection::vec("[a-c =\"]{0,4}", 0..30)) {
            let text = lines.join("\n");
            prop_assert!(line_diff(&text, &text).iter().all(|edit| matches!(edit, Edit::Same(_))));
            prop_assert!(changed_lines(&text, &text).is_empty());
        }

        #[test]
        fn the_edits_rebuild_both_texts(
            old in proptest::collection::vec("[abc]{0,2}", 0..25),
            new in proptest::collection::vec("[abc]{0,2}", 0..25),
        ) {
            let (old_text, new_text) = (old.join("\n"), new.join("\n"));
            let edits = line_diff(&old_text, &new_text);
            let lines = |text: &str| text.lines().map(str::to_string).collect::<Vec<_>>();
            prop_assert_eq!(old_of(&edits), lines(&old_text));
            prop_assert_eq!(new_of(&edits), lines(&new_text));
        }

        #[test]
        fn lines_only_inserted_are_only_added(
            // Lines of one character or more: a last empty line is no line of a text.
            old in proptest::collection::vec("[abc]{1,2}", 0..20),
            inserted in proptest::collection::vec((0usize..20, "[xyz]{1,2}"), 0..6),
        ) {
            let mut new = old.clone();
            for (at, line) in &inserted {
                new.insert((*at).min(new.len()), line.clone());
            }
            let edits = line_diff(&old.join("\n"), &new.join("\n"));
            prop_assert!(!edits.iter().any(|edit| matches!(edit, Edit::Removed(_))), "{:?}", edits);
            prop_assert_eq!(edits.iter().filter(|edit| matches!(edit, Edit::Added(_))).count(), inserted.len());
        }
    }
}
