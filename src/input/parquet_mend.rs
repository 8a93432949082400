//! Footer fields that polars would misread, mended before it reads them: an optional field of a row group, a column chunk or its metadata written with another type than the format declares (polars reads such a field as the declared type and loses its place in the footer), and a `dictionary_page_offset` of 0 (old parquet-mr), which polars takes for where the column chunk starts.
//!
//! Readers that skip a field of an unexpected type (Thrift's generated C++, so pyarrow) read these
//! files; leaving the field out is what they do. A required field of the wrong type is left as it
//! is: polars then refuses the file, as it should.

use super::thrift_compact::{self, kind, Field, Value};

/// The optional fields of a `RowGroup` that polars reads or skips by their id alone, and the type
/// the format declares for each (`file_offset`, `total_compressed_size`, `ordinal`).
const ROW_GROUP: [(i16, u8); 3] = [(5, kind::I64), (6, kind::I64), (7, kind::I16)];
/// The same for a `ColumnChunk`: `file_path`, `file_offset`, and where its indexes are.
const COLUMN_CHUNK: [(i16, u8); 6] = [
    (1, kind::BINARY),
    (2, kind::I64),
    (4, kind::I64),
    (5, kind::I32),
    (6, kind::I64),
    (7, kind::I32),
];
/// The same for a `ColumnMetaData`: index and dictionary page offsets, statistics, bloom filter.
const COLUMN_META_DATA: [(i16, u8); 5] = [
    (10, kind::I64),
    (11, kind::I64),
    (12, kind::STRUCT),
    (14, kind::I64),
    (15, kind::I32),
];
/// The same for `Statistics`: `max`, `min`, the counts, `max_value`, `min_value`, exactness.
const STATISTICS: [(i16, u8); 8] = [
    (1, kind::BINARY),
    (2, kind::BINARY),
    (3, kind::I64),
    (4, kind::I64),
    (5, kind::BINARY),
    (6, kind::BINARY),
    (7, kind::TRUE),
    (8, kind::TRUE),
];
const CHUNK_META_DATA: i16 = 3;
const DICTIONARY_PAGE_OFFSET: i16 = 11;
const STATISTICS_FIELD: i16 = 12;
/// A file starts with the 4 bytes `PAR1`: no page starts before them.
const FIRST_PAGE_OFFSET: i64 = 4;

/// Leaves out of a row group's own fields those of another type than the format's.
pub fn mend_row_group(group: &mut Vec<Field<'_>>) {
    drop_mistyped(group, &ROW_GROUP);
}

/// A column chunk as polars can read it, or `None` when it needs no mending (it is then kept as
/// its bytes). A chunk that is not a readable struct is left for polars to refuse.
pub fn mended_chunk<'a>(chunk: &Value<'a>) -> Option<Value<'a>> {
    let mut fields = match chunk {
        Value::Encoded {
            kind: kind::STRUCT,
            bytes,
        } => thrift_compact::read_struct(bytes, |_| false).ok()?.0,
        Value::Struct(fields) => fields.clone(),
        _ => return None,
    };
    mend_chunk(&mut fields).then_some(Value::Struct(fields))
}

/// Mends a column chunk's fields; answers whether anything changed.
fn mend_chunk(chunk: &mut Vec<Field<'_>>) -> bool {
    let mut changed = drop_mistyped(chunk, &COLUMN_CHUNK);
    let meta_data = chunk.iter_mut().find(|f| f.id == CHUNK_META_DATA);
    if let Some(Field {
        value: Value::Struct(meta_data),
        ..
    }) = meta_data
    {
        changed |= drop_mistyped(meta_data, &COLUMN_META_DATA);
        // parquet-mr before 1.11 could write 0 for "no dictionary page" (PARQUET-1850); the
        // chunk's pages, a dictionary page among them, start at its data page offset.
        let before = meta_data.len();
        meta_data
            .retain(|f| !(f.id == DICTIONARY_PAGE_OFFSET && matches!(f.value, Value::I64(n) if n < FIRST_PAGE_OFFSET)));
        changed |= meta_data.len() != before;
        let misread_statistics = meta_data.iter().any(|f| match &f.value {
            Value::Struct(statistics) if f.id == STATISTICS_FIELD => {
                drop_mistyped(&mut statistics.clone(), &STATISTICS)
            }
            _ => false,
        });
        if misread_statistics {
            // Statistics polars would misread are statistics nobody here needs.
            meta_data.retain(|f| f.id != STATISTICS_FIELD);
            changed = true;
        }
    }
    changed
}

/// Leaves out the fields named in `declared` whose value is of another type; answers whether any was.
fn drop_mistyped(fields: &mut Vec<Field<'_>>, declared: &[(i16, u8)]) -> bool {
    let before = fields.len();
    fields.retain(|field| {
        declared
            .iter()
            .find(|(id, _)| *id == field.id)
            .is_none_or(|&(_, wanted)| is_of(&field.value, wanted))
    });
    fields.len() != before
}

fn is_of(value: &Value<'_>, wanted: u8) -> bool {
    match value {
        Value::Bool(_) => wanted == kind::TRUE,
        Value::I8(_) => wanted == kind::I8,
        Value::I16(_) => wanted == kind::I16,
        Value::I32(_) => wanted == kind::I32,
        Value::I64(_) => wanted == kind::I64,
        Value::Double(_) => wanted == kind::DOUBLE,
        Value::Binary(_) => wanted == kind::BINARY,
        Value::Uuid(_) => wanted == kind::UUID,
        Value::List { set, .. } => wanted == if *set { kind::SET } else { kind::LIST },
        Value::Map { .. } => wanted == kind::MAP,
        Value::Struct(_) => wanted == kind::STRUCT,
        Value::Encoded { kind, .. } => *kind == wanted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn field(id: i16, value: Value<'static>) -> Field<'static> {
        Field { id, value }
    }

    fn chunk_with(meta_data: Vec<Field<'static>>) -> Vec<Field<'static>> {
        vec![field(2, Value::I64(4)), field(3, Value::Struct(meta_data))]
    }

    #[test]
    fn a_bloom_filter_length_written_as_a_list_is_left_out_and_the_rest_kept() {
        let list = Value::List {
            set: false,
            element: kind::STRUCT,
            items: vec![Value::Struct(Vec::new())],
        };
        let meta_data = vec![
            field(4, Value::I32(1)),
            field(9, Value::I64(4)),
            field(
                13,
                Value::List {
                    set: false,
                    element: kind::STRUCT,
                    items: Vec::new(),
                },
            ),
            field(15, list),
        ];
        let mut chunk = chunk_with(meta_data.clone());
        assert!(mend_chunk(&mut chunk));
        assert_eq!(chunk, chunk_with(meta_data[..3].to_vec()));
    }

    #[test]
    fn a_dictionary_page_offset_of_zero_is_left_out_and_a_real_one_kept() {
        let zero = vec![field(9, Value::I64(4)), field(11, Value::I64(0))];
        let mut chunk = chunk_with(zero.clone());
        assert!(mend_chunk(&mut chunk));
        assert_eq!(chunk, chunk_with(zero[..1].to_vec()));
        let real = vec![field(9, Value::I64(40)), field(11, Value::I64(4))];
        let mut chunk = chunk_with(real.clone());
        assert!(!mend_chunk(&mut chunk));
        assert_eq!(chunk, chunk_with(real));
    }

    #[test]
    fn a_chunk_kept_as_bytes_is_read_mended_and_untouched_when_sound() {
        let mut bytes = Vec::new();
        thrift_compact::write_struct(&chunk_with(vec![field(11, Value::I64(0))]), &mut bytes);
        let encoded = Value::Encoded {
            kind: kind::STRUCT,
            bytes: &bytes,
        };
        assert_eq!(mended_chunk(&encoded), Some(Value::Struct(chunk_with(Vec::new()))));
        let mut sound = Vec::new();
        thrift_compact::write_struct(&chunk_with(vec![field(11, Value::I64(4))]), &mut sound);
        let encoded = Value::Encoded {
            kind: kind::STRUCT,
            bytes: &sound,
        };
        assert_eq!(mended_chunk(&encoded), None);
    }

    fn any_value() -> impl Strategy<Value = Value<'static>> {
        prop_oneof![
            any::<bool>().prop_map(Value::Bool),
            any::<i16>().prop_map(Value::I16),
            any::<i32>().prop_map(Value::I32),
            any::<i64>().prop_map(Value::I64),
            Just(Value::Binary(b"x")),
            Just(Value::Struct(Vec::new())),
            Just(Value::List {
                set: false,
                element: kind::I32,
                items: vec![Value::I32(1)],
            }),
        ]
    }

    fn any_fields() -> impl Strategy<Value = Vec<Field<'static>>> {
        prop::collection::btree_map(1i16..18, any_value(), 0..12)
            .prop_map(|fields| fields.into_iter().map(|(id, value)| field(id, value)).collect())
    }

    proptest! {
        #[test]
        fn mending_keeps_every_sound_field_in_order_and_no_mistyped_one(
            chunk in any_fields(),
            meta_data in any_fields(),
            statistics in any_fields(),
        ) {
            let mut meta_data = meta_data;
            meta_data.retain(|f| f.id != STATISTICS_FIELD);
            meta_data.push(field(STATISTICS_FIELD, Value::Struct(statistics.clone())));
            meta_data.sort_by_key(|f| f.id);
            let mut fields = chunk;
            fields.retain(|f| f.id != CHUNK_META_DATA);
            fields.push(field(CHUNK_META_DATA, Value::Struct(meta_data.clone())));
            fields.sort_by_key(|f| f.id);
            let before = fields.clone();
            let changed = mend_chunk(&mut fields);
            prop_assert_eq!(changed, fields != before);
            let sound = |fields: &[Field<'_>], declared: &[(i16, u8)]| {
                fields.iter().all(|f| declared.iter().all(|&(id, k)| id != f.id || is_of(&f.value, k)))
            };
            prop_assert!(sound(&fields, &COLUMN_CHUNK));
            // What is kept is the input without some of its fields, in the same order.
            let mut kept = fields.iter();
            let mut next = kept.next();
            for original in &before {
                if next.is_some_and(|f| f.id == original.id) {
                    next = kept.next();
                }
            }
            prop_assert!(next.is_none());
            let Some(Field { value: Value::Struct(meta), .. }) = fields.iter().find(|f| f.id == CHUNK_META_DATA) else {
                return Err(TestCaseError::fail("the metadata is kept"));
            };
            prop_assert!(sound(meta, &COLUMN_META_DATA));
            prop_assert!(!meta.iter().any(|f| f.id == DICTIONARY_PAGE_OFFSET && matches!(f.value, Value::I64(n) if n < FIRST_PAGE_OFFSET)));
            if let Some(Field { value: Value::Struct(kept_statistics), .. }) = meta.iter().find(|f| f.id == STATISTICS_FIELD) {
                prop_assert!(sound(kept_statistics, &STATISTICS));
                prop_assert_eq!(kept_statistics, &statistics);
            }
        }

        #[test]
        fn any_bytes_as_a_chunk_are_mended_or_left_never_a_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
            let encoded = Value::Encoded { kind: kind::STRUCT, bytes: &bytes };
            if let Some(Value::Struct(fields)) = mended_chunk(&encoded) {
                let mut again = fields.clone();
                prop_assert!(!mend_chunk(&mut again), "mending twice changes nothing more");
            }
        }
    }
}
