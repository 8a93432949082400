//! The numbers a workspace's frequency cap holds back (at most N advertising messages a number in D days), as the console snapshots them for a campaign: the file's one format, its reader and its writer.
//!
//! The file is binary because it may list millions of numbers and is read on every check:
//! `MAGIC`, the rule (`times`, `days`, both u16), the day it was made (u32), then one record a
//! number, ascending: the number as an integer (u64, see [`number_key`]), the day of its last
//! send (u32) and its sends within the window (u16), all little-endian. Days count from
//! 1970-01-01 in Seoul's calendar.

use chrono::NaiveDate;
use std::io::Write;
use std::path::Path;

const MAGIC: &[u8] = b"msgbatch frequency-capped 1\n";
const HEADER: usize = MAGIC.len() + 2 + 2 + 4;
const RECORD: usize = 8 + 4 + 2;

/// The workspace's rule: at most `times` advertising messages to a number in `days` days.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CapRule {
    pub times: u16,
    pub days: u16,
}

impl CapRule {
    /// The longest window a rule may have: the history keeps no send longer.
    pub const MAX_DAYS: u16 = 365;

    /// The rule, or why not (both at least 1, the window at most [`CapRule::MAX_DAYS`]).
    pub fn new(times: u16, days: u16) -> Result<CapRule, String> {
        if times == 0 {
            return Err("the number of messages must be at least 1".into());
        }
        if days == 0 || days > CapRule::MAX_DAYS {
            return Err(format!("the window must be 1 to {} days", CapRule::MAX_DAYS));
        }
        Ok(CapRule { times, days })
    }

    /// The first day inside the window that ends with `today`.
    pub fn first_day(self, today: u32) -> u32 {
        today.saturating_sub(u32::from(self.days) - 1)
    }
}

/// What the cap knows of a held-back number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CapMark {
    pub last_sent: u32,
    pub sends: u16,
}

/// One number held back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CappedNumber {
    pub key: u64,
    pub mark: CapMark,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum CappedError {
    #[error("not a frequency-cap list written by msgbatch")]
    NotCapped,
    #[error("the list is cut short")]
    Truncated,
    #[error("record {0}: not a mobile number")]
    NotMobile(usize),
    #[error("record {0}: out of order")]
    OutOfOrder(usize),
    #[error("record {0}: no sends")]
    NoSends(usize),
    #[error("the rule it holds is not one: {0}")]
    Rule(String),
}

/// The number `01012345678` as the integer 1012345678. A mobile number's second digit is 1, so
/// an 11-digit number's integer has ten digits and a 10-digit one's nine: no two collide.
pub fn number_key(digits: &str) -> Option<u64> {
    let bytes = digits.as_bytes();
    if !(10..=11).contains(&bytes.len()) || &bytes[..2] != b"01" || !bytes.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(bytes.iter().fold(0u64, |n, &digit| n * 10 + u64::from(digit - b'0')))
}

/// Whether `key` is the integer of a mobile number: `01` and 8 or 9 more digits.
fn is_mobile_key(key: u64) -> bool {
    (100_000_000..200_000_000).contains(&key) || (1_000_000_000..2_000_000_000).contains(&key)
}

/// The number an integer of [`number_key`] stands for.
pub fn number_text(key: u64) -> String {
    if key >= 1_000_000_000 {
        format!("0{key}")
    } else {
        format!("0{key:09}")
    }
}

/// Seoul's day number of a send answered at `epoch_ms`.
pub fn day_of_millis(epoch_ms: i64) -> u32 {
    let seconds = epoch_ms.div_euclid(1000) + 9 * 3600;
    u32::try_from(seconds.div_euclid(86_400)).unwrap_or(0)
}

/// Today's day number in Seoul.
pub fn today() -> u32 {
    day_of_millis(chrono::Utc::now().timestamp_millis())
}

/// A day number as `2026-11-20`.
pub fn day_text(day: u32) -> String {
    let epoch = NaiveDate::from_ymd_opt(1970, 1, 1).expect("a date");
    (epoch + chrono::Days::new(u64::from(day)))
        .format("%Y-%m-%d")
        .to_string()
}

/// Ascending keys found through a table of where each stretch of the key range starts: one
/// small read in the table (it stays in the cache) and a few keys beside each other, where a
/// binary search over a list of a million numbers misses the cache some twenty times.
struct KeyIndex {
    /// A mobile number's key fits 32 bits (it is below 2,000,000,000): half the memory to miss.
    keys: Vec<u32>,
    /// `starts[b]`: the first key of stretch `b`; one more entry for the end.
    starts: Vec<u32>,
    first: u64,
    /// A key's stretch is its distance from the first key shifted by this (no division on a
    /// path every valid row takes).
    shift: u32,
}

impl KeyIndex {
    /// `keys` ascending, each below 2^32.
    fn new(keys: Vec<u32>) -> KeyIndex {
        let (first, last) = (
            keys.first().copied().map_or(0, u64::from),
            keys.last().copied().map_or(0, u64::from),
        );
        // About eight keys (one cache line) a stretch, so that the table stays in the cache.
        let wanted = (keys.len() / 8).max(1);
        let span_bits = u64::BITS - (last - first).leading_zeros();
        let shift = span_bits.saturating_sub(wanted.ilog2()).min(u64::BITS - 1);
        let stretches = ((last - first) >> shift) as usize + 1;
        let mut starts = vec![0u32; stretches + 1];
        let mut stretch = 0;
        for (at, key) in keys.iter().enumerate() {
            let of = ((u64::from(*key) - first) >> shift) as usize;
            while stretch < of {
                stretch += 1;
                starts[stretch] = at as u32;
            }
        }
        while stretch < stretches {
            stretch += 1;
            starts[stretch] = keys.len() as u32;
        }
        KeyIndex {
            keys,
            starts,
            first,
            shift,
        }
    }

    fn find(&self, key: u64) -> Option<usize> {
        let last = u64::from(*self.keys.last()?);
        if key < self.first || key > last {
            return None;
        }
        let stretch = ((key - self.first) >> self.shift) as usize;
        let (low, high) = (self.starts[stretch] as usize, self.starts[stretch + 1] as usize);
        let key = key as u32;
        self.keys[low..high].binary_search(&key).ok().map(|at| low + at)
    }

    fn len(&self) -> usize {
        self.keys.len()
    }
}

/// The held-back numbers of one campaign, looked up for every valid row of its plan.
pub struct CappedList {
    pub rule: CapRule,
    pub made_on: u32,
    /// Every valid row asks whether its number is here (see [`KeyIndex`]); the marks stand
    /// beside the keys, in the same order.
    keys: KeyIndex,
    marks: Vec<CapMark>,
}

impl CappedList {
    pub fn load(path: &Path) -> std::io::Result<CappedList> {
        let bytes = std::fs::read(path)?;
        CappedList::from_bytes(&bytes).map_err(|error| {
            std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{}: {error}", path.display()))
        })
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<CappedList, CappedError> {
        let (rule, made_on) = header(bytes)?;
        let body = &bytes[HEADER..];
        if !body.len().is_multiple_of(RECORD) {
            return Err(CappedError::Truncated);
        }
        let mut keys = Vec::with_capacity(body.len() / RECORD);
        let mut marks = Vec::with_capacity(body.len() / RECORD);
        let mut last_key = None;
        for (index, record) in body.chunks_exact(RECORD).enumerate() {
            let key = u64::from_le_bytes(record[..8].try_into().expect("eight bytes"));
            let last_sent = u32::from_le_bytes(record[8..12].try_into().expect("four bytes"));
            let sends = u16::from_le_bytes([record[12], record[13]]);
            if !is_mobile_key(key) {
                return Err(CappedError::NotMobile(index + 1));
            }
            if last_key.is_some_and(|last| last >= key) {
                return Err(CappedError::OutOfOrder(index + 1));
            }
            if sends == 0 {
                return Err(CappedError::NoSends(index + 1));
            }
            last_key = Some(key);
            // `is_mobile_key`: below 2,000,000,000.
            keys.push(key as u32);
            marks.push(CapMark { last_sent, sends });
        }
        Ok(CappedList {
            rule,
            made_on,
            keys: KeyIndex::new(keys),
            marks,
        })
    }

    /// The mark of a normalised number the cap holds back.
    #[inline]
    pub fn lookup(&self, digits: &str) -> Option<CapMark> {
        let at = self.keys.find(number_key(digits)?)?;
        Some(self.marks[at])
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.len() == 0
    }
}

/// The rule a list holds, read from its header alone.
pub fn rule_of(path: &Path) -> std::io::Result<CapRule> {
    use std::io::Read;
    let mut bytes = [0u8; HEADER];
    std::fs::File::open(path)?.read_exact(&mut bytes)?;
    header(&bytes)
        .map(|(rule, _)| rule)
        .map_err(|error| std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{}: {error}", path.display())))
}

/// The rule and the day a list's header holds.
fn header(bytes: &[u8]) -> Result<(CapRule, u32), CappedError> {
    if bytes.len() < HEADER || &bytes[..MAGIC.len()] != MAGIC {
        return Err(CappedError::NotCapped);
    }
    let at = MAGIC.len();
    let times = u16::from_le_bytes([bytes[at], bytes[at + 1]]);
    let days = u16::from_le_bytes([bytes[at + 2], bytes[at + 3]]);
    let rule = CapRule::new(times, days).map_err(CappedError::Rule)?;
    let made_on = u32::from_le_bytes(bytes[at + 4..HEADER].try_into().expect("four bytes"));
    Ok((rule, made_on))
}

impl CapRule {
    /// The detail rejects.csv gives a held-back row.
    pub fn detail(self, mark: CapMark) -> String {
        format!(
            "last sent {}; {} sends in {} days (at most {})",
            day_text(mark.last_sent),
            mark.sends,
            self.days,
            self.times
        )
    }
}

/// Writes the list: the rule, the day, and numbers handed in ascending order (refused
/// otherwise, so that a reader never sees a list it would refuse).
pub struct CappedWriter<W: std::io::Write> {
    out: std::io::BufWriter<W>,
    last: Option<u64>,
    written: u64,
}

impl<W: std::io::Write> CappedWriter<W> {
    pub fn new(out: W, rule: CapRule, made_on: u32) -> std::io::Result<CappedWriter<W>> {
        let mut out = std::io::BufWriter::with_capacity(256 * 1024, out);
        out.write_all(MAGIC)?;
        out.write_all(&rule.times.to_le_bytes())?;
        out.write_all(&rule.days.to_le_bytes())?;
        out.write_all(&made_on.to_le_bytes())?;
        Ok(CappedWriter {
            out,
            last: None,
            written: 0,
        })
    }

    pub fn push(&mut self, number: CappedNumber) -> std::io::Result<()> {
        if self.last.is_some_and(|last| last >= number.key) || number.mark.sends == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "capped numbers must come once each, in ascending order, with a send",
            ));
        }
        self.last = Some(number.key);
        self.written += 1;
        let mut record = [0u8; RECORD];
        record[..8].copy_from_slice(&number.key.to_le_bytes());
        record[8..12].copy_from_slice(&number.mark.last_sent.to_le_bytes());
        record[12..].copy_from_slice(&number.mark.sends.to_le_bytes());
        self.out.write_all(&record)
    }

    /// Flushes and answers the writer and how many numbers it holds.
    pub fn finish(self) -> std::io::Result<(W, u64)> {
        let written = self.written;
        let out = self.out.into_inner().map_err(|error| error.into_error())?;
        Ok((out, written))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn written(rule: CapRule, numbers: &[CappedNumber]) -> Vec<u8> {
        let mut writer = CappedWriter::new(Vec::new(), rule, 20_000).unwrap();
        for number in numbers {
            writer.push(*number).unwrap();
        }
        writer.finish().unwrap().0
    }

    fn mark(last_sent: u32, sends: u16) -> CapMark {
        CapMark { last_sent, sends }
    }

    proptest! {
        /// The index answers what a linear search answers, for lists spread evenly or not.
        #[test]
        fn the_index_agrees_with_a_search_of_every_key(
            keys in proptest::collection::btree_set(prop_oneof![0u32..1_000, 0u32..u32::MAX], 0..300),
            probe in prop_oneof![0u64..1_000, 0u64..u64::MAX],
            pick in any::<prop::sample::Index>(),
        ) {
            let keys: Vec<u32> = keys.into_iter().collect();
            let index = KeyIndex::new(keys.clone());
            prop_assert_eq!(index.find(probe), keys.iter().position(|&k| u64::from(k) == probe));
            if !keys.is_empty() {
                let at = pick.index(keys.len());
                prop_assert_eq!(index.find(u64::from(keys[at])), Some(at));
            }
        }

        /// The key check agrees with the texts.
        #[test]
        fn keys_read_as_their_texts(key in 0u64..3_000_000_000) {
            let text = number_text(key);
            prop_assert_eq!(is_mobile_key(key), number_key(&text) == Some(key));
        }
    }

    #[test]
    fn numbers_and_their_keys_go_both_ways() {
        assert_eq!(number_key("01012345678"), Some(1_012_345_678));
        assert_eq!(number_key("0111234567"), Some(111_234_567));
        assert_eq!(number_text(111_234_567), "0111234567");
        assert_eq!(number_key("0212345678"), None);
        assert_eq!(number_key("010-1234-5678"), None);
    }

    #[test]
    fn a_written_list_reads_back_and_answers_lookups() {
        let rule = CapRule::new(2, 7).unwrap();
        let numbers = [
            CappedNumber {
                key: 111_234_567,
                mark: mark(19_990, 2),
            },
            CappedNumber {
                key: 1_012_345_678,
                mark: mark(20_000, 3),
            },
        ];
        let list = CappedList::from_bytes(&written(rule, &numbers)).unwrap();
        assert_eq!((list.rule, list.made_on, list.len()), (rule, 20_000, 2));
        assert_eq!(list.lookup("01012345678"), Some(mark(20_000, 3)));
        assert_eq!(list.lookup("0111234567"), Some(mark(19_990, 2)));
        assert_eq!(list.lookup("01012345679"), None);
        assert_eq!(
            rule.detail(mark(20_000, 3)),
            "last sent 2024-10-04; 3 sends in 7 days (at most 2)"
        );
    }

    #[test]
    fn the_writer_refuses_numbers_out_of_order() {
        let mut writer = CappedWriter::new(Vec::new(), CapRule::new(1, 1).unwrap(), 1).unwrap();
        let number = CappedNumber {
            key: 1_012_345_678,
            mark: mark(1, 1),
        };
        writer.push(number).unwrap();
        assert!(writer.push(number).is_err());
    }

    #[test]
    fn a_window_counts_today() {
        let rule = CapRule::new(1, 7).unwrap();
        assert_eq!(rule.first_day(100), 94);
        assert_eq!(CapRule::new(1, 1).unwrap().first_day(100), 100);
        assert!(CapRule::new(0, 7).is_err());
        assert!(CapRule::new(1, 366).is_err());
    }

    #[test]
    fn days_are_seoul_days() {
        // 2026-11-26 15:00 UTC is 2026-11-27 00:00 in Seoul.
        let at = chrono::DateTime::parse_from_rfc3339("2026-11-26T15:00:00Z").unwrap();
        assert_eq!(day_text(day_of_millis(at.timestamp_millis())), "2026-11-27");
        assert_eq!(day_text(day_of_millis(at.timestamp_millis() - 1)), "2026-11-26");
    }

    proptest! {
        #[test]
        fn any_bytes_are_read_or_refused_without_a_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = CappedList::from_bytes(&bytes);
            let mut framed = MAGIC.to_vec();
            framed.extend_from_slice(&bytes);
            let _ = CappedList::from_bytes(&framed);
        }

        #[test]
        fn any_list_written_reads_back_whole(
            keys in proptest::collection::btree_set(100_000_000u64..2_000_000_000, 0..50),
            times in 1u16..10,
            days in 1u16..=365,
        ) {
            let keys: Vec<u64> = keys.into_iter().filter(|key| number_key(&number_text(*key)) == Some(*key)).collect();
            let numbers: Vec<CappedNumber> = keys
                .iter()
                .enumerate()
                .map(|(i, key)| CappedNumber { key: *key, mark: mark(i as u32, 1 + i as u16) })
                .collect();
            let rule = CapRule::new(times, days).unwrap();
            let list = CappedList::from_bytes(&written(rule, &numbers)).unwrap();
            prop_assert_eq!(list.len(), numbers.len());
            for number in &numbers {
                prop_assert_eq!(list.lookup(&number_text(number.key)), Some(number.mark));
            }
        }
    }
}
