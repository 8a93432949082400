//! The CSV reader's byte source: keeps the raw bytes of the record being parsed, so a suspicious record can be checked against them, and stops a record that never ends.
//!
//! The csv crate is lenient: a quote that is never closed takes in the rest of the file as one
//! field, and a file with no line break (a binary file, `/dev/zero`) is one record that grows
//! without bound. This window sits between the file and the csv crate, holds the bytes from the
//! start of the current record (the caller says where that is after each record), and fails the
//! read once a record has taken more than its limit, so memory stays bounded.

use std::io::{self, Read};

/// Bytes asked of the file per read; also what the csv crate buffers.
pub const CHUNK_BYTES: usize = 256 * 1024;

pub struct RecordWindow<R> {
    inner: R,
    buffer: Vec<u8>,
    /// Stream offset of `buffer[0]`.
    base: u64,
    /// `buffer[..filled]` holds data; `buffer[handed..filled]` is not given to the parser yet.
    handed: usize,
    filled: usize,
    /// Stream offset where the record being parsed starts; nothing before it is kept.
    record_start: u64,
    /// The most bytes a record may take.
    limit: usize,
    overflowed: bool,
    /// Every byte there is is in `buffer` already (see `holding`).
    complete: bool,
}

/// The error a read fails with when a record passed the limit.
#[derive(Debug, thiserror::Error)]
#[error("a record runs past {limit} bytes")]
pub struct RecordTooLong {
    pub limit: usize,
}

impl<R: Read> RecordWindow<R> {
    pub fn new(inner: R, limit: usize) -> RecordWindow<R> {
        RecordWindow {
            inner,
            buffer: vec![0; 2 * CHUNK_BYTES],
            base: 0,
            handed: 0,
            filled: 0,
            record_start: 0,
            limit,
            overflowed: false,
            complete: false,
        }
    }

    /// A window over bytes already in memory, a block of a file: they are held as they are, with
    /// no buffer beside them, and nothing more is read.
    pub fn holding(bytes: Vec<u8>, inner: R, limit: usize) -> RecordWindow<R> {
        RecordWindow {
            inner,
            filled: bytes.len(),
            buffer: bytes,
            base: 0,
            handed: 0,
            record_start: 0,
            limit,
            overflowed: false,
            complete: true,
        }
    }

    /// The next record starts at stream offset `offset` (the csv reader's byte position).
    pub fn record_starts_at(&mut self, offset: u64) {
        debug_assert!(offset >= self.record_start && offset <= self.base + self.handed as u64);
        self.record_start = offset;
    }

    pub fn set_limit(&mut self, limit: usize) {
        self.limit = limit;
    }

    /// Whether a read failed because a record passed the limit.
    pub fn overflowed(&self) -> bool {
        self.overflowed
    }

    /// The raw bytes from stream offset `from` to `to`, when they are still held (they are for
    /// the record being parsed and the one just parsed, until `record_starts_at` moves on).
    pub fn raw(&self, from: u64, to: u64) -> Option<&[u8]> {
        let start = usize::try_from(from.checked_sub(self.base)?).ok()?;
        let end = usize::try_from(to.checked_sub(self.base)?).ok()?;
        self.buffer.get(start..end.min(self.handed))
    }

    /// The bytes of the current record handed to the parser so far.
    pub fn current_record(&self) -> &[u8] {
        let start = (self.record_start - self.base) as usize;
        &self.buffer[start..self.handed]
    }

    /// Reads more of the file, first dropping what lies before the current record.
    fn fill(&mut self) -> io::Result<()> {
        let keep_from = (self.record_start - self.base) as usize;
        if self.handed - keep_from > self.limit {
            self.overflowed = true;
            return Err(io::Error::other(RecordTooLong { limit: self.limit }));
        }
        if self.complete {
            return Ok(());
        }
        self.buffer.copy_within(keep_from..self.filled, 0);
        self.base += keep_from as u64;
        self.handed -= keep_from;
        self.filled -= keep_from;
        if self.buffer.len() - self.filled < CHUNK_BYTES {
            self.buffer.resize(self.filled + 2 * CHUNK_BYTES, 0);
        }
        loop {
            match self.inner.read(&mut self.buffer[self.filled..]) {
                Ok(read) => {
                    self.filled += read;
                    return Ok(());
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) => return Err(error),
            }
        }
    }
}

impl<R: Read> Read for RecordWindow<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.handed == self.filled {
            self.fill()?;
        }
        let count = out.len().min(self.filled - self.handed);
        out[..count].copy_from_slice(&self.buffer[self.handed..self.handed + count]);
        self.handed += count;
        Ok(count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passes_bytes_through_unchanged_in_small_reads() {
        let data: Vec<u8> = (0..3 * CHUNK_BYTES).map(|i| (i % 251) as u8).collect();
        let mut window = RecordWindow::new(&data[..], usize::MAX);
        let mut out = Vec::new();
        let mut piece = [0u8; 1000];
        loop {
            let read = window.read(&mut piece).unwrap();
            if read == 0 {
                break;
            }
            out.extend_from_slice(&piece[..read]);
            // The parser keeps up: every record ends where the reading is.
            let at = out.len() as u64;
            window.record_starts_at(at);
        }
        assert_eq!(out, data);
    }

    #[test]
    fn a_record_that_never_ends_fails_the_read_at_the_limit_with_memory_bounded() {
        let mut window = RecordWindow::new(io::repeat(0), 1 << 20);
        let mut piece = vec![0u8; CHUNK_BYTES];
        let mut total = 0usize;
        let error = loop {
            match window.read(&mut piece) {
                Ok(read) => total += read,
                Err(error) => break error,
            }
        };
        assert!(window.overflowed());
        assert!(error.to_string().contains("1048576"), "{error}");
        assert!(
            total <= (1 << 20) + 2 * CHUNK_BYTES,
            "stopped near the limit, not at {total}"
        );
        assert!(window.buffer.len() <= (1 << 20) + 4 * CHUNK_BYTES);
    }

    #[test]
    fn the_current_record_is_held_from_its_start() {
        let data = b"a,b\nccc,\"d\ne\"\n".to_vec();
        let mut window = RecordWindow::new(&data[..], usize::MAX);
        let mut out = [0u8; 64];
        let read = window.read(&mut out).unwrap();
        assert_eq!(read, data.len());
        window.record_starts_at(4);
        assert_eq!(window.current_record(), &data[4..]);
        assert_eq!(window.raw(4, 8), Some(&b"ccc,"[..]));
        assert_eq!(window.raw(0, 2), Some(&b"a,"[..]), "not dropped before the next fill");
    }
}
