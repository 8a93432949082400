//! The raw bytes of one CSV record, split the strict way (RFC 4180), where the csv crate is lenient: a quote never closed, or text after a closing quote.
//!
//! Only records the lenient parse makes suspicious come here (a field holding a line break, a
//! record that ran past its size limit), so speed does not matter; agreeing with the csv crate's
//! dialect does: `,` between fields, `"` opening a field only as its first byte, `""` inside
//! quotes for a quote, and CR, LF or CRLF ending a record.

/// One field's raw span in the record, quotes included.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawField {
    pub start: usize,
    pub end: usize,
    pub quoted: bool,
}

impl RawField {
    pub fn len(&self) -> usize {
        self.end - self.start
    }
}

/// Where the quoting of a record goes wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuoteFault {
    /// The quoted field at this index is still open at the end of the bytes.
    Unclosed { field: usize },
    /// The quoted field at this index closes at `closing` (an offset into the bytes) and is
    /// followed by more text instead of a comma or the end of the line.
    TextAfterClosingQuote { field: usize, closing: usize },
}

impl QuoteFault {
    pub fn field(self) -> usize {
        match self {
            QuoteFault::Unclosed { field } | QuoteFault::TextAfterClosingQuote { field, .. } => field,
        }
    }
}

/// The fields of the first record in `raw` (blank lines before it skipped), and the first
/// quoting fault, if any.
pub fn split(raw: &[u8]) -> (Vec<RawField>, Option<QuoteFault>) {
    let is_end = |at: usize| at >= raw.len() || matches!(raw[at], b'\r' | b'\n');
    let mut at = raw.iter().take_while(|b| matches!(b, b'\r' | b'\n')).count();
    let mut fields = Vec::new();
    let mut fault = None;
    loop {
        let start = at;
        let quoted = raw.get(at) == Some(&b'"');
        if quoted {
            at += 1;
            loop {
                match raw[at.min(raw.len())..].iter().position(|&b| b == b'"') {
                    None => {
                        fields.push(RawField {
                            start,
                            end: raw.len(),
                            quoted,
                        });
                        let field = fields.len() - 1;
                        return (fields, fault.or(Some(QuoteFault::Unclosed { field })));
                    }
                    Some(offset) if raw.get(at + offset + 1) == Some(&b'"') => at += offset + 2,
                    Some(offset) => {
                        at += offset + 1;
                        break;
                    }
                }
            }
            if !is_end(at) && raw[at] != b',' && fault.is_none() {
                fault = Some(QuoteFault::TextAfterClosingQuote {
                    field: fields.len(),
                    closing: at - 1,
                });
            }
        }
        // The rest of the field (all of it when unquoted) runs to a comma or the end of the line.
        while !is_end(at) && raw[at] != b',' {
            at += 1;
        }
        fields.push(RawField { start, end: at, quoted });
        if is_end(at) {
            return (fields, fault);
        }
        at += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans(raw: &str) -> Vec<&str> {
        let (fields, _) = split(raw.as_bytes());
        fields.iter().map(|f| &raw[f.start..f.end]).collect()
    }

    #[test]
    fn splits_like_the_csv_crate_where_both_agree() {
        assert_eq!(spans("a,\"b,c\",d\n"), ["a", "\"b,c\"", "d"]);
        assert_eq!(spans("\n\r\na,\"x\"\"y\"\r\nnext"), ["a", "\"x\"\"y\""]);
        assert_eq!(spans("a \"b\" c,d"), ["a \"b\" c", "d"]);
        assert_eq!(spans(",\n"), ["", ""]);
        assert_eq!(split(b"a,\"b\nc\",d\n").1, None);
    }

    #[test]
    fn a_quote_never_closed_is_found_at_its_field() {
        let (fields, fault) = split(b"010,\"Kim\n011,Lee\n");
        assert_eq!(fault, Some(QuoteFault::Unclosed { field: 1 }));
        assert_eq!(fields.len(), 2);
    }

    #[test]
    fn text_after_a_closing_quote_is_found_at_its_field() {
        let raw = b"010,\"Kim\n011,\"Lee\",x\n";
        let (_, fault) = split(raw);
        assert_eq!(fault, Some(QuoteFault::TextAfterClosingQuote { field: 1, closing: 13 }));
        assert_eq!(raw[13], b'"');
    }
}
