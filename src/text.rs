//! Byte length of SMS/LMS text in EUC-KR (Windows code page 949), as Korean carriers count it; figures and won as people read them (`1,234`, `₩1,234`).

use encoding_rs::{EncoderResult, EUC_KR};

/// SMS body limit in EUC-KR bytes.
pub const SMS_MAX_BYTES: usize = 90;
/// LMS body limit in EUC-KR bytes.
pub const LMS_MAX_BYTES: usize = 2_000;
/// LMS subject limit in EUC-KR bytes.
pub const LMS_SUBJECT_MAX_BYTES: usize = 40;
/// Notification text limit in characters.
pub const ALIMTALK_MAX_CHARS: usize = 1_000;

/// A character code page 949 cannot carry (most emoji, many CJK symbols).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("character {character:?} (U+{code:04X}) at position {position} cannot be sent in EUC-KR", code = *character as u32)]
pub struct Unencodable {
    pub character: char,
    /// Character index in the text, counted from 0.
    pub position: usize,
}

/// Bytes the text takes in EUC-KR, or the first character it cannot encode.
#[inline]
pub fn euc_kr_len(text: &str) -> Result<usize, Unencodable> {
    // Fast path: code page 949 encodes ASCII in 1 byte and every modern Hangul syllable
    // (U+AC00 to U+D7A3, all 11,172 of them) in 2; anything else goes through the encoder. Read as
    // bytes: a syllable is three bytes led by 0xEA to 0xED (the text is UTF-8, so two
    // continuation bytes follow such a lead).
    let bytes = text.as_bytes();
    let mut total = 0usize;
    let mut at = 0;
    while let Some(&lead) = bytes.get(at) {
        if lead < 0x80 {
            total += 1;
            at += 1;
            continue;
        }
        if (0xEA..=0xED).contains(&lead) {
            let point = (u32::from(lead & 0x0F) << 12)
                | (u32::from(bytes[at + 1] & 0x3F) << 6)
                | u32::from(bytes[at + 2] & 0x3F);
            if (0xAC00..=0xD7A3).contains(&point) {
                total += 2;
                at += 3;
                continue;
            }
        }
        return euc_kr_len_encoded(text);
    }
    Ok(total)
}

/// The exact length by encoding, for text with characters beyond ASCII and Hangul syllables.
fn euc_kr_len_encoded(text: &str) -> Result<usize, Unencodable> {
    let mut encoder = EUC_KR.new_encoder();
    let mut buffer = [0u8; 1024];
    let mut rest = text;
    let mut total = 0usize;
    loop {
        let (result, read, written) = encoder.encode_from_utf8_without_replacement(rest, &mut buffer, true);
        total += written;
        match result {
            EncoderResult::InputEmpty => return Ok(total),
            EncoderResult::OutputFull => rest = &rest[read..],
            EncoderResult::Unmappable(character) => {
                let consumed = text.len() - rest.len() + read - character.len_utf8();
                let position = text[..consumed].chars().count();
                return Err(Unencodable { character, position });
            }
        }
    }
}

/// Which text lane a message takes by its EUC-KR length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TextLane {
    Sms,
    Lms,
}

impl TextLane {
    pub fn max_bytes(self) -> usize {
        match self {
            TextLane::Sms => SMS_MAX_BYTES,
            TextLane::Lms => LMS_MAX_BYTES,
        }
    }
    /// The lane that fits `bytes`, or `None` when even LMS is too short.
    pub fn for_bytes(bytes: usize) -> Option<TextLane> {
        if bytes <= SMS_MAX_BYTES {
            Some(TextLane::Sms)
        } else if bytes <= LMS_MAX_BYTES {
            Some(TextLane::Lms)
        } else {
            None
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            TextLane::Sms => "sms",
            TextLane::Lms => "lms",
        }
    }
}

/// `1,234,567`.
pub fn count(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// `₩1,234,567` (won have no fraction).
pub fn won(amount: i64) -> String {
    let sign = if amount < 0 { "-" } else { "" };
    format!("{sign}₩{}", count(amount.unsigned_abs()))
}

/// [`won`] of an amount that may not be known: `–` for none.
pub fn won_opt(amount: Option<i64>) -> String {
    amount.map(won).unwrap_or_else(|| "–".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn hangul_counts_two_bytes_and_ascii_one() {
        assert_eq!(euc_kr_len("abc"), Ok(3));
        assert_eq!(euc_kr_len("가나다"), Ok(6));
        assert_eq!(euc_kr_len("(광고) a"), Ok(8));
    }

    #[test]
    fn code_page_949_extension_syllables_are_two_bytes() {
        // 똠 and 뷁 are outside KS X 1001 but inside code page 949.
        assert_eq!(euc_kr_len("똠뷁"), Ok(4));
    }

    #[test]
    fn emoji_is_refused_with_its_position() {
        let error = euc_kr_len("안녕😀").unwrap_err();
        assert_eq!(error.character, '😀');
        assert_eq!(error.position, 2);
    }

    #[test]
    fn lanes_split_at_the_limits() {
        assert_eq!(TextLane::for_bytes(90), Some(TextLane::Sms));
        assert_eq!(TextLane::for_bytes(91), Some(TextLane::Lms));
        assert_eq!(TextLane::for_bytes(2_000), Some(TextLane::Lms));
        assert_eq!(TextLane::for_bytes(2_001), None);
    }

    /// Characters code page 949 encodes: ASCII, Hangul syllables and jamo, Hanja, Latin-1,
    /// Greek, Cyrillic, kana, box drawing and symbols, picked from the decoder's own output.
    fn encodable_char() -> impl Strategy<Value = char> {
        (0x81u8..=0xFE, 0x41u8..=0xFE, any::<u8>()).prop_filter_map("not a CP949 pair", |(lead, trail, ascii)| {
            if ascii < 0x80 && ascii % 3 == 0 {
                return Some(char::from(ascii));
            }
            let pair = [lead, trail];
            let (text, malformed) = EUC_KR.decode_without_bom_handling(&pair);
            let mut chars = text.chars();
            match (malformed, chars.next(), chars.next()) {
                (false, Some(character), None) => Some(character),
                _ => None,
            }
        })
    }

    proptest! {
        #[test]
        fn fast_path_matches_the_encoder(text in "[a-z가-힣 0-9]{0,300}") {
            prop_assert_eq!(euc_kr_len(&text), euc_kr_len_encoded(&text));
        }

        /// Characters on either side of the syllable block share its UTF-8 lead bytes (0xEA, 0xED).
        #[test]
        fn fast_path_matches_the_encoder_at_the_edges_of_the_syllables(
            text in "[a-z\u{A000}-\u{ABFF}\u{AC00}-\u{AC05}\u{D79E}-\u{D7A3}\u{D7A4}-\u{D7FF}]{0,40}"
        ) {
            prop_assert_eq!(euc_kr_len(&text), euc_kr_len_encoded(&text));
        }

        #[test]
        fn length_matches_the_encoder_for_any_text(text in any::<String>()) {
            let (bytes, _, had_errors) = EUC_KR.encode(&text);
            match euc_kr_len(&text) {
                Ok(length) => {
                    prop_assert!(!had_errors);
                    prop_assert_eq!(length, bytes.len());
                }
                Err(error) => {
                    prop_assert!(had_errors);
                    let (_, _, alone_has_errors) = EUC_KR.encode(error.character.encode_utf8(&mut [0; 4]));
                    prop_assert!(alone_has_errors, "{:?} is the character that cannot be encoded", error.character);
                    prop_assert_eq!(text.chars().nth(error.position), Some(error.character));
                }
            }
        }

        #[test]
        fn length_matches_the_encoder_for_text_it_can_encode(
            text in prop::collection::vec(encodable_char(), 0..400).prop_map(String::from_iter)
        ) {
            let (bytes, _, had_errors) = EUC_KR.encode(&text);
            prop_assert!(!had_errors, "{:?}", text);
            prop_assert_eq!(euc_kr_len(&text), Ok(bytes.len()));
        }

        #[test]
        fn length_matches_a_full_encode(text in "[a-z가-힣 0-9ㄱ-ㅎ一-龥·※]{0,3000}") {
            let (bytes, _, had_errors) = EUC_KR.encode(&text);
            match euc_kr_len(&text) {
                Ok(length) => {
                    prop_assert!(!had_errors);
                    prop_assert_eq!(length, bytes.len());
                }
                Err(_) => prop_assert!(had_errors),
            }
        }
    }
}
