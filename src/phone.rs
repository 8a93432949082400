//! Korean mobile numbers: normalisation to `01012345678` and masking for logs (`010-****-5678`).

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
pub fn normalize(raw: &str) -> Result<String, PhoneError> {
    let trimmed = raw.trim();
    if trimmed.is_empty() {
        return Err(PhoneError::Empty);
    }
    // At most 13 digits can make a mobile number (82 + 0 + 10 digits); keep them on the stack.
    let mut digits = [0u8; 16];
    let mut count = 0usize;
    for (index, character) in trimmed.chars().enumerate() {
        match character {
            '0'..='9' => {
                if count == digits.len() {
                    return Err(PhoneError::NotMobile);
                }
                digits[count] = character as u8;
                count += 1;
            }
            '-' | '.' | ' ' | '(' | ')' => {}
            '+' if index == 0 => {}
            other => return Err(PhoneError::BadCharacter(other)),
        }
    }
    let digits = &digits[..count];
    let national: &[u8] = match digits {
        [b'8', b'2', b'0', ..] => &digits[2..],
        [b'8', b'2', rest @ ..] => rest,
        _ => digits,
    };
    let mut out = String::with_capacity(11);
    if national.first() != Some(&b'0') {
        out.push('0');
    }
    out.push_str(std::str::from_utf8(national).expect("ASCII digits"));
    if is_mobile(&out) {
        Ok(out)
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

#[cfg(test)]
mod tests {
    use super::*;

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
            prop_assert_eq!(normalize(&spelled), Ok(number));
        }
    }
}
