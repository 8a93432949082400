//! A `Read` adapter that turns CP949 (EUC-KR as Korean spreadsheets export it) into UTF-8 as it streams.
//!
//! Bytes that are not CP949 (Latin-1 accents, a UTF-8 file cut in the sniffed prefix) become
//! U+FFFD, on purpose and visibly: CP949 has no U+FFFD, so the CSV reader knows that every U+FFFD
//! in a decoded field stands for such bytes and rejects the field as not text. Without that mark
//! the row would be rejected later for an unencodable character, or worse, sent.

use encoding_rs::{Decoder, DecoderResult, EUC_KR};
use std::io::{self, Read};

/// What a byte sequence that is not CP949 becomes: U+FFFD in UTF-8.
pub const NOT_CP949: &[u8] = "\u{FFFD}".as_bytes();

pub struct Cp949Reader<R> {
    inner: R,
    decoder: Decoder,
    input: Vec<u8>,
    input_start: usize,
    input_end: usize,
    output: Vec<u8>,
    output_start: usize,
    output_end: usize,
    finished: bool,
}

impl<R: Read> Cp949Reader<R> {
    pub fn new(inner: R) -> Self {
        Cp949Reader {
            inner,
            decoder: EUC_KR.new_decoder_without_bom_handling(),
            input: vec![0; 64 * 1024],
            input_start: 0,
            input_end: 0,
            output: vec![0; 3 * 64 * 1024 + 16],
            output_start: 0,
            output_end: 0,
            finished: false,
        }
    }

    fn refill(&mut self) -> io::Result<()> {
        loop {
            if self.input_start == self.input_end && !self.finished {
                let read = self.inner.read(&mut self.input)?;
                self.input_start = 0;
                self.input_end = read;
                if read == 0 {
                    self.finished = true;
                }
            }
            let last = self.finished && self.input_start == self.input_end;
            let room = self.output.len() - NOT_CP949.len();
            let (result, read, mut written) = self.decoder.decode_to_utf8_without_replacement(
                &self.input[self.input_start..self.input_end],
                &mut self.output[..room],
                last,
            );
            self.input_start += read;
            if let DecoderResult::Malformed(..) = result {
                self.output[written..written + NOT_CP949.len()].copy_from_slice(NOT_CP949);
                written += NOT_CP949.len();
            }
            self.output_start = 0;
            self.output_end = written;
            if written > 0 || last || matches!(result, DecoderResult::OutputFull) {
                return Ok(());
            }
        }
    }
}

impl<R: Read> Read for Cp949Reader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.output_start == self.output_end {
            if self.finished && self.input_start == self.input_end {
                // The decoder was already flushed with `last = true`.
                return Ok(0);
            }
            self.refill()?;
        }
        let n = buf.len().min(self.output_end - self.output_start);
        buf[..n].copy_from_slice(&self.output[self.output_start..self.output_start + n]);
        self.output_start += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_cp949_in_small_reads() {
        let text = "이름,전화\n김민수,010-1234-5678\n똠뷁,010\n".repeat(2_000);
        let (bytes, _, _) = EUC_KR.encode(&text);
        let mut reader = Cp949Reader::new(&bytes[..]);
        let mut out = Vec::new();
        let mut buf = [0u8; 7];
        loop {
            let n = reader.read(&mut buf).unwrap();
            if n == 0 {
                break;
            }
            out.extend_from_slice(&buf[..n]);
        }
        assert_eq!(String::from_utf8(out).unwrap(), text);
    }

    #[test]
    fn bytes_that_are_not_cp949_become_the_mark_and_the_rest_still_decodes() {
        // Latin-1 "café," then a lead byte cut off by the end of the file.
        let bytes = b"caf\xE9,\xB1\xE8\n\x80x\xB1";
        let mut out = String::new();
        Cp949Reader::new(&bytes[..]).read_to_string(&mut out).unwrap();
        assert_eq!(out, "caf\u{FFFD},\u{AE40}\n\u{FFFD}x\u{FFFD}");
    }
}
