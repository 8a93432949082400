//! report.parquet: the report's rows gathered into Arrow columns as they come, the repetitive texts dictionary-encoded on the way, written a row group at a time.
//!
//! polars' DataFrame writer was the report's costliest part: it built every text column as views
//! from a slice of the rows, then, on its own threads, estimated each text column's distinct values
//! and hashed every value again to build its dictionary (10 M rows: about 40 % of the report's CPU).
//! Here a text column keeps its dictionary while the rows come in, a value compared first with the
//! row before it (a lane, a status, a chunk's group id run for many rows), and writes plain when
//! its values turn out mostly distinct (phone numbers, uids). The file's Arrow types are those the
//! DataFrame writer gave: texts are `string_view`, so readers see the same table.

use super::files::COLUMNS;
use super::row::ReportRow;
use crate::api::ledger::BillingClass;
use crate::campaign::Lane;
use crate::input::FieldText;
use anyhow::Result;
use polars::prelude::{PlHashMap, PlSmallStr};
use polars_arrow::array::{Array, BooleanArray, DictionaryArray, MutableBinaryViewArray, PrimitiveArray};
use polars_arrow::datatypes::{ArrowDataType, ArrowSchema, ArrowSchemaRef, Field, IntegerType};
use polars_parquet::write::{
    row_group_iter, CompressionOptions, Encoding, FileWriter, StatisticsOptions, Version, WriteOptions, ZstdLevel,
};

/// Rows of a row group: 153 groups at 10 M rows. Groups of 16 Ki rows made a larger file (more
/// dictionaries) and a slower report.
const ROW_GROUP_ROWS: usize = 64 * 1024;

/// A text column tries a dictionary for this many rows of a group before it judges it.
const DICTIONARY_TRIAL_ROWS: usize = 16 * 1024;

/// The Arrow type of each column of [`COLUMNS`], in order: what polars' DataFrame writer gave them.
fn column_types() -> [ArrowDataType; 18] {
    use ArrowDataType::{Boolean, Int64, UInt32, UInt64, Utf8View};
    [
        UInt64, Utf8View, Utf8View, Utf8View, Utf8View, UInt32, Utf8View, Utf8View, Utf8View, Utf8View, Utf8View,
        Utf8View, Boolean, Utf8View, Utf8View, Int64, Utf8View, Int64,
    ]
}

/// Values a column may also know by a small number (an enum's variant): `kind`, `lane`, the
/// billing classes and `charge_state`, which then find their key without comparing texts.
const SLOTS: usize = 16;

/// A slot not yet given a key.
const NO_KEY: u32 = u32::MAX;

/// A text column of a row group: a dictionary while it is worth one, plain texts once it is not.
struct TextColumn {
    /// The distinct values in order of first appearance, and each one's key.
    values: MutableBinaryViewArray<str>,
    keys_of: PlHashMap<FieldText, u32>,
    /// The key of each slot's value, once it came.
    slot_keys: [u32; SLOTS],
    /// Each row's key while the column is a dictionary.
    keys: Vec<u32>,
    /// Set once the values were found mostly distinct: each row's text.
    plain: Option<MutableBinaryViewArray<str>>,
}

impl TextColumn {
    fn new() -> TextColumn {
        TextColumn {
            values: MutableBinaryViewArray::new(),
            keys_of: PlHashMap::default(),
            slot_keys: [NO_KEY; SLOTS],
            keys: Vec::with_capacity(ROW_GROUP_ROWS),
            plain: None,
        }
    }

    fn push(&mut self, text: &str) {
        if let Some(plain) = &mut self.plain {
            plain.push_value_ignore_validity(text);
            return;
        }
        let key = match self.keys.last() {
            Some(&last) if self.values.value(last as usize) == text => last,
            _ => match self.keys_of.get(text) {
                Some(&key) => key,
                None => {
                    let key = self.values.len() as u32;
                    self.values.push_value_ignore_validity(text);
                    self.keys_of.insert(FieldText::from(text), key);
                    key
                }
            },
        };
        self.push_key(key);
    }

    /// As [`TextColumn::push`], for a value the caller also knows by `slot` (a slot past
    /// [`SLOTS`] is looked up by its text).
    fn push_slot(&mut self, slot: usize, text: &str) {
        match self.slot_keys.get(slot) {
            Some(&key) if key != NO_KEY && self.plain.is_none() => self.push_key(key),
            _ => {
                self.push(text);
                if let (None, Some(&key), Some(slot_key)) =
                    (&self.plain, self.keys.last(), self.slot_keys.get_mut(slot))
                {
                    *slot_key = key;
                }
            }
        }
    }

    fn push_key(&mut self, key: u32) {
        self.keys.push(key);
        // polars' rule: a dictionary is not worth it when more than three values in four differ.
        let rows = self.keys.len();
        if rows == DICTIONARY_TRIAL_ROWS && self.values.len() * 4 > rows * 3 {
            self.go_plain();
        }
    }

    /// The dictionary gathered so far (its values, and each row's key); the column's dictionary
    /// starts again empty.
    fn take_dictionary(&mut self) -> (MutableBinaryViewArray<str>, Vec<u32>) {
        self.keys_of.clear();
        self.slot_keys = [NO_KEY; SLOTS];
        (
            std::mem::replace(&mut self.values, MutableBinaryViewArray::new()),
            std::mem::replace(&mut self.keys, Vec::with_capacity(ROW_GROUP_ROWS)),
        )
    }

    /// Turns the rows gathered so far into plain texts, and keeps on that way for this group.
    fn go_plain(&mut self) {
        let (values, keys) = self.take_dictionary();
        let mut plain = MutableBinaryViewArray::with_capacity(ROW_GROUP_ROWS);
        for key in keys {
            plain.push_value_ignore_validity(values.value(key as usize));
        }
        self.plain = Some(plain);
    }

    /// The group's column and how to encode it; the column starts again empty, as a dictionary.
    fn take(&mut self) -> Result<(Box<dyn Array>, Encoding)> {
        if let Some(plain) = self.plain.take() {
            return Ok((plain.freeze().boxed(), Encoding::Plain));
        }
        let (values, keys) = self.take_dictionary();
        let (values, keys) = (values.freeze(), PrimitiveArray::from_vec(keys));
        let dtype = ArrowDataType::Dictionary(IntegerType::UInt32, Box::new(ArrowDataType::Utf8View), false);
        let column = DictionaryArray::try_new(dtype, keys, values.boxed())?;
        Ok((column.boxed(), Encoding::RleDictionary))
    }
}

/// The columns of the row group being gathered.
struct Columns {
    row: Vec<u64>,
    phone: TextColumn,
    name: TextColumn,
    kind: TextColumn,
    lane: TextColumn,
    chunk: Vec<Option<u32>>,
    uid: TextColumn,
    id: TextColumn,
    send_group_id: TextColumn,
    acceptance: TextColumn,
    final_result: TextColumn,
    error: TextColumn,
    fallback_sent: Vec<bool>,
    billing_class: TextColumn,
    charge_state: TextColumn,
    amount: Vec<Option<i64>>,
    fallback_class: TextColumn,
    fallback_amount: Vec<Option<i64>>,
}

impl Columns {
    fn new() -> Columns {
        Columns {
            row: Vec::with_capacity(ROW_GROUP_ROWS),
            phone: TextColumn::new(),
            name: TextColumn::new(),
            kind: TextColumn::new(),
            lane: TextColumn::new(),
            chunk: Vec::with_capacity(ROW_GROUP_ROWS),
            uid: TextColumn::new(),
            id: TextColumn::new(),
            send_group_id: TextColumn::new(),
            acceptance: TextColumn::new(),
            final_result: TextColumn::new(),
            error: TextColumn::new(),
            fallback_sent: Vec::with_capacity(ROW_GROUP_ROWS),
            billing_class: TextColumn::new(),
            charge_state: TextColumn::new(),
            amount: Vec::with_capacity(ROW_GROUP_ROWS),
            fallback_class: TextColumn::new(),
            fallback_amount: Vec::with_capacity(ROW_GROUP_ROWS),
        }
    }

    fn push(&mut self, row: &ReportRow) {
        // An absent value is slot 0, a variant the slot after its index.
        let class = |class: Option<BillingClass>| {
            (
                class.map_or(0, |class| class as usize + 1),
                class.map_or("", BillingClass::as_str),
            )
        };
        self.row.push(row.row);
        self.phone.push(&row.phone);
        self.name.push(&row.name);
        self.kind.push_slot(row.kind as usize, row.kind.as_str());
        self.lane.push_slot(
            row.lane.map_or(0, |lane| lane as usize + 1),
            row.lane.map_or("", Lane::as_str),
        );
        self.chunk.push(row.chunk);
        self.uid.push(&row.uid);
        self.id.push(&row.id);
        self.send_group_id.push(&row.send_group_id);
        self.acceptance.push(&row.outcome.acceptance());
        self.final_result.push(&row.final_result);
        self.error.push(&row.error);
        self.fallback_sent.push(row.fallback.is_some());
        let (slot, text) = class(row.billing_class);
        self.billing_class.push_slot(slot, text);
        self.charge_state
            .push_slot(row.charge_state as usize, row.charge_state.as_str());
        self.amount.push(row.amount);
        let (slot, text) = class(row.fallback);
        self.fallback_class.push_slot(slot, text);
        self.fallback_amount.push(row.fallback_amount);
    }

    fn len(&self) -> usize {
        self.row.len()
    }

    /// The group's columns in the order of [`COLUMNS`], each with its encoding; the columns start
    /// again empty.
    fn take(&mut self) -> Result<Vec<(Box<dyn Array>, Encoding)>> {
        fn numbers<T: polars_arrow::types::NativeType>(values: &mut Vec<T>) -> (Box<dyn Array>, Encoding) {
            let taken = std::mem::replace(values, Vec::with_capacity(ROW_GROUP_ROWS));
            // polars' writer tries a dictionary from the numbers' range, at little cost.
            (PrimitiveArray::from_vec(taken).boxed(), Encoding::RleDictionary)
        }
        fn optional<T: polars_arrow::types::NativeType>(values: &mut Vec<Option<T>>) -> (Box<dyn Array>, Encoding) {
            let taken = std::mem::replace(values, Vec::with_capacity(ROW_GROUP_ROWS));
            (PrimitiveArray::from(taken).boxed(), Encoding::RleDictionary)
        }
        let flags = std::mem::replace(&mut self.fallback_sent, Vec::with_capacity(ROW_GROUP_ROWS));
        Ok(vec![
            numbers(&mut self.row),
            self.phone.take()?,
            self.name.take()?,
            self.kind.take()?,
            self.lane.take()?,
            optional(&mut self.chunk),
            self.uid.take()?,
            self.id.take()?,
            self.send_group_id.take()?,
            self.acceptance.take()?,
            self.final_result.take()?,
            self.error.take()?,
            (BooleanArray::from_slice(flags).boxed(), Encoding::Plain),
            self.billing_class.take()?,
            self.charge_state.take()?,
            optional(&mut self.amount),
            self.fallback_class.take()?,
            optional(&mut self.fallback_amount),
        ])
    }
}

/// report.parquet, written a row group at a time: the report never holds more than a group.
pub(super) struct ParquetSink {
    writer: FileWriter<std::fs::File>,
    /// The file's schema, which every row group is handed.
    schema: ArrowSchemaRef,
    columns: Columns,
}

impl ParquetSink {
    pub fn create(file: std::fs::File) -> Result<ParquetSink> {
        let schema: ArrowSchema = COLUMNS
            .iter()
            .zip(column_types())
            .map(|(name, dtype)| Field::new(PlSmallStr::from_static(name), dtype, true))
            .collect();
        let options = WriteOptions {
            statistics: StatisticsOptions::default(),
            // Level 1 rather than zstd's default 3: at 10 M rows, zstd went from 4.8 % of the
            // report's CPU samples to 2.7 %, for a file 3.5 % larger.
            compression: CompressionOptions::Zstd(Some(ZstdLevel::try_new(1)?)),
            version: Version::V1,
            data_page_size: None,
        };
        let schema = std::sync::Arc::new(schema);
        Ok(ParquetSink {
            writer: FileWriter::try_new(file, schema.as_ref().clone(), options)?,
            schema,
            columns: Columns::new(),
        })
    }

    pub fn push(&mut self, rows: &[ReportRow]) -> Result<()> {
        for row in rows {
            self.columns.push(row);
            if self.columns.len() == ROW_GROUP_ROWS {
                self.write_group()?;
            }
        }
        Ok(())
    }

    fn write_group(&mut self) -> Result<()> {
        let rows = self.columns.len();
        let (arrays, encodings): (Vec<Box<dyn Array>>, Vec<Encoding>) = self.columns.take()?.into_iter().unzip();
        let group = polars_arrow::record_batch::RecordBatchT::try_new(rows, self.schema.clone(), arrays)?;
        let fields = self.writer.parquet_schema().fields().to_vec();
        let encodings: Vec<Vec<Encoding>> = encodings.into_iter().map(|encoding| vec![encoding]).collect();
        let options = self.writer.options();
        self.writer
            .write(rows as u64, row_group_iter(group, encodings.into(), fields, options))?;
        Ok(())
    }

    pub fn finish(mut self) -> Result<()> {
        if self.columns.len() > 0 {
            self.write_group()?;
        }
        self.writer.end(None)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use polars_arrow::array::Utf8ViewArray;
    use proptest::prelude::*;

    /// The texts a taken column holds, row by row, whichever way it was encoded.
    fn texts(column: &dyn Array) -> Vec<String> {
        if let Some(dictionary) = column.as_any().downcast_ref::<DictionaryArray<u32>>() {
            let values = dictionary
                .values()
                .as_any()
                .downcast_ref::<Utf8ViewArray>()
                .expect("texts");
            dictionary
                .keys_values_iter()
                .map(|key| values.value(key).to_string())
                .collect()
        } else {
            let plain = column.as_any().downcast_ref::<Utf8ViewArray>().expect("texts");
            plain.values_iter().map(str::to_string).collect()
        }
    }

    #[test]
    fn a_repetitive_column_is_a_dictionary_of_its_distinct_values_in_order_of_first_use() {
        let mut column = TextColumn::new();
        let input = ["sms", "sms", "lms", "sms", "", "lms"];
        for text in input {
            column.push(text);
        }
        let (taken, encoding) = column.take().unwrap();
        assert_eq!(encoding, Encoding::RleDictionary);
        let dictionary = taken.as_any().downcast_ref::<DictionaryArray<u32>>().unwrap();
        let values = dictionary.values().as_any().downcast_ref::<Utf8ViewArray>().unwrap();
        assert_eq!(values.values_iter().collect::<Vec<_>>(), ["sms", "lms", ""]);
        assert_eq!(texts(taken.as_ref()), input);
    }

    #[test]
    fn a_column_of_mostly_distinct_values_turns_plain_and_keeps_every_row() {
        let mut column = TextColumn::new();
        let mut input: Vec<String> = (0..DICTIONARY_TRIAL_ROWS + 100)
            .map(|i| format!("010{:08}", i % (DICTIONARY_TRIAL_ROWS - 10)))
            .collect();
        // A value known by its slot, before and after the column turned plain.
        input[0] = "sms".into();
        input[DICTIONARY_TRIAL_ROWS + 50] = "sms".into();
        for text in &input {
            if text == "sms" {
                column.push_slot(2, text);
            } else {
                column.push(text);
            }
        }
        let (taken, encoding) = column.take().unwrap();
        assert_eq!(encoding, Encoding::Plain);
        assert_eq!(texts(taken.as_ref()), input);
        // The next group starts again as a dictionary.
        column.push("a");
        column.push("a");
        assert_eq!(column.take().unwrap().1, Encoding::RleDictionary);
    }

    #[test]
    fn a_report_of_no_rows_is_a_parquet_file_of_the_columns_and_no_rows() {
        use polars::prelude::{ParquetReader, SerReader};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("report.parquet");
        ParquetSink::create(std::fs::File::create(&path).unwrap())
            .unwrap()
            .finish()
            .unwrap();
        let frame = ParquetReader::new(std::fs::File::open(&path).unwrap())
            .finish()
            .unwrap();
        let names: Vec<&str> = frame.get_column_names().into_iter().map(|name| name.as_str()).collect();
        assert_eq!((names, frame.height()), (COLUMNS.to_vec(), 0));
    }

    #[test]
    fn rows_past_a_row_group_are_written_in_groups_and_read_back_in_order() {
        use crate::report::{charged_row, ChargeState, Outcome};
        use polars::prelude::{ParquetReader, SerReader};
        let rows: Vec<ReportRow> = (1..=ROW_GROUP_ROWS as u64 + 10)
            .map(|index| {
                let mut row = charged_row(index, &format!("010{index:08}"), 20);
                if index % 3 == 0 {
                    row.outcome = Outcome::Pending;
                    row.charge_state = ChargeState::NotCharged;
                    row.amount = None;
                    row.lane = None;
                }
                row
            })
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("report.parquet");
        let mut sink = ParquetSink::create(std::fs::File::create(&path).unwrap()).unwrap();
        for batch in rows.chunks(4096) {
            sink.push(batch).unwrap();
        }
        sink.finish().unwrap();

        let mut reader = ParquetReader::new(std::fs::File::open(&path).unwrap());
        assert_eq!(reader.get_metadata().unwrap().row_groups.len(), 2);
        let frame = reader.finish().unwrap();
        let names: Vec<&str> = frame.get_column_names().into_iter().map(|name| name.as_str()).collect();
        assert_eq!(names, COLUMNS);
        assert_eq!(frame.height(), rows.len());
        let texts = |name: &str| -> Vec<String> {
            let column = frame.column(name).unwrap().str().unwrap();
            column.iter().map(|text| text.unwrap_or("<null>").to_string()).collect()
        };
        let expected = |text: fn(&ReportRow) -> String| rows.iter().map(text).collect::<Vec<_>>();
        assert_eq!(texts("phone"), expected(|row| row.phone.to_string()));
        assert_eq!(texts("uid"), expected(|row| row.uid.to_string()));
        assert_eq!(
            texts("acceptance"),
            expected(|row| row.outcome.acceptance().into_owned())
        );
        assert_eq!(
            texts("lane"),
            expected(|row| row.lane.map_or("", Lane::as_str).to_string())
        );
        assert_eq!(
            texts("charge_state"),
            expected(|row| row.charge_state.as_str().to_string())
        );
        let numbers = |name: &str| -> Vec<Option<i64>> {
            let column = frame
                .column(name)
                .unwrap()
                .cast(&polars::prelude::DataType::Int64)
                .unwrap();
            column.i64().unwrap().iter().collect()
        };
        assert_eq!(
            numbers("row"),
            rows.iter().map(|row| Some(row.row as i64)).collect::<Vec<_>>()
        );
        assert_eq!(numbers("amount"), rows.iter().map(|row| row.amount).collect::<Vec<_>>());
    }

    proptest! {
        /// Whatever mix of texts, slots and group lengths, a taken column holds the rows pushed,
        /// in order; a slot always stands for the same text, as it does for an enum's variant.
        #[test]
        fn a_taken_column_holds_the_texts_pushed(
            groups in prop::collection::vec(
                prop::collection::vec((0usize..20, any::<bool>()), 0..3000),
                1..4,
            ),
            distinct in 1usize..5000,
        ) {
            let text_of = |value: usize| format!("v{}", value * 7919 % distinct);
            let mut column = TextColumn::new();
            for group in groups {
                let mut expected = Vec::new();
                for (value, by_slot) in group {
                    let text = text_of(value);
                    if by_slot {
                        column.push_slot(value, &text);
                    } else {
                        column.push(&text);
                    }
                    expected.push(text);
                }
                let (taken, _) = column.take().unwrap();
                prop_assert_eq!(texts(taken.as_ref()), expected);
            }
        }
    }
}
