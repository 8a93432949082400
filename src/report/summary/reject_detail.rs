//! A rejected row's detail (rejects.csv's `detail`, written in English by the engine) in the page's language: the known shapes said again in Korean with their figures, anything else as written.

use super::labels::Lang;

/// The detail of a rejected row in `lang`. The engine writes one English sentence per kind of
/// fault (tests/reject_words in this module make each from the engine's own error types, so a
/// changed English sentence fails them rather than falling back silently).
pub fn reject_detail(detail: &str, lang: Lang) -> String {
    match lang {
        Lang::En => detail.to_string(),
        Lang::Ko => korean(detail).unwrap_or_else(|| detail.to_string()),
    }
}

fn korean(detail: &str) -> Option<String> {
    if detail == "empty" || detail == "phone number is empty" {
        return Some("비어 있음".into());
    }
    if let Some((last, rest)) = between_pair(detail, "last sent ", "; ", " sends in ") {
        let (days, times) = rest.1.strip_suffix(')')?.split_once(" days (at most ")?;
        return Some(format!(
            "마지막 발송 {last}; {days}일 동안 {}회 발송 (최대 {times}회)",
            rest.0
        ));
    }
    if detail.starts_with("not a Korean mobile number") {
        return Some("한국 휴대전화 번호가 아닙니다 (010·011·016·017·018·019로 시작하는 10–11자리)".into());
    }
    if let Some(character) = detail.strip_prefix("phone number has a character that is not a digit or a separator: ") {
        return Some(format!("숫자나 구분 기호가 아닌 문자가 있습니다: {character}"));
    }
    if let Some(value) = between(detail, "the number ", " has a fraction: not a phone number") {
        return Some(format!("숫자 {value}에 소수점이 있어 전화번호가 아닙니다"));
    }
    if let Some(variable) = detail.strip_suffix(" has no value") {
        return Some(format!("{variable}에 값이 없습니다"));
    }
    if let Some((character, rest)) = between_pair(detail, "character ", " (U+", ") at position ") {
        let position = rest.1.strip_suffix(" cannot be sent in EUC-KR")?;
        return Some(format!(
            "문자 {character}(U+{})는 EUC-KR로 보낼 수 없습니다 ({position}번째 글자)",
            rest.0
        ));
    }
    if let Some((chars, max)) = detail.split_once(" characters, at most ") {
        return Some(format!("{chars}자, 최대 {max}자"));
    }
    if let Some((bytes, max)) = detail.split_once(" bytes in EUC-KR, at most ") {
        return Some(format!("EUC-KR {bytes}바이트, 최대 {max}바이트"));
    }
    if let Some((bytes, max)) = detail.split_once(" bytes in EUC-KR, over the LMS limit of ") {
        return Some(format!("EUC-KR {bytes}바이트, LMS 한도 {max}바이트 초과"));
    }
    if let Some((fields, expected)) = detail.split_once(" fields, the header has ") {
        return Some(format!("필드 {fields}개, 머리글은 {expected}개"));
    }
    if let Some((bytes, rest)) = detail.split_once(" bytes, over the field-size cap of ") {
        let (limit, variable) = rest.split_once(" (")?;
        return Some(format!(
            "{bytes}바이트, 필드 크기 한도 {limit}바이트 초과 ({}로 바꿀 수 있음)",
            variable.trim_end_matches(')')
        ));
    }
    if let Some(error) = detail.strip_prefix("the cell holds the error ") {
        return Some(format!("셀에 오류 값 {error}이(가) 들어 있습니다"));
    }
    if let Some(formula) = between(detail, "the formula =", " has no saved value") {
        return Some(format!(
            "수식 ={formula}에 저장된 값이 없습니다 (수식을 계산하지 않는 프로그램이 쓴 파일입니다: Excel이나 LibreOffice에서 열어 저장하세요)"
        ));
    }
    if detail == "contains a NUL byte" {
        return Some("NUL 바이트가 들어 있습니다".into());
    }
    None
}

/// The text between a prefix and a suffix that enclose all of `text`.
fn between<'a>(text: &'a str, prefix: &str, suffix: &str) -> Option<&'a str> {
    text.strip_prefix(prefix)?.split_once(suffix).map(|(inner, _)| inner)
}

/// `prefix A middle B separator C` → (A, (B, C)).
fn between_pair<'a>(
    text: &'a str,
    prefix: &str,
    middle: &str,
    separator: &str,
) -> Option<(&'a str, (&'a str, &'a str))> {
    let rest = text.strip_prefix(prefix)?;
    let (first, rest) = rest.rsplit_once(middle)?;
    let (second, third) = rest.split_once(separator)?;
    Some((first, (second, third)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::Unreadable;
    use crate::phone::PhoneError;
    use proptest::prelude::*;

    /// No English word left: Hangul, figures, codes (`U+1F600`, `EUC-KR`, `LMS`, `#{VAR1}`) and
    /// punctuation only.
    fn reads_as_korean(text: &str) -> bool {
        let allowed = [
            "EUC",
            "KR",
            "LMS",
            "NUL",
            "U",
            "Excel",
            "LibreOffice",
            "MSGBATCH_MAX_FIELD_BYTES",
        ];
        text.split(|c: char| !c.is_ascii_alphabetic() && c != '_')
            // A single letter is the row's own (the character a phone number must not hold).
            .filter(|word| word.len() > 1)
            .all(|word| {
                allowed.contains(&word)
                    || word.starts_with("VAR")
                    || word.chars().all(|c| c.is_ascii_uppercase() || c == '_') && word.len() <= 3
            })
    }

    /// Every detail the engine writes, made by the engine's own error types and texts.
    fn engine_details() -> Vec<String> {
        let mut details = vec![
            "empty".to_string(),
            PhoneError::Empty.to_string(),
            PhoneError::NotMobile.to_string(),
            crate::text::euc_kr_len("안녕 😀").unwrap_err().to_string(),
            Unreadable::Ragged {
                fields: 3,
                expected: 5,
                column: "name".into(),
            }
            .to_string(),
            Unreadable::FieldTooLarge {
                column: "name".into(),
                bytes: 2_000_000,
                limit: 1_048_576,
            }
            .to_string(),
            Unreadable::PhoneFraction {
                column: "phone".into(),
                value: "1012345678.5".into(),
            }
            .to_string(),
            "contains a NUL byte".to_string(),
            "#{VAR1} has no value".to_string(),
        ];
        details.push(PhoneError::BadCharacter('x').to_string());
        let rule = crate::plan::capped::CapRule::new(2, 7).unwrap();
        details.push(rule.detail(crate::plan::capped::CapMark {
            last_sent: 20_000,
            sends: 3,
        }));
        details
    }

    #[test]
    fn every_detail_the_engine_writes_reads_in_korean() {
        for detail in engine_details() {
            let shown = reject_detail(&detail, Lang::Ko);
            assert!(reads_as_korean(&shown), "{detail:?} was shown as {shown:?}");
            assert_eq!(reject_detail(&detail, Lang::En), detail);
        }
    }

    #[test]
    fn the_figures_of_a_detail_stay() {
        assert_eq!(
            reject_detail("95 bytes in EUC-KR, at most 90", Lang::Ko),
            "EUC-KR 95바이트, 최대 90바이트"
        );
        assert_eq!(
            reject_detail("1001 characters, at most 1000", Lang::Ko),
            "1001자, 최대 1000자"
        );
        assert_eq!(
            reject_detail("2001 bytes in EUC-KR, over the LMS limit of 2000", Lang::Ko),
            "EUC-KR 2001바이트, LMS 한도 2000바이트 초과"
        );
        assert_eq!(
            reject_detail("last sent 2026-11-20; 3 sends in 7 days (at most 2)", Lang::Ko),
            "마지막 발송 2026-11-20; 7일 동안 3회 발송 (최대 2회)"
        );
    }

    proptest! {
        /// Any text is shown (in Korean when its shape is known, else as written), never lost.
        #[test]
        fn any_detail_is_shown_whole_or_said_again(detail in "\\PC{0,80}") {
            let shown = reject_detail(&detail, Lang::Ko);
            prop_assert!(!shown.is_empty() || detail.is_empty());
            if korean(&detail).is_none() {
                prop_assert_eq!(shown, detail);
            }
        }
    }
}
