//! Korean mobile numbers: normalisation to `01012345678` and masking for logs (`010-****-5678`).

use std::borrow::Cow;
use std::fmt;

/// Why a phone number was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PhoneError {
    #[error("phone number is empty")]
    Empty,
    #[error("phone number has a character that is not a digit or a separator: {0:?}")]
    BadCharacter(char),
    #[error("not a Korean mobile number (expected 010/011/016/017/018/019 and 10 or 11 digits)")]
    NotMobile,
}

/// Normalises `+82 10-1234-5678`, `82-10…`, `010.1234.5678`, `010 1234 5678` and a lost
/// leading zero (`1012345678`) to `01012345678`.
pub fn normalize(raw: &str) -> Result<crate::input::FieldText, PhoneError> {
    normalize_unless_kept(raw).map(|changed| changed.unwrap_or_else(|| crate::input::FieldText::from(raw)))
}

/// As [`normalize`], answering `None` when `raw` is already the number as it is kept (most lists
/// write it so): the caller keeps `raw` itself, and nothing is copied.
pub fn normalize_unless_kept(raw: &str) -> Result<Option<crate::input::FieldText>, PhoneError> {
    let trimmed = raw.trim();
    if trimmed.is_empty() {
        return Err(PhoneError::Empty);
    }
    if is_mobile(trimmed) {
        // Written as it is kept: nothing to take out or put back.
        return Ok((trimmed.len() != raw.len()).then(|| crate::input::field_text(trimmed)));
    }
    // At most 13 digits can make a mobile number (82 + 0 + 10 digits); keep them on the stack,
    // with room for the leading zero put back.
    let mut digits = [0u8; 17];
    let mut count = 1usize;
    for (index, &byte) in trimmed.as_bytes().iter().enumerate() {
        match byte {
            b'0'..=b'9' => {
                if count == digits.len() {
                    return Err(PhoneError::NotMobile);
                }
                digits[count] = byte;
                count += 1;
            }
            b'-' | b'.' | b' ' | b'(' | b')' => {}
            b'+' if index == 0 => {}
            _ => {
                let other = trimmed[index..].chars().next().unwrap_or(char::REPLACEMENT_CHARACTER);
                return Err(PhoneError::BadCharacter(other));
            }
        }
    }
    // The country code goes; what follows it is the national number, with or without its 0.
    let national_from = if digits[1..count].starts_with(b"82") { 3 } else { 1 };
    // `digits[national_from - 1]` is free: the leading zero goes there when it was lost.
    let from = if national_from < count && digits[national_from] == b'0' {
        national_from
    } else {
        digits[national_from - 1] = b'0';
        national_from - 1
    };
    let out = std::str::from_utf8(&digits[from..count]).expect("ASCII digits");
    if is_mobile(out) {
        Ok(Some(crate::input::field_text(out)))
    } else {
        Err(PhoneError::NotMobile)
    }
}

/// `010` with 11 digits, or the legacy `011/016/017/018/019` with 10 or 11.
pub fn is_mobile(digits: &str) -> bool {
    let bytes = digits.as_bytes();
    if !bytes.iter().all(u8::is_ascii_digit) || !digits.starts_with("01") || bytes.len() < 3 {
        return false;
    }
    match bytes[2] {
        b'0' => bytes.len() == 11,
        b'1' | b'6' | b'7' | b'8' | b'9' => bytes.len() == 10 || bytes.len() == 11,
        _ => false,
    }
}

/// A phone number shown masked: `010-****-5678`. Use it wherever a number reaches a log.
pub struct Masked<'a>(pub &'a str);

impl fmt::Display for Masked<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let digits: String = self.0.chars().filter(char::is_ascii_digit).collect();
        if digits.len() < 7 {
            return f.write_str("***");
        }
        let head = &digits[..3];
        let tail = &digits[digits.len() - 4..];
        write!(f, "{head}-****-{tail}")
    }
}

/// Characters `normalize` accepts between the digits of one number.
fn is_separator(byte: u8) -> bool {
    matches!(byte, b'-' | b'.' | b' ' | b'(' | b')')
}

/// `text` with every mobile number in it masked (`010-****-1234`), whatever its spelling:
/// `01020001234`, `010-2000-1234`, `+82 10-2000-1234`, `82-10-2000-1234`, `010.2000.1234`.
///
/// A number is made of whole runs of digits joined by separators; digits glued to more digits
/// belong to a longer number (an order number, a uid) and are not cut out of it. Masking can
/// join what is left of a number with digits before it into a new one, so it runs to a fixpoint.
pub fn mask_phones(text: &str) -> Cow<'_, str> {
    // The shortest mobile number has 10 digits; most lines have fewer and are returned as they are.
    if text.bytes().filter(u8::is_ascii_digit).count() < 10 {
        return Cow::Borrowed(text);
    }
    let Some(mut masked) = mask_once(text) else {
        return Cow::Borrowed(text);
    };
    while let Some(again) = mask_once(&masked) {
        masked = again;
    }
    Cow::Owned(masked)
}

/// One pass of `mask_phones`: `None` when nothing in `text` is a mobile number.
fn mask_once(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut position = 0;
    while position < bytes.len() {
        if !bytes[position].is_ascii_digit() {
            position += 1;
            continue;
        }
        // A run of digits and separators: the digit groups in it are the candidates.
        let span_end = position
            + bytes[position..]
                .iter()
                .position(|&b| !b.is_ascii_digit() && !is_separator(b))
                .unwrap_or(bytes.len() - position);
        let groups = digit_groups(bytes, position, span_end);
        let mut first = 0;
        while first < groups.len() {
            match longest_number_from(text, &groups[first..]) {
                Some((taken, national)) => {
                    let mut start = groups[first].0;
                    // `+82 10-…`: the plus belongs to the number.
                    if start > 0 && bytes[start - 1] == b'+' && text[start..].starts_with("82") {
                        start -= 1;
                    }
                    let end = groups[first + taken - 1].1;
                    let buffer = out.get_or_insert_with(|| String::with_capacity(text.len()));
                    buffer.push_str(&text[copied..start]);
                    buffer.push_str(&Masked(&national).to_string());
                    copied = end;
                    first += taken;
                }
                None => first += 1,
            }
        }
        position = span_end;
    }
    let mut out = out?;
    out.push_str(&text[copied..]);
    Some(out)
}

/// Byte ranges of the runs of digits in `bytes[start..end]`.
fn digit_groups(bytes: &[u8], start: usize, end: usize) -> Vec<(usize, usize)> {
    let mut groups = Vec::new();
    let mut index = start;
    while index < end {
        if bytes[index].is_ascii_digit() {
            let group_start = index;
            while index < end && bytes[index].is_ascii_digit() {
                index += 1;
            }
            groups.push((group_start, index));
        } else {
            index += 1;
        }
    }
    groups
}

/// The most groups from the first of `groups` that spell a mobile number, and that number.
fn longest_number_from(text: &str, groups: &[(usize, usize)]) -> Option<(usize, crate::input::FieldText)> {
    // 82 + 0 + 10 digits: no mobile number has more than 13.
    const MOST_DIGITS: usize = 13;
    let start = groups[0].0;
    let mut digits = 0;
    let mut longest = None;
    for (index, &(group_start, group_end)) in groups.iter().enumerate() {
        digits += group_end - group_start;
        if digits > MOST_DIGITS {
            break;
        }
        if let Ok(national) = normalize(&text[start..group_end]) {
            longest = Some((index + 1, national));
        }
    }
    longest
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn spellings_normalise_to_one_form() {
        for raw in [
            "+82 10-1234-5678",
            "82-10-1234-5678",
            "010.1234.5678",
            "010-1234-5678",
            "1012345678",
            " 01012345678 ",
            "+82 010 1234 5678",
        ] {
            assert_eq!(normalize(raw).as_deref(), Ok("01012345678"), "{raw}");
        }
        assert_eq!(normalize("011-234-5678").as_deref(), Ok("0112345678"));
    }

    #[test]
    fn non_mobile_numbers_are_refused() {
        assert_eq!(normalize("02-123-4567"), Err(PhoneError::NotMobile));
        assert_eq!(normalize("0101234567"), Err(PhoneError::NotMobile));
        assert_eq!(normalize("010-1234-567a"), Err(PhoneError::BadCharacter('a')));
        assert_eq!(normalize("  "), Err(PhoneError::Empty));
    }

    #[test]
    fn masking_keeps_prefix_and_last_four() {
        assert_eq!(Masked("01012345678").to_string(), "010-****-5678");
        assert_eq!(Masked("010-1234-5678").to_string(), "010-****-5678");
        assert_eq!(Masked("12").to_string(), "***");
    }

    #[test]
    fn every_common_spelling_is_masked_in_text() {
        let text = "a 01020001234, b 010-2000-1235, c +82 10-2000-1236, d 82-10-2000-1237, e 010.2000.1238.";
        assert_eq!(
            mask_phones(text),
            "a 010-****-1234, b 010-****-1235, c 010-****-1236, d 010-****-1237, e 010-****-1238."
        );
        assert_eq!(
            mask_phones("GET /token?phoneNumber=010-2000-1234&yellowId=_shop"),
            "GET /token?phoneNumber=010-****-1234&yellowId=_shop"
        );
        assert_eq!(mask_phones("hp:(010) 2000 1234)"), "hp:(010-****-1234)");
    }

    #[test]
    fn digits_glued_to_more_digits_are_not_a_phone() {
        let text = "order 99901020001234, uuid 550e8400-e29b-41d4-a716-446655440000, 3 of 1,000 rows";
        assert!(matches!(mask_phones(text), Cow::Borrowed(_)));
    }

    #[test]
    fn what_masking_leaves_is_masked_again() {
        // After the number at the end is masked, "10 12345 010" spells a number of its own.
        assert_eq!(mask_phones("10 12345 01098765432"), "010-****-5010-****-5432");
    }

    /// A mobile number spelled the ways people and spreadsheets write it.
    fn spelled_phone() -> impl Strategy<Value = String> {
        ("01[016789]", 0..10_000u32, 0..10_000u32, 0..6usize).prop_map(|(prefix, middle, last, spelling)| {
            let rest = &prefix[1..];
            match spelling {
                0 => format!("{prefix}{middle:04}{last:04}"),
                1 => format!("{prefix}-{middle:04}-{last:04}"),
                2 => format!("+82 {rest}-{middle:04}-{last:04}"),
                3 => format!("82-{rest}-{middle:04}-{last:04}"),
                4 => format!("{prefix}.{middle:04}.{last:04}"),
                _ => format!("{rest}{middle:04}{last:04}"),
            }
        })
    }

    /// Text around numbers: words, Hangul, URL punctuation, separators and short digit runs.
    fn filler() -> impl Strategy<Value = String> {
        let piece = prop_oneof!["[a-z]{1,3}", "[가-힣]{1,2}", "[ =?&:,;/()+.-]", "[0-9]{1,4}"];
        proptest::collection::vec(piece, 0..5).prop_map(|pieces| pieces.concat())
    }

    /// Whether some stretch of `text` that starts and ends at the edge of a digit run is a
    /// mobile number as `normalize` reads it (checked by brute force, apart from the masker).
    fn holds_a_phone(text: &str) -> bool {
        let bytes = text.as_bytes();
        let mut starts =
            (0..bytes.len()).filter(|&i| bytes[i].is_ascii_digit() && (i == 0 || !bytes[i - 1].is_ascii_digit()));
        starts.any(|start| {
            (start..bytes.len())
                .take_while(|&i| bytes[i].is_ascii_digit() || is_separator(bytes[i]))
                .filter(|&i| bytes[i].is_ascii_digit() && (i + 1 == bytes.len() || !bytes[i + 1].is_ascii_digit()))
                .any(|end| normalize(&text[start..=end]).is_ok())
        })
    }

    proptest! {
        #[test]
        fn masking_any_text_never_panics(text in any::<String>()) {
            let _ = mask_phones(&text);
        }

        #[test]
        fn no_phone_survives_masking(
            parts in proptest::collection::vec((filler(), spelled_phone()), 1..6),
            tail in filler(),
        ) {
            let mut text: String = parts.iter().map(|(before, phone)| format!("{before}{phone}")).collect();
            text.push_str(&tail);
            let masked = mask_phones(&text);
            prop_assert!(!holds_a_phone(&masked), "{text:?} masked to {masked:?}");
        }

        #[test]
        fn text_without_phones_is_unchanged(text in "[a-z0-9 .()+=:,-]{0,40}") {
            prop_assume!(!holds_a_phone(&text));
            prop_assert_eq!(mask_phones(&text), text.as_str());
        }
    }
}

#[cfg(test)]
mod normalize_properties {
    use super::*;
    use proptest::prelude::*;

    /// Spellings people and spreadsheets give numbers: prefixes, separators, lost zeros, junk.
    fn spelling() -> impl Strategy<Value = String> {
        let digits = prop::collection::vec(0u8..10, 0..16);
        let separators = prop::collection::vec(prop::sample::select(vec!["", "", "-", ".", " ", "(", ")"]), 16);
        let prefix = prop::sample::select(vec!["", "+", "+82 ", "82-", "0", "010", "+82 010", "8201"]);
        (prefix, digits, separators).prop_map(|(prefix, digits, separators)| {
            let mut out = prefix.to_string();
            for (digit, separator) in digits.iter().zip(separators) {
                out.push(char::from(b'0' + digit));
                out.push_str(separator);
            }
            out
        })
    }

    fn check(raw: &str) -> Result<(), TestCaseError> {
        if let Ok(number) = normalize(raw) {
            prop_assert!(is_mobile(&number), "{raw:?} gave {number:?}");
            prop_assert_eq!(normalize(&number), Ok(number.clone()), "idempotent for {:?}", raw);
        }
        Ok(())
    }

    proptest! {
        #[test]
        fn any_text_normalises_to_a_mobile_number_or_an_error(raw in any::<String>()) {
            check(&raw)?;
        }

        #[test]
        fn number_spellings_normalise_to_a_mobile_number_or_an_error(raw in spelling()) {
            check(&raw)?;
        }

        #[test]
        fn every_spelling_of_a_mobile_number_gives_that_number(
            third in prop::sample::select(vec![b'0', b'1', b'6', b'7', b'8', b'9']),
            rest in prop::collection::vec(0u8..10, 8),
            style in 0usize..6,
        ) {
            let rest: String = rest.iter().map(|d| char::from(b'0' + d)).collect();
            let number = format!("01{}{rest}", char::from(third));
            let national = &number[1..];
            let spelled = match style {
                0 => number.clone(),
                1 => format!("{}-{}-{}", &number[..3], &number[3..7], &number[7..]),
                2 => format!("+82 {national}"),
                3 => format!("82-{national}"),
                4 => national.to_string(),
                _ => format!("+82 {number}"),
            };
            prop_assert_eq!(normalize(&spelled), Ok(number.into()));
        }
    }
}
