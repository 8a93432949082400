//! A set of mobile numbers as bitmaps: fixed memory (12.5 MB for all 010 numbers) whatever the row count.

/// Normalised mobile numbers (`01012345678`), one bit each.
#[derive(Default)]
pub struct PhoneSet {
    /// One bitmap per (third digit, total length of 10 or 11), made when a number of it first
    /// comes; indexed by the digits after the prefix. Looked up by position, not hashed: this is
    /// on every row's path.
    maps: [Option<Box<[u64]>>; 20],
    len: u64,
}

/// The bitmap a number belongs in (see `PhoneSet::maps`), its length, and its bit.
#[inline]
fn split(digits: &str) -> Option<(usize, usize, usize)> {
    let bytes = digits.as_bytes();
    if !(10..=11).contains(&bytes.len()) || &bytes[..2] != b"01" {
        return None;
    }
    let third = bytes[2].wrapping_sub(b'0');
    if third > 9 {
        return None;
    }
    let mut index = 0usize;
    for &byte in &bytes[3..] {
        let digit = byte.wrapping_sub(b'0');
        if digit > 9 {
            return None;
        }
        index = index * 10 + usize::from(digit);
    }
    Some((usize::from(third) * 2 + (bytes.len() - 10), bytes.len(), index))
}

/// The words of a bitmap of the numbers of `length` digits: one bit for each of the digits after
/// the first three.
const fn words(length: usize) -> usize {
    10usize.pow(length as u32 - 3).div_ceil(64)
}

impl PhoneSet {
    pub fn new() -> PhoneSet {
        PhoneSet::default()
    }

    /// Adds a number; true when it was not there yet. Numbers that are not normalised mobiles are not kept.
    pub fn insert(&mut self, digits: &str) -> bool {
        let Some((map, length, index)) = split(digits) else {
            return false;
        };
        let words = if length == 10 { words(10) } else { words(11) };
        let map = self.maps[map].get_or_insert_with(|| vec![0u64; words].into_boxed_slice());
        let (word, bit) = (index / 64, 1u64 << (index % 64));
        let fresh = map[word] & bit == 0;
        map[word] |= bit;
        self.len += fresh as u64;
        fresh
    }

    pub fn contains(&self, digits: &str) -> bool {
        let Some((map, _, index)) = split(digits) else {
            return false;
        };
        self.maps[map]
            .as_ref()
            .is_some_and(|map| map[index / 64] & (1u64 << (index % 64)) != 0)
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn insert_reports_first_sight() {
        let mut set = PhoneSet::new();
        assert!(set.insert("01012345678"));
        assert!(!set.insert("01012345678"));
        assert!(set.insert("0111234567"));
        assert!(set.contains("0111234567"));
        assert!(!set.contains("01112345670"));
        assert_eq!(set.len(), 2);
    }

    proptest! {
        #[test]
        fn agrees_with_a_hash_set(numbers in proptest::collection::vec("01[016789][0-9]{7,8}", 0..200)) {
            let mut set = PhoneSet::new();
            let mut reference = std::collections::HashSet::new();
            for number in &numbers {
                prop_assert_eq!(set.insert(number), reference.insert(number.clone()));
            }
            for number in &numbers {
                prop_assert!(set.contains(number));
            }
            prop_assert_eq!(set.len(), reference.len() as u64);
        }
    }
}
