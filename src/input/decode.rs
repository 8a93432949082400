//! A `Read` adapter that turns CP949 (EUC-KR as Korean spreadsheets export it) into UTF-8 as it streams.

use encoding_rs::{CoderResult, Decoder, EUC_KR};
use std::io::{self, Read};

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
            let (result, read, written, _) =
                self.decoder
                    .decode_to_utf8(&self.input[self.input_start..self.input_end], &mut self.output, last);
            self.input_start += read;
            self.output_start = 0;
            self.output_end = written;
            if written > 0 || last || matches!(result, CoderResult::OutputFull) {
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
}
