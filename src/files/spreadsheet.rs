//! Cells safe to open in a spreadsheet: a text that Excel or LibreOffice would read as a formula gets a leading `'` (OWASP's rule against CSV injection).
//!
//! A CSV file meant for people (report.csv, rejects.csv, statement.csv, the opt-out list) is
//! opened by double-clicking it, and a spreadsheet evaluates any cell that starts with `=`, `+`,
//! `-` or `@` (and, in some, tab or CR) as a formula: a recipient named `=HYPERLINK("http://x","y")`
//! becomes a link, and worse formulas run commands. A leading `'` makes the spreadsheet show the
//! text as it is. A plain number such as `-1200` (a refund's net amount) is no formula and is
//! left alone, so that it stays a number. Files for machines keep their cells as they are.

use std::borrow::Cow;

/// The mark put before a text a spreadsheet would evaluate.
const QUOTE_MARK: char = '\'';

/// Whether `text` starts with a character a spreadsheet reads as the start of a formula, and is
/// not a plain number. Looks at the first byte (and, for a `-`, the rest), so it costs nothing on
/// the ordinary cell.
fn needs_quote_mark(text: &str) -> bool {
    match text.as_bytes().first() {
        Some(b'=' | b'+' | b'@' | b'\t' | b'\r') => true,
        Some(b'-') => !is_plain_number(text),
        _ => false,
    }
}

/// `text` as a spreadsheet should receive it: with a leading `'` when it would be read as a formula.
pub fn spreadsheet_safe(text: &str) -> Cow<'_, str> {
    if needs_quote_mark(text) {
        let mut marked = String::with_capacity(text.len() + 1);
        marked.push(QUOTE_MARK);
        marked.push_str(text);
        Cow::Owned(marked)
    } else {
        Cow::Borrowed(text)
    }
}

/// A decimal number as a spreadsheet reads it and nothing more: an optional `-`, digits, and
/// optionally a point followed by digits (`-1200`, `-0.5`). `-2+3` or `-1e5` are not.
fn is_plain_number(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let (whole, fraction) = match digits.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (digits, None),
    };
    let all_digits = |part: &str| !part.is_empty() && part.bytes().all(|byte| byte.is_ascii_digit());
    all_digits(whole) && fraction.is_none_or(all_digits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The first characters a spreadsheet may evaluate (OWASP, "CSV Injection").
    const DANGEROUS: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

    #[test]
    fn formulas_get_the_mark_and_plain_numbers_and_ordinary_texts_do_not() {
        for formula in [
            "=HYPERLINK(\"http://x\",\"y\")",
            "+SUM(1,2)",
            "@cmd",
            "-2+3",
            "\tled by a tab",
            "\rled by a CR",
            "-",
            "-1e5",
            "-.5",
            "-5.",
        ] {
            assert_eq!(spreadsheet_safe(formula), format!("'{formula}"), "{formula:?}");
        }
        for left in [
            "-1200",
            "-0.5",
            "1200",
            "김민수",
            "010-1234-5678",
            "",
            " =not first",
            "'=already",
        ] {
            assert_eq!(spreadsheet_safe(left), left, "{left:?}");
        }
    }

    proptest! {
        #[test]
        fn the_output_never_starts_a_formula_and_dropping_the_mark_gives_the_input_back(
            text in prop_oneof![
                "\\PC{0,12}",
                "[-=+@\t\r'0-9.a-z(),\"]{0,10}",
                "-[0-9]{1,6}(\\.[0-9]{1,3})?",
            ],
        ) {
            let safe = spreadsheet_safe(&text);
            let first = safe.chars().next();
            prop_assert!(
                !first.is_some_and(|first| DANGEROUS.contains(&first)) || is_plain_number(&safe),
                "{:?} starts with a dangerous character",
                safe
            );
            let restored = if safe != text {
                safe.strip_prefix(QUOTE_MARK).expect("only a mark is added")
            } else {
                &safe
            };
            prop_assert_eq!(restored, text.as_str());
            prop_assert_eq!(needs_quote_mark(&text), safe != text);
        }
    }
}
