//! The Thrift compact protocol read into a tree of values and written back, whatever the fields mean: how a Parquet footer is read here, so that the columns nobody mapped can be left out of it before polars reads it (`parquet_footer`).
//!
//! A field or union member this code has never heard of is kept as it came, so a footer from a
//! newer writer is read and written back whole. Nothing in the input is trusted: a count larger
//! than the bytes left, a nesting deeper than [`MAX_DEPTH`], or bytes that end early are errors,
//! never a panic or an allocation the input asked for.

use std::fmt;

/// Deeper than any Parquet footer nests (FileMetaData → RowGroup → ColumnChunk → ColumnMetaData →
/// Statistics is five levels); far below what would exhaust the stack.
pub const MAX_DEPTH: usize = 64;

/// The compact protocol's type codes, as they appear in field headers and collection headers.
pub mod kind {
    pub const TRUE: u8 = 1;
    pub const FALSE: u8 = 2;
    pub const I8: u8 = 3;
    pub const I16: u8 = 4;
    pub const I32: u8 = 5;
    pub const I64: u8 = 6;
    pub const DOUBLE: u8 = 7;
    pub const BINARY: u8 = 8;
    pub const LIST: u8 = 9;
    pub const SET: u8 = 10;
    pub const MAP: u8 = 11;
    pub const STRUCT: u8 = 12;
    pub const UUID: u8 = 13;
}

/// One value. Text is `Binary` (Thrift does not tell them apart on the wire); a binary borrows
/// from the bytes read.
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    Bool(bool),
    I8(i8),
    I16(i16),
    I32(i32),
    I64(i64),
    /// Kept as its bytes: nothing here reads a double, and a NaN's bits come back as they were.
    Double([u8; 8]),
    Binary(&'a [u8]),
    Uuid([u8; 16]),
    /// A list or a set (`kind::LIST` or `kind::SET`): its element kind is kept, so that an empty
    /// one is written back as it came.
    List {
        set: bool,
        element: u8,
        items: Vec<Value<'a>>,
    },
    Map {
        key: u8,
        value: u8,
        entries: Vec<(Value<'a>, Value<'a>)>,
    },
    Struct(Vec<Field<'a>>),
    /// An item of a list read whole but kept as its bytes (see [`read_struct`]),
    /// and written back as they are.
    Encoded {
        kind: u8,
        bytes: &'a [u8],
    },
}

/// A field of a struct (or the member of a union, which is a struct of one field).
#[derive(Debug, Clone, PartialEq)]
pub struct Field<'a> {
    pub id: i16,
    pub value: Value<'a>,
}

/// Why bytes are not a Thrift compact value, and where that was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub offset: usize,
    pub problem: &'static str,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {} of the footer", self.problem, self.offset)
    }
}

impl std::error::Error for Error {}

/// Reads the struct at the start of `bytes`; answers its fields and how many bytes it took. The
/// items of a list whose field ids from the outer struct are `path` are kept as their bytes when
/// `as_bytes(path)`: each is read, so that it is checked, but held as one [`Value::Encoded`]
/// instead of a tree. A Parquet footer holds a column chunk for every column in every row group;
/// kept so, they take one value each.
pub fn read_struct(bytes: &[u8], as_bytes: impl Fn(&[i16]) -> bool) -> Result<(Vec<Field<'_>>, usize), Error> {
    let mut reader = Reader {
        bytes,
        at: 0,
        path: Vec::new(),
        as_bytes: &as_bytes,
    };
    let fields = reader.fields(0)?;
    Ok((fields, reader.at))
}

/// Appends the bytes of a struct of `fields` to `out` (the inverse of [`read_struct`]).
pub fn write_struct(fields: &[Field<'_>], out: &mut Vec<u8>) {
    let mut last = 0i16;
    for field in fields {
        let wire_kind = match field.value {
            Value::Bool(true) => kind::TRUE,
            Value::Bool(false) => kind::FALSE,
            ref other => kind_of(other),
        };
        let delta = i32::from(field.id) - i32::from(last);
        if (1..=15).contains(&delta) {
            out.push(((delta as u8) << 4) | wire_kind);
        } else {
            out.push(wire_kind);
            write_varint(out, zigzag(i64::from(field.id)));
        }
        if !matches!(field.value, Value::Bool(_)) {
            write_value(&field.value, out);
        }
        last = field.id;
    }
    out.push(0);
}

fn kind_of(value: &Value<'_>) -> u8 {
    match value {
        Value::Bool(_) => kind::TRUE,
        Value::I8(_) => kind::I8,
        Value::I16(_) => kind::I16,
        Value::I32(_) => kind::I32,
        Value::I64(_) => kind::I64,
        Value::Double(_) => kind::DOUBLE,
        Value::Binary(_) => kind::BINARY,
        Value::Uuid(_) => kind::UUID,
        Value::List { set: false, .. } => kind::LIST,
        Value::List { set: true, .. } => kind::SET,
        Value::Map { .. } => kind::MAP,
        Value::Struct(_) => kind::STRUCT,
        Value::Encoded { kind, .. } => *kind,
    }
}

/// A value's bytes where its kind is known from elsewhere (a field header, a collection header).
fn write_value(value: &Value<'_>, out: &mut Vec<u8>) {
    match value {
        // Only inside a collection: a field carries its boolean in its header.
        Value::Bool(b) => out.push(if *b { kind::TRUE } else { kind::FALSE }),
        Value::I8(n) => out.push(*n as u8),
        Value::I16(n) => write_varint(out, zigzag(i64::from(*n))),
        Value::I32(n) => write_varint(out, zigzag(i64::from(*n))),
        Value::I64(n) => write_varint(out, zigzag(*n)),
        Value::Double(bytes) => out.extend_from_slice(bytes),
        Value::Binary(bytes) => {
            write_varint(out, bytes.len() as u64);
            out.extend_from_slice(bytes);
        }
        Value::Uuid(bytes) => out.extend_from_slice(bytes),
        Value::Encoded { bytes, .. } => out.extend_from_slice(bytes),
        Value::List { element, items, .. } => {
            if items.len() < 15 {
                out.push(((items.len() as u8) << 4) | element);
            } else {
                out.push(0xF0 | element);
                write_varint(out, items.len() as u64);
            }
            for item in items {
                write_value(item, out);
            }
        }
        Value::Map { key, value, entries } => {
            write_varint(out, entries.len() as u64);
            if !entries.is_empty() {
                out.push((key << 4) | value);
            }
            for (k, v) in entries {
                write_value(k, out);
                write_value(v, out);
            }
        }
        Value::Struct(fields) => write_struct(fields, out),
    }
}

fn zigzag(n: i64) -> u64 {
    ((n << 1) ^ (n >> 63)) as u64
}

fn write_varint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8 & 0x7F) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

struct Reader<'a, 'p> {
    bytes: &'a [u8],
    at: usize,
    /// The field ids from the outer struct to the value being read (a list adds none).
    path: Vec<i16>,
    as_bytes: &'p dyn Fn(&[i16]) -> bool,
}

impl<'a> Reader<'a, '_> {
    fn fail<T>(&self, problem: &'static str) -> Result<T, Error> {
        Err(Error {
            offset: self.at,
            problem,
        })
    }

    fn byte(&mut self) -> Result<u8, Error> {
        match self.bytes.get(self.at) {
            Some(&b) => {
                self.at += 1;
                Ok(b)
            }
            None => self.fail("the footer ends inside a value"),
        }
    }

    fn take(&mut self, count: usize) -> Result<&'a [u8], Error> {
        if count > self.bytes.len() - self.at {
            return self.fail("the footer ends inside a value");
        }
        self.at += count;
        Ok(&self.bytes[self.at - count..self.at])
    }

    fn varint(&mut self) -> Result<u64, Error> {
        let mut result = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            result |= u64::from(b & 0x7F) << shift;
            if b & 0x80 == 0 {
                return Ok(result);
            }
        }
        self.fail("a variable-length integer longer than 64 bits")
    }

    fn signed(&mut self) -> Result<i64, Error> {
        let n = self.varint()?;
        Ok((n >> 1) as i64 ^ -((n & 1) as i64))
    }

    fn narrow<T: TryFrom<i64>>(&mut self) -> Result<T, Error> {
        let n = self.signed()?;
        T::try_from(n).or_else(|_| self.fail("an integer out of its type's range"))
    }

    /// A count of items that each take at least one byte: never more than the bytes left.
    fn count(&mut self, count: u64) -> Result<usize, Error> {
        match usize::try_from(count) {
            Ok(count) if count <= self.bytes.len() - self.at => Ok(count),
            _ => self.fail("a count larger than the footer"),
        }
    }

    fn fields(&mut self, depth: usize) -> Result<Vec<Field<'a>>, Error> {
        if depth >= MAX_DEPTH {
            return self.fail("structs nested too deep");
        }
        let mut fields = Vec::new();
        let mut last = 0i16;
        loop {
            let head = self.byte()?;
            if head == 0 {
                return Ok(fields);
            }
            let (wire_kind, delta) = (head & 0x0F, head >> 4);
            let id = if delta == 0 {
                self.narrow::<i16>()?
            } else {
                match last.checked_add(i16::from(delta)) {
                    Some(id) => id,
                    None => return self.fail("a field id out of range"),
                }
            };
            self.path.push(id);
            let value = match wire_kind {
                kind::TRUE => Value::Bool(true),
                kind::FALSE => Value::Bool(false),
                other => self.value(other, depth)?,
            };
            self.path.pop();
            fields.push(Field { id, value });
            last = id;
        }
    }

    fn value(&mut self, wire_kind: u8, depth: usize) -> Result<Value<'a>, Error> {
        Ok(match wire_kind {
            // A boolean inside a collection is a byte of its own.
            kind::TRUE | kind::FALSE => Value::Bool(self.byte()? == kind::TRUE),
            kind::I8 => Value::I8(self.byte()? as i8),
            kind::I16 => Value::I16(self.narrow()?),
            kind::I32 => Value::I32(self.narrow()?),
            kind::I64 => Value::I64(self.signed()?),
            kind::DOUBLE => Value::Double(self.take(8)?.try_into().expect("8 bytes")),
            kind::BINARY => {
                let length = self.varint()?;
                let length = self.count(length)?;
                Value::Binary(self.take(length)?)
            }
            kind::UUID => Value::Uuid(self.take(16)?.try_into().expect("16 bytes")),
            kind::LIST | kind::SET => {
                if depth + 1 >= MAX_DEPTH {
                    return self.fail("collections nested too deep");
                }
                let head = self.byte()?;
                let element = head & 0x0F;
                let size = match head >> 4 {
                    15 => self.varint()?,
                    small => u64::from(small),
                };
                let size = self.count(size)?;
                let as_bytes = (self.as_bytes)(&self.path);
                let mut items = Vec::with_capacity(size);
                for _ in 0..size {
                    let start = self.at;
                    let item = self.value(element, depth + 1)?;
                    items.push(if as_bytes {
                        Value::Encoded {
                            kind: element,
                            bytes: &self.bytes[start..self.at],
                        }
                    } else {
                        item
                    });
                }
                Value::List {
                    set: wire_kind == kind::SET,
                    element,
                    items,
                }
            }
            kind::MAP => {
                if depth + 1 >= MAX_DEPTH {
                    return self.fail("collections nested too deep");
                }
                let size = self.varint()?;
                let size = self.count(size)?;
                let (key, value) = if size == 0 {
                    (0, 0)
                } else {
                    let kinds = self.byte()?;
                    (kinds >> 4, kinds & 0x0F)
                };
                let mut entries = Vec::with_capacity(size);
                for _ in 0..size {
                    let k = self.value(key, depth + 1)?;
                    entries.push((k, self.value(value, depth + 1)?));
                }
                Value::Map { key, value, entries }
            }
            kind::STRUCT => Value::Struct(self.fields(depth + 1)?),
            _ => return self.fail("an unknown Thrift type"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_struct_is_read_as_the_compact_protocol_writes_it() {
        // {1: i32 -3, 4: "ab", 20: true, 21: list<i64>[1, -1], 22: {1: false}}
        let bytes = [
            0x15, 0x05, // field 1, i32, zigzag(-3) = 5
            0x38, 0x02, b'a', b'b', // field 4 (delta 3), binary of 2
            0x01, 0x28, // field 20 (long form: zigzag 20 = 40), true
            0x19, 0x26, 0x02, 0x01, // field 21, list of 2 i64: 1, -1
            0x1C, 0x12, 0x00, // field 22, struct {1: false}
            0x00,
        ];
        let (fields, used) = read_struct(&bytes, |_| false).unwrap();
        assert_eq!(used, bytes.len());
        assert_eq!(
            fields,
            [
                Field {
                    id: 1,
                    value: Value::I32(-3)
                },
                Field {
                    id: 4,
                    value: Value::Binary(b"ab")
                },
                Field {
                    id: 20,
                    value: Value::Bool(true)
                },
                Field {
                    id: 21,
                    value: Value::List {
                        set: false,
                        element: kind::I64,
                        items: vec![Value::I64(1), Value::I64(-1)]
                    }
                },
                Field {
                    id: 22,
                    value: Value::Struct(vec![Field {
                        id: 1,
                        value: Value::Bool(false)
                    }])
                },
            ]
        );
        let mut written = Vec::new();
        write_struct(&fields, &mut written);
        assert_eq!(written, bytes);
    }

    #[test]
    fn counts_larger_than_the_bytes_and_deep_nesting_are_errors() {
        // A list header claiming 2^32 elements.
        let huge_list = [0x19, 0xF5, 0x80, 0x80, 0x80, 0x80, 0x10];
        assert_eq!(
            read_struct(&huge_list, |_| false).unwrap_err().problem,
            "a count larger than the footer"
        );
        let deep: Vec<u8> = std::iter::repeat_n(0x1C, MAX_DEPTH + 1).collect();
        assert_eq!(
            read_struct(&deep, |_| false).unwrap_err().problem,
            "structs nested too deep"
        );
        assert_eq!(
            read_struct(&[0x15], |_| false).unwrap_err().problem,
            "the footer ends inside a value"
        );
    }

    fn value() -> impl Strategy<Value = Value<'static>> {
        let leaf = prop_oneof![
            any::<bool>().prop_map(Value::Bool),
            any::<i8>().prop_map(Value::I8),
            any::<i16>().prop_map(Value::I16),
            any::<i32>().prop_map(Value::I32),
            any::<i64>().prop_map(Value::I64),
            any::<[u8; 8]>().prop_map(Value::Double),
            prop::sample::select(vec![&b""[..], b"phone", &[0xFF, 0x00, 0x80][..]]).prop_map(Value::Binary),
            any::<[u8; 16]>().prop_map(Value::Uuid),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(field_of(inner.clone()), 0..5).prop_map(|mut fields| {
                    // Ids ascending and distinct, as writers write them (any order reads back the same).
                    fields.sort_by_key(|f| f.id);
                    fields.dedup_by_key(|f| f.id);
                    Value::Struct(fields)
                }),
                (any::<bool>(), prop::collection::vec(any::<i32>(), 0..20)).prop_map(|(set, numbers)| Value::List {
                    set,
                    element: kind::I32,
                    items: numbers.into_iter().map(Value::I32).collect(),
                }),
                prop::collection::vec(any::<bool>(), 0..20).prop_map(|flags| Value::List {
                    set: false,
                    element: kind::TRUE,
                    items: flags.into_iter().map(Value::Bool).collect(),
                }),
                prop::collection::vec((any::<i16>(), inner.clone()), 0..4).prop_map(|pairs| {
                    // A map's values share one kind: keep those of the first pair's kind.
                    let value = pairs.first().map_or(kind::I32, |(_, v)| kind_of(v));
                    let entries: Vec<_> = pairs
                        .into_iter()
                        .filter(|(_, v)| kind_of(v) == value)
                        .map(|(k, v)| (Value::I16(k), v))
                        .collect();
                    let value = if entries.is_empty() { 0 } else { value };
                    let key = if entries.is_empty() { 0 } else { kind::I16 };
                    Value::Map { key, value, entries }
                }),
            ]
        })
    }

    fn field_of(value: impl Strategy<Value = Value<'static>>) -> impl Strategy<Value = Field<'static>> {
        (any::<i16>(), value).prop_map(|(id, value)| Field { id, value })
    }

    proptest! {
        #[test]
        fn any_bytes_read_as_a_struct_or_an_error_never_a_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
            if let Ok((fields, used)) = read_struct(&bytes, |_| false) {
                prop_assert!(used <= bytes.len());
                // What was read writes back to bytes that read as the same fields.
                let mut written = Vec::new();
                write_struct(&fields, &mut written);
                prop_assert_eq!(read_struct(&written, |_| false).unwrap().0, fields);
            }
        }

        #[test]
        fn list_items_kept_as_bytes_are_written_back_as_they_came(fields in prop::collection::vec(field_of(value()), 0..8)) {
            let mut fields = fields;
            fields.sort_by_key(|f| f.id);
            fields.dedup_by_key(|f| f.id);
            let mut written = Vec::new();
            write_struct(&fields, &mut written);
            let (kept, used) = read_struct(&written, |_| true).unwrap();
            prop_assert_eq!(used, written.len());
            let mut again = Vec::new();
            write_struct(&kept, &mut again);
            prop_assert_eq!(again, written);
        }

        #[test]
        fn a_struct_written_reads_back_the_same(fields in prop::collection::vec(field_of(value()), 0..8)) {
            let mut fields = fields;
            fields.sort_by_key(|f| f.id);
            fields.dedup_by_key(|f| f.id);
            let mut written = Vec::new();
            write_struct(&fields, &mut written);
            let (read, used) = read_struct(&written, |_| false).unwrap();
            prop_assert_eq!(used, written.len());
            prop_assert_eq!(read, fields);
        }
    }
}
