//! The sends the frequency cap counts: what the service accepted of each advertising run, one sorted segment a campaign in the workspace's `history/` folder, and the capped list made from all of them by one merge.
//!
//! A segment is replaced whole each time its run is recorded (at every end of the run), so
//! recording again never counts a send twice. Its format: `MAGIC`, the newest day it holds
//! (u32), then one u64 a send, ascending: the number's key ([`number_key`]) in the high 32 bits
//! and Seoul's day of the send in the low 32, little-endian. Sorted segments let the capped list
//! be made by streaming merges, one range of keys a core: their memory is a block a segment and
//! the numbers found, whatever the history holds.

use crate::plan::capped::{number_key, CapMark, CapRule, CappedNumber, CappedWriter};
use anyhow::{bail, Context, Result};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

const MAGIC: &[u8] = b"msgbatch history 1\n";
const HEADER: usize = MAGIC.len() + 4;
const EXTENSION: &str = "seg";
/// Sends read at a time from each segment during a merge.
const BLOCK: usize = 8 * 1024;

/// A send as a segment holds it.
pub fn packed(key: u64, day: u32) -> u64 {
    (key << 32) | u64::from(day)
}

fn unpacked(send: u64) -> (u64, u32) {
    (send >> 32, send as u32)
}

/// The segment of a campaign.
pub fn segment_path(dir: &Path, id: &str) -> PathBuf {
    dir.join(format!("{id}.{EXTENSION}"))
}

/// Writes a campaign's segment from its sends (any order), replacing the one before at once:
/// a written temporary file, flushed to disk, renamed over it.
pub fn write_segment(dir: &Path, id: &str, mut sends: Vec<u64>) -> Result<u64> {
    sends.sort_unstable();
    std::fs::create_dir_all(dir).with_context(|| format!("cannot make {}", dir.display()))?;
    let newest = sends.iter().map(|send| unpacked(*send).1).max().unwrap_or(0);
    replace_segment(&segment_path(dir, id), newest, &sends)
}

/// Writes a segment to a temporary file beside `path`, flushes it to disk, and renames it over
/// `path`: a reader sees the old segment or the new one, whole.
fn replace_segment(path: &Path, newest: u32, sends: &[u64]) -> Result<u64> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let staged = path.with_extension("tmp");
    let file = crate::files::create_private(&staged).with_context(|| format!("cannot write {}", staged.display()))?;
    let mut out = std::io::BufWriter::with_capacity(256 * 1024, file);
    out.write_all(MAGIC)?;
    out.write_all(&newest.to_le_bytes())?;
    for send in sends {
        out.write_all(&send.to_le_bytes())?;
    }
    let file = out.into_inner().map_err(|error| error.into_error())?;
    file.sync_all()?;
    std::fs::rename(&staged, path).with_context(|| format!("cannot replace {}", path.display()))?;
    std::fs::File::open(dir)?.sync_all()?;
    Ok(sends.len() as u64)
}

/// One segment (or a range of its keys) read a block at a time.
struct Segment {
    file: std::fs::File,
    block: Vec<u64>,
    at: usize,
    bytes: Vec<u8>,
    /// Bytes of sends left to read.
    left: u64,
}

impl Segment {
    /// The segment at `path` and the newest day it holds.
    fn open(path: &Path) -> Result<(Segment, u32)> {
        let mut file = std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
        let mut header = [0u8; HEADER];
        file.read_exact(&mut header)
            .with_context(|| format!("{}: cut short", path.display()))?;
        if &header[..MAGIC.len()] != MAGIC {
            bail!("{}: not a history segment written by msgbatch", path.display());
        }
        let sends = file.metadata()?.len() - HEADER as u64;
        if !sends.is_multiple_of(8) {
            bail!("{}: a history segment ends inside a send", path.display());
        }
        let newest = u32::from_le_bytes(header[MAGIC.len()..].try_into().expect("four bytes"));
        let segment = Segment {
            file,
            block: Vec::with_capacity(BLOCK),
            at: 0,
            bytes: vec![0; BLOCK * 8],
            left: sends,
        };
        Ok((segment, newest))
    }

    /// The send at `index` (the segment's sends are fixed-size: found without reading the rest).
    fn send_at(&self, index: u64) -> Result<u64> {
        let mut bytes = [0u8; 8];
        std::os::unix::fs::FileExt::read_exact_at(&self.file, &mut bytes, HEADER as u64 + index * 8)?;
        Ok(u64::from_le_bytes(bytes))
    }

    /// The index of the first send at or after `packed`, among `count`.
    fn first_from(&self, packed: u64, count: u64) -> Result<u64> {
        let (mut low, mut high) = (0u64, count);
        while low < high {
            let middle = low + (high - low) / 2;
            if self.send_at(middle)? < packed {
                low = middle + 1;
            } else {
                high = middle;
            }
        }
        Ok(low)
    }

    /// Reads only the sends from `from` (packed) up to, not with, `to` (`None`: to the end).
    fn limit_to(&mut self, from: u64, to: Option<u64>) -> Result<()> {
        let count = self.left / 8;
        let first = self.first_from(from, count)?;
        let last = match to {
            Some(to) => self.first_from(to, count)?,
            None => count,
        };
        std::io::Seek::seek(&mut self.file, std::io::SeekFrom::Start(HEADER as u64 + first * 8))?;
        self.left = (last.max(first) - first) * 8;
        Ok(())
    }

    fn next(&mut self) -> Result<Option<u64>> {
        if self.at == self.block.len() {
            self.block.clear();
            self.at = 0;
            let wanted = self.bytes.len().min(self.left as usize);
            let mut filled = 0;
            while filled < wanted {
                let read = self.file.read(&mut self.bytes[filled..wanted])?;
                if read == 0 {
                    bail!("a history segment is shorter than it was");
                }
                filled += read;
            }
            self.left -= filled as u64;
            self.block.extend(
                self.bytes[..filled]
                    .chunks_exact(8)
                    .map(|bytes| u64::from_le_bytes(bytes.try_into().expect("eight bytes"))),
            );
            if self.block.is_empty() {
                return Ok(None);
            }
        }
        self.at += 1;
        Ok(Some(self.block[self.at - 1]))
    }
}

/// Writes to `out` every number that the history's sends within the rule's window (ending
/// `today`) reach `rule.times` or more times, with its last send; answers how many. A segment
/// with no send left inside the longest window a rule may have is emptied on the way (its sends
/// may no longer be kept; the empty segment still says the run was recorded).
pub fn write_capped(dir: &Path, rule: CapRule, today: u32, out: &Path) -> Result<u64> {
    let first_day = rule.first_day(today);
    let oldest_kept = CapRule {
        times: 1,
        days: CapRule::MAX_DAYS,
    }
    .first_day(today);
    let mut segments = Vec::new();
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries.collect::<std::io::Result<Vec<_>>>()?,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(error) => return Err(error).with_context(|| format!("cannot read {}", dir.display())),
    };
    for entry in entries {
        let path = entry.path();
        if path.extension().and_then(|e| e.to_str()) != Some(EXTENSION) {
            continue;
        }
        let (segment, newest) = Segment::open(&path)?;
        if segment.left == 0 {
            continue;
        }
        if newest < oldest_kept {
            drop(segment);
            replace_segment(&path, newest, &[])?;
        } else if newest >= first_day {
            segments.push((path, segment.left));
        }
    }
    // The keys cut in as many ranges as there are cores, at the sends of the largest segment,
    // and each range merged on its own core.
    let parts = rayon::current_num_threads().clamp(1, 16);
    let mut cuts = Vec::new();
    if let Some((largest, bytes)) = segments.iter().max_by_key(|(_, bytes)| *bytes) {
        let (segment, _) = Segment::open(largest)?;
        let count = bytes / 8;
        for part in 1..parts as u64 {
            // A cut between two numbers, never inside one number's sends.
            let key = unpacked(segment.send_at(count * part / parts as u64)?).0;
            if cuts.last().is_none_or(|last| *last < key) {
                cuts.push(key);
            }
        }
    }
    let mut ranges = Vec::with_capacity(cuts.len() + 1);
    let mut from = 0u64;
    for cut in cuts {
        ranges.push((packed(from, 0), Some(packed(cut, 0))));
        from = cut;
    }
    ranges.push((packed(from, 0), None));
    let paths: Vec<&Path> = segments.iter().map(|(path, _)| path.as_path()).collect();
    let found: Vec<Result<Vec<CappedNumber>>> = {
        use rayon::prelude::*;
        ranges
            .par_iter()
            .map(|(from, to)| merge_range(&paths, *from, *to, rule, today))
            .collect()
    };
    // Two checks may make the same list at once: each writes a file of its own.
    static MADE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let made = MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let staged = out.with_extension(format!("{}-{made}.tmp", std::process::id()));
    let file = crate::files::create_private(&staged).with_context(|| format!("cannot write {}", staged.display()))?;
    let mut writer = CappedWriter::new(file, rule, today)?;
    for numbers in found {
        for number in numbers? {
            writer.push(number)?;
        }
    }
    let (file, written) = writer.finish()?;
    file.sync_all()?;
    std::fs::rename(&staged, out).with_context(|| format!("cannot write {}", out.display()))?;
    Ok(written)
}

/// The numbers of one range of keys that reached the rule, merged from every segment.
fn merge_range(paths: &[&Path], from: u64, to: Option<u64>, rule: CapRule, today: u32) -> Result<Vec<CappedNumber>> {
    let first_day = rule.first_day(today);
    let mut segments = Vec::with_capacity(paths.len());
    for path in paths {
        let (mut segment, _) = Segment::open(path)?;
        segment.limit_to(from, to)?;
        segments.push(segment);
    }
    let mut heap = BinaryHeap::with_capacity(segments.len());
    for (index, segment) in segments.iter_mut().enumerate() {
        if let Some(send) = segment.next()? {
            heap.push(Reverse((send, index)));
        }
    }
    let mut found = Vec::new();
    let mut current: Option<(u64, CapMark)> = None;
    let mut finish = |current: Option<(u64, CapMark)>| {
        if let Some((key, mark)) = current {
            if mark.sends >= rule.times {
                found.push(CappedNumber { key, mark });
            }
        }
    };
    while let Some(Reverse((send, index))) = heap.pop() {
        if let Some(next) = segments[index].next()? {
            heap.push(Reverse((next, index)));
        }
        let (key, day) = unpacked(send);
        if day < first_day || day > today {
            continue;
        }
        match &mut current {
            Some((held, mark)) if *held == key => {
                mark.sends = mark.sends.saturating_add(1);
                mark.last_sent = mark.last_sent.max(day);
            }
            _ => {
                finish(current.take());
                current = Some((
                    key,
                    CapMark {
                        last_sent: day,
                        sends: 1,
                    },
                ));
            }
        }
    }
    finish(current);
    Ok(found)
}

/// The capped list of `rule` on `today` for the history as it stands, made once and kept in the
/// history's folder until a segment changes (or the rule, or the day): a check then only links
/// it. Older lists are deleted when a new one is made.
pub fn capped_list(dir: &Path, rule: CapRule, today: u32) -> Result<PathBuf> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot make {}", dir.display()))?;
    let name = format!(
        "{CACHE_PREFIX}{}-{}-{today}-{:016x}.bin",
        rule.times,
        rule.days,
        history_state(dir)?
    );
    let path = dir.join(&name);
    if path.exists() {
        return Ok(path);
    }
    write_capped(dir, rule, today, &path)?;
    for entry in std::fs::read_dir(dir)?.flatten() {
        let other = entry.file_name().to_string_lossy().into_owned();
        if other.starts_with(CACHE_PREFIX) && other != name {
            let _ = std::fs::remove_file(entry.path());
        }
    }
    Ok(path)
}

const CACHE_PREFIX: &str = "capped-";

/// What the segments are now: each one's name, length and time of change, digested.
fn history_state(dir: &Path) -> Result<u64> {
    let mut segments = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))? {
        let entry = entry?;
        let path = entry.path();
        if path.extension().and_then(|e| e.to_str()) != Some(EXTENSION) {
            continue;
        }
        let meta = entry.metadata()?;
        let changed = meta
            .modified()?
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| since.as_nanos());
        segments.push((entry.file_name(), meta.len(), changed));
    }
    segments.sort();
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    for (name, len, changed) in segments {
        hasher.update(name.as_encoded_bytes());
        hasher.update(&len.to_le_bytes());
        hasher.update(&changed.to_le_bytes());
    }
    Ok(hasher.digest())
}

/// The sends of a run, gathered from its rows as they are walked: every row the service took (or
/// sent a fallback for), on the day it answered (today for a row whose answer carries no date).
pub struct Sends {
    sends: Vec<u64>,
    today: u32,
}

impl Default for Sends {
    fn default() -> Sends {
        Sends {
            sends: Vec::new(),
            today: crate::plan::capped::today(),
        }
    }
}

impl Sends {
    pub fn see(&mut self, walked: &crate::report::Walked<'_>) {
        if walked.row.taken() {
            if let Some(key) = number_key(&walked.row.phone) {
                let day = walked.sent_at.map_or(self.today, crate::plan::capped::day_of_millis);
                self.sends.push(packed(key, day));
            }
        }
    }

    pub fn into_vec(self) -> Vec<u64> {
        self.sends
    }
}

/// The sends of a run read from it (a run whose end was not recorded); none for a notification.
pub fn sends_of_run(run_dir: &Path) -> Result<Vec<u64>> {
    let rows = crate::report::RunRows::open(run_dir)?;
    if !rows.campaign().is_advertising() {
        return Ok(Vec::new());
    }
    let mut sends = Sends::default();
    rows.walk_sent(|walked| {
        sends.see(&walked);
        Ok(())
    })?;
    Ok(sends.into_vec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::capped::{number_text, CappedList};
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    fn capped(dir: &Path, rule: CapRule, today: u32) -> CappedList {
        let out = dir.join("capped.bin");
        write_capped(&dir.join("history"), rule, today, &out).unwrap();
        CappedList::load(&out).unwrap()
    }

    #[test]
    fn sends_of_several_campaigns_add_up_within_the_window() {
        let dir = tempfile::tempdir().unwrap();
        let history = dir.path().join("history");
        let a = number_key("01011112222").unwrap();
        let b = number_key("01033334444").unwrap();
        write_segment(&history, "c1", vec![packed(a, 100), packed(b, 90)]).unwrap();
        write_segment(&history, "c2", vec![packed(a, 103), packed(b, 104)]).unwrap();
        let list = capped(dir.path(), CapRule::new(2, 7).unwrap(), 105);
        // b's first send (day 90) is outside the 7 days ending on day 105.
        assert_eq!(list.len(), 1);
        assert_eq!(
            list.lookup("01011112222"),
            Some(CapMark {
                last_sent: 103,
                sends: 2
            })
        );
        // Recording c2 again (a resumed run ending twice) does not count its sends twice.
        write_segment(&history, "c2", vec![packed(a, 103), packed(b, 104)]).unwrap();
        assert_eq!(capped(dir.path(), CapRule::new(3, 7).unwrap(), 105).len(), 0);
    }

    #[test]
    fn a_segment_past_every_window_is_emptied() {
        let dir = tempfile::tempdir().unwrap();
        let history = dir.path().join("history");
        write_segment(&history, "old", vec![packed(number_key("01011112222").unwrap(), 10)]).unwrap();
        write_segment(&history, "new", vec![packed(number_key("01011112222").unwrap(), 300)]).unwrap();
        let list = capped(
            dir.path(),
            CapRule::new(1, 365).unwrap(),
            10 + u32::from(CapRule::MAX_DAYS),
        );
        assert_eq!(
            std::fs::metadata(segment_path(&history, "old")).unwrap().len(),
            HEADER as u64
        );
        assert_eq!(
            std::fs::metadata(segment_path(&history, "new")).unwrap().len(),
            HEADER as u64 + 8
        );
        assert_eq!(list.len(), 1);
    }

    #[test]
    fn a_kept_list_is_used_until_a_segment_changes() {
        let dir = tempfile::tempdir().unwrap();
        let history = dir.path().join("history");
        let a = number_key("01011112222").unwrap();
        write_segment(&history, "c1", vec![packed(a, 100)]).unwrap();
        let rule = CapRule::new(1, 7).unwrap();
        let first = capped_list(&history, rule, 101).unwrap();
        assert_eq!(capped_list(&history, rule, 101).unwrap(), first, "kept");
        assert_ne!(capped_list(&history, rule, 102).unwrap(), first, "another day");
        assert!(!first.exists(), "the older list is deleted");
        let b = number_key("01033334444").unwrap();
        write_segment(&history, "c2", vec![packed(b, 102)]).unwrap();
        let again = capped_list(&history, rule, 102).unwrap();
        assert_eq!(
            CappedList::load(&again).unwrap().len(),
            2,
            "a new segment makes it again"
        );
    }

    #[test]
    fn a_damaged_segment_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let history = dir.path().join("history");
        std::fs::create_dir_all(&history).unwrap();
        std::fs::write(segment_path(&history, "x"), b"not a segment at all").unwrap();
        let error = write_capped(&history, CapRule::new(1, 7).unwrap(), 100, &dir.path().join("c.bin")).unwrap_err();
        assert!(format!("{error:#}").contains("x.seg"), "{error:#}");
    }

    proptest! {
        /// Whatever a segment file holds, the merge reads it or names it; it never panics.
        #[test]
        fn any_segment_bytes_are_read_or_refused(body in proptest::collection::vec(any::<u8>(), 0..100), framed in any::<bool>()) {
            let dir = tempfile::tempdir().unwrap();
            let history = dir.path().join("history");
            std::fs::create_dir_all(&history).unwrap();
            let mut bytes = if framed { MAGIC.to_vec() } else { Vec::new() };
            bytes.extend_from_slice(&body);
            std::fs::write(segment_path(&history, "x"), &bytes).unwrap();
            let _ = write_capped(&history, CapRule::new(1, 7).unwrap(), 100, &dir.path().join("c.bin"));
        }

        /// The merge agrees with counting every send by hand, whatever the segments hold.
        #[test]
        fn the_merge_counts_as_by_hand(
            campaigns in proptest::collection::vec(
                proptest::collection::vec((0u64..6, 80u32..110), 0..40), 1..5),
            times in 1u16..4,
            days in 1u16..20,
        ) {
            let dir = tempfile::tempdir().unwrap();
            let history = dir.path().join("history");
            let key = |n: u64| number_key(&format!("0101234{:04}", n)).unwrap();
            let today = 105;
            let rule = CapRule::new(times, days).unwrap();
            let mut by_hand: BTreeMap<u64, CapMark> = BTreeMap::new();
            for (i, sends) in campaigns.iter().enumerate() {
                write_segment(&history, &format!("c{i}"), sends.iter().map(|(n, d)| packed(key(*n), *d)).collect()).unwrap();
                for (n, day) in sends {
                    if *day >= rule.first_day(today) && *day <= today {
                        let mark = by_hand.entry(key(*n)).or_insert(CapMark { last_sent: *day, sends: 0 });
                        mark.sends += 1;
                        mark.last_sent = mark.last_sent.max(*day);
                    }
                }
            }
            by_hand.retain(|_, mark| mark.sends >= times);
            let list = capped(dir.path(), rule, today);
            prop_assert_eq!(list.len(), by_hand.len());
            for (key, mark) in by_hand {
                prop_assert_eq!(list.lookup(&number_text(key)), Some(mark));
            }
        }
    }
}
