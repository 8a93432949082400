//! Compact storage for what the sandbox keeps per recipient: numbers packed into a `u64`, repeated text interned, and append-only vectors that grow without copying.
//!
//! A rehearsal of a national campaign puts tens of millions of recipients through one sandbox
//! process; a `String` per number and per reference costs ~40 bytes each before the struct
//! around them, so per-recipient records hold these packed forms and are turned back into the
//! wire text only when an answer is written.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::Arc;

/// Marks a [`PackedNumber`] that is the index of a spelling kept whole.
const SPELLING_TAG: u64 = 1 << 63;
const LENGTH_SHIFT: u32 = 57;
/// 10^17 - 1 < 2^57: seventeen digits fit below the length bits.
const MAX_PACKED_DIGITS: usize = 17;
const VALUE_MASK: u64 = (1 << LENGTH_SHIFT) - 1;

/// A recipient number as the sandbox keeps it: up to 17 ASCII digits packed with their count
/// (so leading zeros survive), or the index of any other spelling kept in a [`NumberBook`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct PackedNumber(u64);

impl PackedNumber {
    /// `None` for text that is not 0 to 17 ASCII digits.
    fn from_digits(text: &str) -> Option<PackedNumber> {
        let bytes = text.as_bytes();
        if bytes.len() > MAX_PACKED_DIGITS || !bytes.iter().all(u8::is_ascii_digit) {
            return None;
        }
        let value = bytes
            .iter()
            .fold(0u64, |value, digit| value * 10 + u64::from(digit - b'0'));
        Some(PackedNumber(((bytes.len() as u64) << LENGTH_SHIFT) | value))
    }

    fn spelling_index(self) -> Option<usize> {
        (self.0 & SPELLING_TAG != 0).then_some((self.0 & !SPELLING_TAG) as usize)
    }

    /// The digits, for a number packed from digits.
    fn write_digits(self, out: &mut String) {
        let length = (self.0 >> LENGTH_SHIFT) as usize;
        let mut digits = [b'0'; MAX_PACKED_DIGITS];
        let mut value = self.0 & VALUE_MASK;
        for slot in digits[..length].iter_mut().rev() {
            *slot = b'0' + (value % 10) as u8;
            value /= 10;
        }
        out.push_str(std::str::from_utf8(&digits[..length]).expect("ASCII digits"));
    }

    /// Orders numbers packed from digits as their text orders (a prefix first): the digits
    /// padded to 17 places, then the count.
    fn digit_text_key(self) -> Option<(u64, u64)> {
        if self.spelling_index().is_some() {
            return None;
        }
        let length = self.0 >> LENGTH_SHIFT;
        let padded = (self.0 & VALUE_MASK) * 10u64.pow(MAX_PACKED_DIGITS as u32 - length as u32);
        Some((padded, length))
    }
}

/// Strings kept once each and named by a `u32`: error texts, sender numbers, template codes.
#[derive(Default)]
pub(super) struct Interner {
    texts: Vec<Arc<str>>,
    index: HashMap<Arc<str>, u32>,
}

impl Interner {
    pub fn intern(&mut self, text: &str) -> u32 {
        if let Some(&index) = self.index.get(text) {
            return index;
        }
        let index = u32::try_from(self.texts.len()).expect("fewer than 2^32 distinct texts");
        let shared: Arc<str> = Arc::from(text);
        self.texts.push(shared.clone());
        self.index.insert(shared, index);
        index
    }

    pub fn get(&self, index: u32) -> &str {
        &self.texts[index as usize]
    }
}

/// Packs recipient numbers: digits into the number itself, any other spelling (`+82 10-…`,
/// garbage a caller sent) kept once in the book.
#[derive(Default)]
pub(super) struct NumberBook {
    spellings: Interner,
}

impl NumberBook {
    pub fn pack(&mut self, text: &str) -> PackedNumber {
        PackedNumber::from_digits(text)
            .unwrap_or_else(|| PackedNumber(SPELLING_TAG | u64::from(self.spellings.intern(text))))
    }

    pub fn write(&self, number: PackedNumber, out: &mut String) {
        match number.spelling_index() {
            Some(index) => out.push_str(self.spellings.get(index as u32)),
            None => number.write_digits(out),
        }
    }

    pub fn text(&self, number: PackedNumber) -> String {
        let mut out = String::new();
        self.write(number, &mut out);
        out
    }

    /// The order of the numbers' texts, without writing the texts of two packed digit runs.
    pub fn text_order(&self, a: PackedNumber, b: PackedNumber) -> Ordering {
        match (a.digit_text_key(), b.digit_text_key()) {
            (Some(a), Some(b)) => a.cmp(&b),
            _ => self.text(a).cmp(&self.text(b)),
        }
    }
}

const SEGMENT_LEN: usize = 1 << 16;

/// An append-only vector kept in fixed segments, so growing it never holds the old and the new
/// copy at once (a `Vec` doubling 10 M records would, for a moment, hold 1.5 times them).
pub(super) struct Segmented<T> {
    segments: Vec<Vec<T>>,
    len: usize,
}

impl<T> Default for Segmented<T> {
    fn default() -> Self {
        Segmented {
            segments: Vec::new(),
            len: 0,
        }
    }
}

impl<T> Segmented<T> {
    pub fn push(&mut self, item: T) {
        match self.segments.last_mut() {
            Some(segment) if segment.len() < SEGMENT_LEN => segment.push(item),
            _ => {
                let mut segment = Vec::with_capacity(SEGMENT_LEN);
                segment.push(item);
                self.segments.push(segment);
            }
        }
        self.len += 1;
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn get(&self, index: usize) -> Option<&T> {
        self.segments.get(index / SEGMENT_LEN)?.get(index % SEGMENT_LEN)
    }

    pub fn get_mut(&mut self, index: usize) -> Option<&mut T> {
        self.segments.get_mut(index / SEGMENT_LEN)?.get_mut(index % SEGMENT_LEN)
    }

    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        self.segments.iter().flatten()
    }
}

impl<T> std::ops::Index<usize> for Segmented<T> {
    type Output = T;
    fn index(&self, index: usize) -> &T {
        self.get(index).expect("index within the vector")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn digits_keep_their_leading_zeros_and_length() {
        let mut book = NumberBook::default();
        for text in [
            "01012345678",
            "0",
            "",
            "00000000000000000",
            "99999999999999999",
            "0101234567",
        ] {
            let packed = book.pack(text);
            assert_eq!(packed.spelling_index(), None, "{text:?} packs as digits");
            assert_eq!(book.text(packed), text);
        }
    }

    #[test]
    fn a_prefix_orders_before_the_numbers_it_begins() {
        let mut book = NumberBook::default();
        let mut texts = ["0100", "01", "019", "010", "", "+82", "0", "01a"];
        let mut packed: Vec<PackedNumber> = texts.iter().map(|t| book.pack(t)).collect();
        packed.sort_by(|a, b| book.text_order(*a, *b));
        texts.sort();
        assert_eq!(packed.iter().map(|p| book.text(*p)).collect::<Vec<_>>(), texts);
    }

    #[test]
    fn other_spellings_are_kept_once() {
        let mut book = NumberBook::default();
        let first = book.pack("+82 10-1234-5678");
        assert_eq!(book.pack("+82 10-1234-5678"), first);
        assert_ne!(
            book.pack("010123456789012345"),
            first,
            "18 digits are a spelling of their own"
        );
        assert_eq!(book.text(first), "+82 10-1234-5678");
        let long = book.pack("010123456789012345");
        assert_eq!(book.text(long), "010123456789012345");
    }

    #[test]
    fn a_segmented_vector_keeps_order_across_segments() {
        let mut vector = Segmented::default();
        for i in 0..(SEGMENT_LEN * 2 + 3) {
            vector.push(i);
        }
        assert_eq!(vector.len(), SEGMENT_LEN * 2 + 3);
        assert_eq!(vector[SEGMENT_LEN], SEGMENT_LEN);
        assert_eq!(vector[SEGMENT_LEN * 2 + 2], SEGMENT_LEN * 2 + 2);
        assert!(vector.iter().copied().eq(0..SEGMENT_LEN * 2 + 3));
        *vector.get_mut(5).expect("exists") = 0;
        assert_eq!(vector[5], 0);
        assert_eq!(vector.get(SEGMENT_LEN * 2 + 3), None);
    }

    proptest! {
        #[test]
        fn every_number_text_round_trips(text in "[0-9]{0,20}|\\PC{0,24}") {
            let mut book = NumberBook::default();
            let packed = book.pack(&text);
            prop_assert_eq!(book.text(packed), text.clone());
            prop_assert_eq!(book.pack(&text), packed, "the same text packs the same");
        }

        #[test]
        fn text_order_is_the_order_of_the_texts(a in "[0-9]{0,18}|[+0-9 -]{0,6}", b in "[0-9]{0,18}|[+0-9 -]{0,6}") {
            let mut book = NumberBook::default();
            let (packed_a, packed_b) = (book.pack(&a), book.pack(&b));
            prop_assert_eq!(book.text_order(packed_a, packed_b), a.cmp(&b));
            prop_assert_eq!(packed_a == packed_b, a == b);
        }
    }
}
