//! Parquet recipients through polars, decoded a row group at a time and made into rows a piece at a time, on every core when the caller asks; every value becomes text (see `parquet_types`).
//!
//! Only the mapped columns are read, schema included: the footer is read here and handed to
//! polars holding those columns alone (`parquet_footer`), so a column nobody mapped cannot refuse
//! the file, whatever its type. The mapped columns' types are checked before any row is read: a
//! column with no text (a struct, a list, a half float, a variant…) refuses the file naming the
//! column and its type. A file polars cannot parse (truncated, corrupt) is refused naming the
//! file, also when polars panics on it.

use super::parquet_footer::{Annotation, FileColumn, Footer, Unread};
use super::parquet_gzip;
use super::parquet_types::{self, ColumnReading};
use super::{locate, ordered, record_row, ColumnSpec, InputError, RawRow, RowSource, Unreadable};
use polars::prelude::*;
use std::collections::VecDeque;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::mpsc::sync_channel;
use std::sync::Arc;

/// The most rows decoded at once. Decoding a slice of a row group costs more than its share of
/// decoding the group whole, but a decoded range stays in memory while its pieces are made into
/// rows, beside the next one: measured on 10 M realistic rows in row groups of 1 Mi, 4.1 s and
/// 294 MB peak decoding whole groups, 4.4 s and 210 MB at 512 Ki, 4.7 s and 163 MB at 256 Ki.
const MAX_DECODED_ROWS: usize = 256 * 1024;
/// Rows made at once from a decoded row group: a piece of work for one core.
const PIECE_ROWS: usize = 16 * 1024;

pub struct ParquetRows {
    decoder: Decoder,
    /// Row ranges still to decode: (offset, length), aligned to row groups.
    slices: VecDeque<(usize, usize)>,
    cursor: Cursor,
    /// Rows a worker makes at once (`PIECE_ROWS`; smaller in tests).
    piece_rows: usize,
}

/// Where the cutting of decoded ranges into pieces stands.
struct Cursor {
    /// The range decoded last: its rows, its offset, and how many were cut into pieces already.
    decoded: Option<(DataFrame, usize, usize)>,
}

/// What decoding a range of the file and making its rows takes: shared by the threads that do.
struct Decoder {
    path: PathBuf,
    /// The copy read instead of `path` when a GZIP page had to be mended (`parquet_gzip`);
    /// removed when the reading ends.
    copy: Option<tempfile::NamedTempFile>,
    /// The footer of the mapped columns only, their Arrow types in its ARROW:schema.
    metadata: FileMetadataRef,
    columns: Vec<String>,
    /// How each of `columns` becomes text.
    readings: Vec<ColumnReading>,
    has_name: bool,
}

/// A piece of a decoded range: its rows start at file row `first_row`.
struct Piece {
    frame: DataFrame,
    first_row: u64,
}

/// Runs a polars call, turning its error, or its panic, into a refusal naming the file.
fn guarded<T>(path: &Path, call: impl FnOnce() -> PolarsResult<T>) -> Result<T, InputError> {
    let refusal = |message: String| InputError::Parquet {
        path: path.to_path_buf(),
        message,
    };
    let call = || {
        crate::failpoint::reached("parquet-reader");
        call()
    };
    match crate::contained::catch(call) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(refusal(error.to_string())),
        Err(panic) => Err(refusal(panic)),
    }
}

impl ParquetRows {
    pub fn open(path: &Path, columns: &ColumnSpec) -> Result<ParquetRows, InputError> {
        ParquetRows::open_sized(path, columns, MAX_DECODED_ROWS, PIECE_ROWS)
    }

    fn open_sized(
        path: &Path,
        columns: &ColumnSpec,
        max_decoded_rows: usize,
        piece_rows: usize,
    ) -> Result<ParquetRows, InputError> {
        let refusal = |message: String| InputError::Parquet {
            path: path.to_path_buf(),
            message,
        };
        let footer = Footer::read(path).map_err(|unread| match unread {
            Unread::Io(source) => InputError::Open {
                path: path.to_path_buf(),
                source,
            },
            Unread::NotParquet(message) => refusal(message),
        })?;
        let file_columns = footer.columns().map_err(refusal)?;
        let headers: Vec<String> = file_columns.iter().map(|c| c.name.clone()).collect();
        let (phone, name, vars) = locate(path, &headers, columns)?;
        // In spec order; the names as the file spells them (`locate` matches them trimmed).
        let positions: Vec<usize> = std::iter::once(phone).chain(name).chain(vars).collect();
        let mapped: Vec<&FileColumn> = positions.iter().map(|&index| &file_columns[index]).collect();
        let unsupported = |column: &FileColumn, type_name: String| InputError::UnsupportedType {
            path: path.to_path_buf(),
            column: column.name.clone(),
            type_name,
        };
        for column in &mapped {
            if let Annotation::NoText(type_name) = &column.annotation {
                return Err(unsupported(column, type_name.clone()));
            }
        }
        let kept = footer.kept(&positions).map_err(refusal)?;
        let (copy, kept) = match parquet_gzip::mended_copy(path, &kept).map_err(refusal)? {
            Some((copy, mended)) => (Some(copy), mended),
            None => (None, kept),
        };
        let mut metadata = guarded(path, || {
            kept.into_metadata()
                .map_err(|message| polars_err!(ComputeError: "{message}"))
        })?;
        // The Arrow types the mapped columns are read as: the file's (its ARROW:schema's when it
        // has one), with what their Parquet annotation says and polars' type does not.
        let file_schema = guarded(path, || polars_parquet::read::infer_schema(&metadata))?;
        let mut schema = ArrowSchema::default();
        let mut readings = Vec::with_capacity(mapped.len());
        for column in &mapped {
            let Some(field) = file_schema.get(column.name.as_str()) else {
                return Err(refusal(format!(
                    "the Arrow schema it declares has no column {:?}",
                    column.name
                )));
            };
            let mut field = field.clone();
            let reading = match column.annotation {
                Annotation::Int96 => {
                    field.dtype = ArrowDataType::FixedSizeBinary(12);
                    ColumnReading::Int96Timestamp
                }
                Annotation::LegacyUtcTimestamp => {
                    if let ArrowDataType::Timestamp(_, zone @ None) = &mut field.dtype {
                        *zone = Some("+00:00".into());
                    }
                    ColumnReading::Typed
                }
                Annotation::Typed | Annotation::NoText(_) => ColumnReading::Typed,
            };
            if !parquet_types::readable(&field.dtype) {
                return Err(unsupported(column, parquet_types::type_name(&field.dtype)));
            }
            schema.insert(field.name.clone(), field);
            readings.push(reading);
        }
        // polars reads a file's Arrow types from its ARROW:schema: these are the ones it is to use.
        metadata.key_value_metadata = Some(vec![polars_parquet::write::schema_to_metadata_key(&schema)]);
        let wanted: Vec<String> = mapped.iter().map(|c| c.name.clone()).collect();
        let metadata: FileMetadataRef = Arc::new(metadata);
        let mut slices = VecDeque::new();
        let mut offset = 0usize;
        for group in &metadata.row_groups {
            let mut left = group.num_rows();
            while left > 0 {
                let length = left.min(max_decoded_rows);
                slices.push_back((offset, length));
                offset += length;
                left -= length;
            }
        }
        Ok(ParquetRows {
            decoder: Decoder {
                path: path.to_path_buf(),
                copy,
                metadata,
                columns: wanted,
                readings,
                has_name: columns.name.is_some(),
            },
            slices,
            cursor: Cursor { decoded: None },
            piece_rows,
        })
    }

    /// Reads every row, each piece made into rows by one worker thread per core (with
    /// `with_each` run on them there), while one thread decodes the next range ahead and this
    /// thread cuts the decoded ranges into pieces; hands each piece's rows and what `with_each`
    /// made of them to `deliver` in file order, until it answers false.
    pub fn read_parallel<D: Send>(
        &mut self,
        with_each: impl Fn(&[RawRow]) -> D + Sync,
        mut deliver: impl FnMut(Vec<RawRow>, D) -> bool,
    ) -> Result<(), InputError> {
        let ParquetRows {
            decoder,
            slices,
            cursor,
            piece_rows,
        } = self;
        let (decoder, piece_rows) = (&*decoder, *piece_rows);
        let slices = std::mem::take(slices);
        std::thread::scope(|scope| {
            // The next range is decoded while this one is cut into pieces and made into rows,
            // and waits in the decoding thread until it is asked for: decoding no longer stops
            // the workers at every range, and no more than two ranges are held at once.
            type Range = Result<Option<(DataFrame, usize)>, InputError>;
            let (ahead, decoded) = sync_channel::<Range>(0);
            scope.spawn(move || {
                for (offset, length) in slices {
                    let range = decoder.decode(offset, length).map(|frame| Some((frame, offset)));
                    let failed = range.is_err();
                    if ahead.send(range).is_err() || failed {
                        return;
                    }
                }
                // The end is said, not inferred from the thread's going: a thread that stopped
                // without saying so is an error, never the end of the file.
                let _ = ahead.send(Ok(None));
            });
            let stopped = || InputError::Parquet {
                path: decoder.path.clone(),
                message: "the decoding thread stopped".into(),
            };
            // Moved into `next_job`, so that when the reading stops early the decoding thread's
            // next hand-off fails and it ends.
            ordered::in_order(
                cursor,
                move |cursor| cursor.next_piece(piece_rows, || decoded.recv().unwrap_or_else(|_| Err(stopped()))),
                |piece: Piece| {
                    decoder.rows(&piece).map(|rows| {
                        let made = with_each(&rows);
                        (rows, made)
                    })
                },
                |_, made| {
                    let (rows, made) = made?;
                    Ok(rows.is_empty() || deliver(rows, made))
                },
            )
        })
    }
}

impl Cursor {
    /// The next piece of at most `max` rows, taking the next decoded range and its offset from
    /// `next_range` when the last one is cut up.
    fn next_piece(
        &mut self,
        max: usize,
        mut next_range: impl FnMut() -> Result<Option<(DataFrame, usize)>, InputError>,
    ) -> Result<Option<Piece>, InputError> {
        loop {
            if let Some((frame, offset, cut)) = &mut self.decoded {
                if *cut < frame.height() {
                    let length = max.min(frame.height() - *cut);
                    let piece = Piece {
                        frame: frame.slice(*cut as i64, length),
                        first_row: record_row((*offset + *cut) as u64),
                    };
                    *cut += length;
                    return Ok(Some(piece));
                }
            }
            self.decoded = None;
            let Some((frame, offset)) = next_range()? else {
                return Ok(None);
            };
            self.decoded = Some((frame, offset, 0));
        }
    }
}

impl Decoder {
    /// The mapped columns of `length` rows from row `offset` (0-based), decoded.
    fn decode(&self, offset: usize, length: usize) -> Result<DataFrame, InputError> {
        let read_from = self.copy.as_ref().map_or(self.path.as_path(), |copy| copy.path());
        let file = File::open(read_from).map_err(|source| InputError::Open {
            path: self.path.clone(),
            source,
        })?;
        guarded(&self.path, || {
            let mut reader = ParquetReader::new(file)
                .with_columns(Some(self.columns.clone()))
                .with_slice(Some((offset, length)))
                .read_parallel(ParallelStrategy::None);
            reader.set_metadata(self.metadata.clone());
            let frame = reader.finish()?;
            if frame.height() != length {
                polars_bail!(ComputeError: "row group at row {} has {} rows, its metadata says {length}", offset + 1, frame.height());
            }
            Ok(frame)
        })
    }

    /// The rows of a piece, every value as text, filled a column at a time.
    fn rows(&self, piece: &Piece) -> Result<Vec<RawRow>, InputError> {
        let named = usize::from(self.has_name);
        let vars = self.columns.len() - 1 - named;
        let mut rows: Vec<RawRow> = (0..piece.frame.height())
            .map(|index| RawRow {
                row: piece.first_row + index as u64,
                phone: None,
                name: None,
                vars: std::iter::repeat_n(None, vars).collect(),
                unreadable: None,
            })
            .collect();
        guarded(&self.path, || {
            for (position, (name, reading)) in self.columns.iter().zip(&self.readings).enumerate() {
                parquet_types::each_text(piece.frame.column(name)?, *reading, |index, cell| {
                    let row = &mut rows[index];
                    // Columns go in order, so a row's first unreadable value is the one it names.
                    let value = cell.unwrap_or_else(|problem| {
                        row.unreadable.get_or_insert_with(|| {
                            Box::new(Unreadable::NotText {
                                column: name.clone(),
                                detail: problem.to_string(),
                            })
                        });
                        None
                    });
                    match position {
                        0 => row.phone = value,
                        1 if named == 1 => row.name = value,
                        _ => row.vars[position - 1 - named] = value,
                    }
                })?;
            }
            Ok(())
        })?;
        Ok(rows)
    }
}

impl RowSource for ParquetRows {
    fn next_batch(&mut self, max: usize) -> Result<Option<Vec<RawRow>>, InputError> {
        let (decoder, slices) = (&self.decoder, &mut self.slices);
        let piece = self.cursor.next_piece(max.max(1), || {
            slices
                .pop_front()
                .map(|(offset, length)| Ok((decoder.decode(offset, length)?, offset)))
                .transpose()
        })?;
        match piece {
            None => Ok(None),
            Some(piece) => self.decoder.rows(&piece).map(Some),
        }
    }

    fn in_parallel(&mut self) -> Option<super::Parallel<'_>> {
        Some(super::Parallel::Parquet(self))
    }

    fn encoding(&self) -> &'static str {
        "parquet"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `frame` written as a Parquet file in a fresh directory, in row groups of `row_group` rows.
    fn written(mut frame: DataFrame, row_group: Option<usize>) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.parquet");
        ParquetWriter::new(File::create(&path).unwrap())
            .with_row_group_size(row_group)
            .finish(&mut frame)
            .unwrap();
        (dir, path)
    }

    fn spec() -> ColumnSpec {
        ColumnSpec {
            phone: "phone".into(),
            name: Some("name".into()),
            vars: vec!["order".into()],
        }
    }

    #[test]
    fn integer_phones_and_row_numbers_survive() {
        let frame = df!(
            "phone" => &[1012345678i64, 1000000001],
            "name" => &["김", "이"],
            "order" => &[Some("A"), None],
        )
        .unwrap();
        let (_dir, path) = written(frame, None);
        let mut rows = ParquetRows::open(&path, &spec()).unwrap();
        let batch = rows.next_batch(10).unwrap().unwrap();
        assert_eq!(batch.len(), 2);
        assert_eq!(batch[0].phone.as_deref(), Some("1012345678"));
        // Numbered as under a header row: the second record is row 3.
        assert_eq!((batch[0].row, batch[1].row), (2, 3));
        assert_eq!(batch[1].vars.as_slice(), [None]);
        assert!(rows.next_batch(10).unwrap().is_none());
    }

    #[test]
    fn a_row_with_several_unreadable_values_names_the_first_mapped_column_and_keeps_the_others() {
        let frame = df!(
            "order" => &["bad\0order", "A2"],
            "name" => &["bad\0name", "이"],
            "phone" => &["01012345678", "01000000001"],
        )
        .unwrap();
        let (_dir, path) = written(frame, None);
        let batch = ParquetRows::open(&path, &spec())
            .unwrap()
            .next_batch(10)
            .unwrap()
            .unwrap();
        match batch[0].unreadable.as_deref() {
            Some(Unreadable::NotText { column, detail }) => {
                assert_eq!((column.as_str(), detail.as_str()), ("name", "contains a NUL byte"))
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(batch[0].phone.as_deref(), Some("01012345678"));
        assert_eq!(
            (batch[0].name.as_deref(), batch[0].vars.as_slice()),
            (None, [None].as_slice())
        );
        assert_eq!(batch[1].unreadable, None);
        assert_eq!(batch[1].vars.as_slice(), [Some("A2".into())]);
    }

    #[test]
    fn read_on_every_core_the_rows_are_those_read_a_batch_at_a_time_numbered_alike() {
        let count = 1000usize;
        let frame = df!(
            "phone" => (0..count).map(|i| format!("010{i:08}")).collect::<Vec<_>>(),
            "name" => (0..count).map(|i| format!("이름{i}")).collect::<Vec<_>>(),
            "order" => (0..count).map(|i| (i % 7 != 0).then(|| format!("A{i}"))).collect::<Vec<_>>(),
        )
        .unwrap();
        let (_dir, path) = written(frame, Some(64));
        let spec = spec();
        let mut one_by_one = ParquetRows::open(&path, &spec).unwrap();
        let mut expected = Vec::new();
        while let Some(batch) = one_by_one.next_batch(5).unwrap() {
            expected.extend(batch);
        }
        assert_eq!(expected.len(), count);
        // Row groups of 64 decoded 24 rows at a time and made into rows 10 at a time: pieces
        // that end inside a decoded range and ranges that end inside a row group.
        let mut parallel = ParquetRows::open_sized(&path, &spec, 24, 10).unwrap();
        let mut read = Vec::new();
        let mut sizes = Vec::new();
        parallel
            .read_parallel(
                |rows| rows.len(),
                |rows, made| {
                    sizes.push(made);
                    read.extend(rows);
                    true
                },
            )
            .unwrap();
        assert_eq!(read, expected);
        assert_eq!(
            read.iter().map(|r| r.row).collect::<Vec<_>>(),
            (2..=count as u64 + 1).collect::<Vec<_>>()
        );
        assert!(sizes.len() > count / 10 && sizes.iter().all(|&n| n <= 10), "{sizes:?}");
    }

    /// A file of `count` rows in row groups of 64, and the `ParquetRows` over it that decodes 24
    /// rows at a time and makes 10 at once.
    fn small_groups(count: usize) -> (tempfile::TempDir, PathBuf) {
        let frame = df!(
            "phone" => (0..count).map(|i| format!("010{i:08}")).collect::<Vec<_>>(),
            "name" => (0..count).map(|i| format!("이름{i}")).collect::<Vec<_>>(),
            "order" => (0..count).map(|i| format!("A{i}")).collect::<Vec<_>>(),
        )
        .unwrap();
        written(frame, Some(64))
    }

    #[test]
    fn a_damaged_row_group_mid_file_ends_the_reading_with_an_error_naming_the_file() {
        let (_dir, path) = small_groups(1000);
        let rows = ParquetRows::open_sized(&path, &spec(), 24, 10).unwrap();
        let damaged = rows.decoder.metadata.row_groups[5].full_byte_range();
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[damaged.start as usize..damaged.end as usize].fill(0xA5);
        std::fs::write(&path, bytes).unwrap();
        let mut rows = ParquetRows::open_sized(&path, &spec(), 24, 10).unwrap();
        let mut read = Vec::new();
        let outcome = rows.read_parallel(
            |_| (),
            |piece, ()| {
                read.extend(piece.into_iter().map(|row| row.row));
                true
            },
        );
        match outcome {
            Err(InputError::Parquet { path: named, .. }) => assert_eq!(named, path),
            other => panic!("{other:?}"),
        }
        // Every row before the damaged group came, in order, and none from it or after it.
        assert_eq!(read, (2..=read.len() as u64 + 1).collect::<Vec<_>>());
        assert!(read.len() <= 5 * 64, "{} rows", read.len());
    }

    #[test]
    fn a_reading_stopped_early_delivers_nothing_after_the_stop() {
        let (_dir, path) = small_groups(1000);
        let mut rows = ParquetRows::open_sized(&path, &spec(), 24, 10).unwrap();
        let mut pieces = 0;
        rows.read_parallel(
            |_| (),
            |_, ()| {
                pieces += 1;
                pieces < 3
            },
        )
        .unwrap();
        assert_eq!(pieces, 3);
    }
}
