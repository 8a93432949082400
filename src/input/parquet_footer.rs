//! A Parquet file's footer read here rather than by polars, and handed to polars holding the mapped columns only: a column nobody mapped (VARIANT, GEOMETRY, a logical type from a later format version, an empty group) no longer refuses the file, and the mapped columns' annotations that polars' Arrow types lose (a legacy UTC timestamp, INT96, a half float) are known.
//!
//! polars reads the whole schema before any column and refuses the file at the first annotation
//! it does not know, whichever column carries it. The footer is a Thrift struct (`FileMetaData`):
//! its schema is a depth-first list of elements, and each row group has one column chunk per leaf
//! of that list. Leaving a top-level column out means leaving out its elements, its chunks in
//! every row group and its column orders; what is left is written back and read by polars.

use super::parquet_mend;
use super::thrift_compact::{self, Field, Value};
use polars::prelude::FileMetadata;
use std::collections::BTreeSet;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// The largest footer read: a footer is a few kilobytes to a few megabytes (thousands of columns
/// in hundreds of row groups); a length field beyond this is damage, not a schema.
const MAX_FOOTER_BYTES: u64 = 256 * 1024 * 1024;

/// The footer's bytes (the `FileMetaData` struct), as the file holds them.
pub struct Footer {
    bytes: Vec<u8>,
}

/// Why a file's footer could not be read.
#[derive(Debug)]
pub enum Unread {
    Io(std::io::Error),
    /// The file is not Parquet, or not whole: the message names no file.
    NotParquet(String),
}

/// A top-level column of the file, and what its annotation says about its values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileColumn {
    pub name: String,
    pub annotation: Annotation,
}

/// What a column's Parquet annotation says that the Arrow type polars gives it does not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Annotation {
    /// The Arrow type polars gives the column says what its values are.
    Typed,
    /// INT64 annotated the legacy way only (converted type TIMESTAMP_MILLIS or TIMESTAMP_MICROS,
    /// no logical type), as parquet-mr wrote timestamps before 1.11: a UTC instant by the format's
    /// definition, which polars takes for a time without a zone.
    LegacyUtcTimestamp,
    /// INT96 (Impala, Hive, Spark): the nanoseconds of a day and its Julian day. polars counts it
    /// in 64-bit nanoseconds, which hold only 1677 to 2262: it is read as its 12 bytes instead.
    Int96,
    /// No text can be made of it (a half float, a variant, a geometry, an empty group, a logical
    /// type newer than this reader): the type as the file's writer would name it.
    NoText(String),
}

// Parquet's physical types (`Type`), repetition, and the converted and logical types used here.
const BOOLEAN: i32 = 0;
const INT32: i32 = 1;
const INT64: i32 = 2;
const INT96: i32 = 3;
const FLOAT: i32 = 4;
const DOUBLE: i32 = 5;
const BYTE_ARRAY: i32 = 6;
const FIXED_LEN_BYTE_ARRAY: i32 = 7;
const REPEATED: i32 = 2;
const CONVERTED_UTF8: i32 = 0;
const CONVERTED_LIST: i32 = 3;
const CONVERTED_MAP: i32 = 1;
const CONVERTED_TIMESTAMP_MILLIS: i32 = 9;
const CONVERTED_TIMESTAMP_MICROS: i32 = 10;
const LOGICAL_STRING: i16 = 1;
const LOGICAL_MAP: i16 = 2;
const LOGICAL_LIST: i16 = 3;
const LOGICAL_FLOAT16: i16 = 15;
const LOGICAL_VARIANT: i16 = 16;
const LOGICAL_GEOMETRY: i16 = 17;
const LOGICAL_GEOGRAPHY: i16 = 18;
/// The members of the `LogicalType` union polars 0.55 reads; any other refuses the file there.
const LOGICAL_TYPES_POLARS_READS: [i16; 14] = [1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14, 15];

/// The fields of `FileMetaData`, `SchemaElement` and `RowGroup` used here.
mod id {
    pub const SCHEMA: i16 = 2;
    pub const ROW_GROUPS: i16 = 4;
    pub const COLUMN_ORDERS: i16 = 7;
    pub const TYPE: i16 = 1;
    pub const TYPE_LENGTH: i16 = 2;
    pub const REPETITION: i16 = 3;
    pub const NAME: i16 = 4;
    pub const NUM_CHILDREN: i16 = 5;
    pub const CONVERTED_TYPE: i16 = 6;
    pub const LOGICAL_TYPE: i16 = 10;
    pub const COLUMNS: i16 = 1;
    pub const SORTING_COLUMNS: i16 = 4;
}

impl Footer {
    /// The footer of the Parquet file at `path`.
    pub fn read(path: &Path) -> Result<Footer, Unread> {
        let mut file = File::open(path).map_err(Unread::Io)?;
        let size = file.seek(SeekFrom::End(0)).map_err(Unread::Io)?;
        // "PAR1", the footer, its length and "PAR1".
        if size < 12 {
            return Err(Unread::NotParquet(format!(
                "{size} bytes, too short for a Parquet file"
            )));
        }
        let mut tail = [0u8; 8];
        file.seek(SeekFrom::End(-8)).map_err(Unread::Io)?;
        file.read_exact(&mut tail).map_err(Unread::Io)?;
        match &tail[4..] {
            b"PAR1" => {}
            b"PARE" => {
                return Err(Unread::NotParquet(
                    "its footer is encrypted, which this reader does not read".into(),
                ))
            }
            _ => return Err(Unread::NotParquet("it does not end with PAR1".into())),
        }
        let length = u64::from(u32::from_le_bytes(tail[..4].try_into().expect("4 bytes")));
        if length + 12 > size || length > MAX_FOOTER_BYTES {
            return Err(Unread::NotParquet(format!(
                "its footer's length ({length} bytes) does not fit the file ({size} bytes)"
            )));
        }
        let mut bytes = vec![0u8; length as usize];
        file.seek(SeekFrom::Start(size - 8 - length)).map_err(Unread::Io)?;
        file.read_exact(&mut bytes).map_err(Unread::Io)?;
        Ok(Footer { bytes })
    }

    /// The file's top-level columns, in order.
    pub fn columns(&self) -> Result<Vec<FileColumn>, String> {
        let file = self.parsed()?;
        let elements = schema_elements(&file)?;
        top_level(&elements)?
            .into_iter()
            .map(|column| {
                let top = &elements[column.start];
                Ok(FileColumn {
                    name: String::from_utf8_lossy(binary(top, id::NAME).unwrap_or_default()).into_owned(),
                    annotation: annotation(&elements[column.start..column.end]),
                })
            })
            .collect()
    }

    pub(super) fn from_bytes(bytes: Vec<u8>) -> Footer {
        Footer { bytes }
    }

    pub(super) fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The footer holding the top-level columns `keep` (positions among [`Footer::columns`])
    /// and no other. An INT96 column among them is declared 12 bytes of binary, which its values
    /// are, so that polars hands them over as they are.
    pub fn kept(&self, keep: &[usize]) -> Result<Footer, String> {
        self.keeping(keep).map(Footer::from_bytes)
    }

    /// The footer as polars reads it.
    pub fn into_metadata(self) -> Result<FileMetadata, String> {
        polars_parquet::parquet::read::deserialize_metadata(polars_buffer::Buffer::from(self.bytes))
            .map_err(|e| e.to_string())
    }

    /// The footer's fields, its column chunks kept as their bytes: a wide file in many row groups
    /// has hundreds of thousands of them, each a tree of some thirty values once read.
    fn parsed(&self) -> Result<Vec<Field<'_>>, String> {
        let chunks = [id::ROW_GROUPS, id::COLUMNS];
        thrift_compact::read_struct(&self.bytes, |path| path == chunks)
            .map(|(fields, _)| fields)
            .map_err(|e| e.to_string())
    }

    fn keeping(&self, keep: &[usize]) -> Result<Vec<u8>, String> {
        let keep: BTreeSet<usize> = keep.iter().copied().collect();
        let mut file = self.parsed()?;
        let elements = schema_elements(&file)?;
        let columns = top_level(&elements)?;
        let leaf_count: usize = columns.iter().map(|c| c.leaves).sum();
        let mut kept_leaf = Vec::with_capacity(leaf_count);
        let mut schema = Vec::new();
        let kept_columns = (0..columns.len()).filter(|position| keep.contains(position)).count();
        let mut root = elements[0].to_vec();
        set(&mut root, id::NUM_CHILDREN, Value::I32(kept_columns as i32));
        schema.push(Value::Struct(root));
        for (position, column) in columns.iter().enumerate() {
            let kept = keep.contains(&position);
            kept_leaf.extend(std::iter::repeat_n(kept, column.leaves));
            if !kept {
                continue;
            }
            for (offset, element) in elements[column.start..column.end].iter().enumerate() {
                let mut element = element.to_vec();
                if offset == 0 && annotation(&elements[column.start..column.end]) == Annotation::Int96 {
                    set(&mut element, id::TYPE, Value::I32(FIXED_LEN_BYTE_ARRAY));
                    set(&mut element, id::TYPE_LENGTH, Value::I32(12));
                }
                schema.push(Value::Struct(element));
            }
        }
        let mut orders_unmatched = false;
        for field in file.iter_mut() {
            match (field.id, &mut field.value) {
                (id::SCHEMA, Value::List { items, .. }) => *items = std::mem::take(&mut schema),
                (id::ROW_GROUPS, Value::List { items, .. }) => {
                    for (number, group) in items.iter_mut().enumerate() {
                        let Value::Struct(group) = group else {
                            return Err(format!("row group {} is not a struct", number + 1));
                        };
                        // Sorting columns number the leaves of the whole schema, so after the cut
                        // they would name other columns; polars reads them only to mark a column
                        // sorted, which nothing here asks.
                        group.retain(|f| f.id != id::SORTING_COLUMNS);
                        parquet_mend::mend_row_group(group);
                        let chunks = group.iter_mut().find(|f| f.id == id::COLUMNS);
                        let Some(Field {
                            value: Value::List { items: chunks, .. },
                            ..
                        }) = chunks
                        else {
                            return Err(format!("row group {} has no column chunks", number + 1));
                        };
                        if chunks.len() != leaf_count {
                            return Err(format!(
                                "row group {} has {} column chunks, the schema {leaf_count} leaf columns",
                                number + 1,
                                chunks.len()
                            ));
                        }
                        let mut leaf = kept_leaf.iter();
                        chunks.retain(|_| *leaf.next().expect("as many as the leaves"));
                        for chunk in chunks.iter_mut() {
                            if let Some(mended) = parquet_mend::mended_chunk(chunk) {
                                *chunk = mended;
                            }
                        }
                    }
                }
                (id::COLUMN_ORDERS, Value::List { items, .. }) if items.len() == leaf_count => {
                    let mut leaf = kept_leaf.iter();
                    items.retain(|_| *leaf.next().expect("as many as the leaves"));
                }
                // Column orders that do not match the leaves are left out rather than misassigned.
                (id::COLUMN_ORDERS, _) => orders_unmatched = true,
                _ => {}
            }
        }
        if orders_unmatched {
            file.retain(|f| f.id != id::COLUMN_ORDERS);
        }
        let mut bytes = Vec::with_capacity(self.bytes.len());
        thrift_compact::write_struct(&file, &mut bytes);
        Ok(bytes)
    }
}

/// Where a top-level column's elements are in the schema list, and how many leaves it has.
struct Span {
    start: usize,
    end: usize,
    leaves: usize,
}

fn schema_elements<'f, 'a>(file: &'f [Field<'a>]) -> Result<Vec<&'f [Field<'a>]>, String> {
    let Some(Value::List { items, .. }) = value(file, id::SCHEMA) else {
        return Err("the footer has no schema".into());
    };
    let elements: Vec<_> = items
        .iter()
        .map(|item| match item {
            Value::Struct(fields) => Ok(fields.as_slice()),
            _ => Err("a schema element is not a struct".to_string()),
        })
        .collect::<Result<_, _>>()?;
    if elements.is_empty() {
        return Err("the schema is empty".into());
    }
    Ok(elements)
}

/// The top-level columns' spans: the root's children, each with its descendants.
fn top_level(elements: &[&[Field<'_>]]) -> Result<Vec<Span>, String> {
    let count = children(elements[0]);
    let mut spans = Vec::new();
    let mut at = 1;
    for _ in 0..count {
        let (end, leaves) = subtree(elements, at)?;
        spans.push(Span { start: at, end, leaves });
        at = end;
    }
    if at != elements.len() {
        return Err(format!(
            "the schema has {} elements, its root's columns {}",
            elements.len(),
            at
        ));
    }
    Ok(spans)
}

/// The end of the subtree starting at `start`, and its leaves; walked without recursion, so that
/// a column nested absurdly deep is an error of its own, not a stack overflow.
fn subtree(elements: &[&[Field<'_>]], start: usize) -> Result<(usize, usize), String> {
    let (mut pending, mut at, mut leaves) = (1usize, start, 0usize);
    while pending > 0 {
        let Some(element) = elements.get(at) else {
            return Err("the schema ends inside a group".into());
        };
        pending -= 1;
        match children(element) {
            0 if integer(element, id::TYPE).is_some() => leaves += 1,
            // A group without children (an empty struct) has no leaf and no column chunk.
            0 => {}
            n => pending += n,
        }
        at += 1;
    }
    Ok((at, leaves))
}

fn children(element: &[Field<'_>]) -> usize {
    integer(element, id::NUM_CHILDREN).map_or(0, |n| n.max(0) as usize)
}

/// What a top-level column's annotation says, from its elements (the column's first).
fn annotation(elements: &[&[Field<'_>]]) -> Annotation {
    let unreadable = elements.iter().any(|element| {
        let unknown_logical =
            logical_member(element).is_some_and(|member| !LOGICAL_TYPES_POLARS_READS.contains(&member));
        let empty_group = children(element) == 0 && integer(element, id::TYPE).is_none();
        unknown_logical || empty_group
    });
    let top = elements[0];
    if unreadable || logical_member(top) == Some(LOGICAL_FLOAT16) {
        return Annotation::NoText(describe(elements, 0, 0).0);
    }
    if integer(top, id::REPETITION) == Some(REPEATED) {
        // A list of values: refused as a list, under the type polars gives it.
        return Annotation::Typed;
    }
    match (
        integer(top, id::TYPE),
        integer(top, id::CONVERTED_TYPE),
        logical_member(top),
    ) {
        (Some(INT96), ..) => Annotation::Int96,
        (Some(INT64), Some(CONVERTED_TIMESTAMP_MILLIS | CONVERTED_TIMESTAMP_MICROS), None) => {
            Annotation::LegacyUtcTimestamp
        }
        _ => Annotation::Typed,
    }
}

/// The type of the subtree at `at` as its writer would name it (`variant`, `struct<a: int64>`),
/// and where the next subtree starts.
fn describe(elements: &[&[Field<'_>]], at: usize, depth: usize) -> (String, usize) {
    let Some(element) = elements.get(at) else {
        return ("?".into(), at + 1);
    };
    let named = match logical_member(element) {
        Some(LOGICAL_FLOAT16) => Some("float16".to_string()),
        Some(LOGICAL_VARIANT) => Some("variant".into()),
        Some(LOGICAL_GEOMETRY) => Some("geometry".into()),
        Some(LOGICAL_GEOGRAPHY) => Some("geography".into()),
        Some(member) if !LOGICAL_TYPES_POLARS_READS.contains(&member) => {
            Some(format!("logical type {member}, unknown to this reader"))
        }
        _ => None,
    };
    let end = subtree(elements, at).map_or(elements.len(), |(end, _)| end);
    if let Some(name) = named {
        return (name, end);
    }
    let count = children(element);
    let Some(physical) = integer(element, id::TYPE).filter(|_| count == 0) else {
        let group = match (logical_member(element), integer(element, id::CONVERTED_TYPE)) {
            (Some(LOGICAL_LIST), _) | (_, Some(CONVERTED_LIST)) => "list",
            (Some(LOGICAL_MAP), _) | (_, Some(CONVERTED_MAP)) => "map",
            _ => "struct",
        };
        if depth >= 8 {
            return (format!("{group}<…>"), end);
        }
        let mut inner = Vec::new();
        let mut next = at + 1;
        for _ in 0..count {
            if next >= end {
                break;
            }
            let name = String::from_utf8_lossy(binary(elements[next], id::NAME).unwrap_or_default()).into_owned();
            let (type_name, after) = describe(elements, next, depth + 1);
            inner.push(format!("{name}: {type_name}"));
            next = after;
        }
        return (format!("{group}<{}>", inner.join(", ")), end);
    };
    let text =
        logical_member(element) == Some(LOGICAL_STRING) || integer(element, id::CONVERTED_TYPE) == Some(CONVERTED_UTF8);
    let name = match physical {
        _ if text => "string".to_string(),
        BOOLEAN => "boolean".into(),
        INT32 => "int32".into(),
        INT64 => "int64".into(),
        INT96 => "int96".into(),
        FLOAT => "float".into(),
        DOUBLE => "double".into(),
        BYTE_ARRAY => "binary".into(),
        FIXED_LEN_BYTE_ARRAY => format!(
            "fixed_len_byte_array({})",
            integer(element, id::TYPE_LENGTH).unwrap_or(0)
        ),
        other => format!("physical type {other}"),
    };
    (name, end)
}

pub(super) fn value<'f, 'a>(fields: &'f [Field<'a>], field_id: i16) -> Option<&'f Value<'a>> {
    fields.iter().find(|f| f.id == field_id).map(|f| &f.value)
}

fn integer(fields: &[Field<'_>], field_id: i16) -> Option<i32> {
    match value(fields, field_id)? {
        Value::I32(n) => Some(*n),
        _ => None,
    }
}

fn binary<'a>(fields: &[Field<'a>], field_id: i16) -> Option<&'a [u8]> {
    match value(fields, field_id)? {
        Value::Binary(bytes) => Some(bytes),
        _ => None,
    }
}

/// Which member of the `LogicalType` union annotates an element, if one does.
fn logical_member(element: &[Field<'_>]) -> Option<i16> {
    match value(element, id::LOGICAL_TYPE)? {
        Value::Struct(members) => members.first().map(|m| m.id),
        _ => None,
    }
}

/// Sets field `field_id` of a struct to `new`, keeping the fields in the order of their ids.
pub(super) fn set<'a>(fields: &mut Vec<Field<'a>>, field_id: i16, new: Value<'a>) {
    match fields.iter_mut().find(|f| f.id == field_id) {
        Some(field) => field.value = new,
        None => {
            let at = fields.iter().position(|f| f.id > field_id).unwrap_or(fields.len());
            fields.insert(
                at,
                Field {
                    id: field_id,
                    value: new,
                },
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn element(name: &'static str, fields: Vec<(i16, Value<'static>)>) -> Vec<Field<'static>> {
        let mut all = vec![Field {
            id: id::NAME,
            value: Value::Binary(name.as_bytes()),
        }];
        all.extend(fields.into_iter().map(|(id, value)| Field { id, value }));
        all.sort_by_key(|f| f.id);
        all
    }

    fn union(member: i16) -> Value<'static> {
        Value::Struct(vec![Field {
            id: member,
            value: Value::Struct(Vec::new()),
        }])
    }

    #[test]
    fn annotations_are_read_from_the_elements_of_a_column() {
        let items = [
            element("schema", vec![(id::NUM_CHILDREN, Value::I32(6))]),
            element(
                "legacy",
                vec![(id::TYPE, Value::I32(INT64)), (id::CONVERTED_TYPE, Value::I32(9))],
            ),
            element(
                "modern",
                vec![
                    (id::TYPE, Value::I32(INT64)),
                    (id::CONVERTED_TYPE, Value::I32(9)),
                    (id::LOGICAL_TYPE, union(8)),
                ],
            ),
            element("spark", vec![(id::TYPE, Value::I32(INT96))]),
            element(
                "half",
                vec![
                    (id::TYPE, Value::I32(FIXED_LEN_BYTE_ARRAY)),
                    (id::TYPE_LENGTH, Value::I32(2)),
                    (id::LOGICAL_TYPE, union(LOGICAL_FLOAT16)),
                ],
            ),
            element("wrapper", vec![(id::NUM_CHILDREN, Value::I32(2))]),
            element(
                "name",
                vec![(id::TYPE, Value::I32(6)), (id::CONVERTED_TYPE, Value::I32(0))],
            ),
            element("shape", vec![(id::TYPE, Value::I32(6)), (id::LOGICAL_TYPE, union(17))]),
            element("nothing", vec![(id::NUM_CHILDREN, Value::I32(0))]),
        ];
        let elements: Vec<_> = items.iter().map(Vec::as_slice).collect();
        let spans = top_level(&elements).unwrap();
        let annotations: Vec<_> = spans.iter().map(|s| annotation(&elements[s.start..s.end])).collect();
        assert_eq!(
            annotations,
            [
                Annotation::LegacyUtcTimestamp,
                Annotation::Typed,
                Annotation::Int96,
                Annotation::NoText("float16".into()),
                Annotation::NoText("struct<name: string, shape: geometry>".into()),
                Annotation::NoText("struct<>".into()),
            ]
        );
        assert_eq!(spans.iter().map(|s| s.leaves).collect::<Vec<_>>(), [1, 1, 1, 1, 2, 0]);
    }

    #[test]
    fn a_schema_whose_groups_claim_more_elements_than_it_has_is_an_error() {
        let items = [
            element("schema", vec![(id::NUM_CHILDREN, Value::I32(1))]),
            element("group", vec![(id::NUM_CHILDREN, Value::I32(i32::MAX))]),
            element("leaf", vec![(id::TYPE, Value::I32(1))]),
        ];
        let elements: Vec<_> = items.iter().map(Vec::as_slice).collect();
        assert_eq!(top_level(&elements).err().unwrap(), "the schema ends inside a group");
    }
}
