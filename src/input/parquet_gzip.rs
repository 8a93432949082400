//! GZIP pages made of several gzip members one after another (Hadoop's `GzipCodec` writes them so), made readable: polars 0.55 decompresses a page with a reader that stops at the first member and then finds the page short, so the mapped column chunks holding such a page are copied, decompressed, into a temporary file that polars reads instead.
//!
//! Which chunks need it is told from the page headers alone: a gzip member ends with the size of
//! what it holds (ISIZE), so a page of one member ends with its own uncompressed size, and a page
//! that does not was written as several. Files without such a page (all Snappy, Zstd and
//! single-member GZIP files) are read where they are; only the headers of their GZIP pages are
//! read here. The copy holds the mapped columns only: the chunks that need it decompressed whole
//! and declared UNCOMPRESSED, the others as they are, and a footer whose offsets say where each
//! chunk now is. Pages are copied one at a time, never a chunk at once.

use super::parquet_footer::{set, value, Footer};
use super::thrift_compact::{self, Field, Value};
use flate2::read::MultiGzDecoder;
use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;
use tempfile::NamedTempFile;

/// `CompressionCodec`: the two used here.
const UNCOMPRESSED: i32 = 0;
const GZIP: i32 = 2;
/// `PageType`: the pages whose bodies are compressed.
const DATA_PAGE: i32 = 0;
const DICTIONARY_PAGE: i32 = 2;
const DATA_PAGE_V2: i32 = 3;
/// The most a page is decompressed to: writers make pages of about a megabyte; a header saying
/// more than this is damage, and a few bytes of gzip can expand a thousandfold.
const MAX_PAGE_BYTES: u64 = 256 * 1024 * 1024;
/// The first page header read is this long; a longer one (large statistics) is read again whole.
const FIRST_HEADER_READ: u64 = 4096;

/// The fields of `FileMetaData`, `RowGroup`, `ColumnChunk`, `ColumnMetaData`, `PageHeader` and
/// `DataPageHeaderV2` used here.
mod id {
    pub const ROW_GROUPS: i16 = 4;
    pub const COLUMNS: i16 = 1;
    pub const GROUP_FILE_OFFSET: i16 = 5;
    pub const GROUP_COMPRESSED_SIZE: i16 = 6;
    pub const CHUNK_FILE_OFFSET: i16 = 2;
    pub const META_DATA: i16 = 3;
    /// `offset_index_offset` to `column_index_length`: the page indexes, not copied.
    pub const CHUNK_INDEXES: [i16; 4] = [4, 5, 6, 7];
    pub const PATH_IN_SCHEMA: i16 = 3;
    pub const CODEC: i16 = 4;
    pub const TOTAL_UNCOMPRESSED_SIZE: i16 = 6;
    pub const TOTAL_COMPRESSED_SIZE: i16 = 7;
    pub const DATA_PAGE_OFFSET: i16 = 9;
    pub const DICTIONARY_PAGE_OFFSET: i16 = 11;
    /// `index_page_offset`, `bloom_filter_offset` and `bloom_filter_length`: not copied.
    pub const META_NOT_COPIED: [i16; 3] = [10, 14, 15];
    pub const PAGE_TYPE: i16 = 1;
    pub const UNCOMPRESSED_PAGE_SIZE: i16 = 2;
    pub const COMPRESSED_PAGE_SIZE: i16 = 3;
    pub const CRC: i16 = 4;
    pub const DATA_PAGE_HEADER_V2: i16 = 8;
    pub const DEFINITION_LEVELS_LENGTH: i16 = 5;
    pub const REPETITION_LEVELS_LENGTH: i16 = 6;
    pub const IS_COMPRESSED: i16 = 7;
}

/// The copy polars is to read instead of the file, and its footer; `None` when no mapped GZIP
/// page of `footer` (the footer of the mapped columns) holds several members.
pub fn mended_copy(path: &Path, footer: &Footer) -> Result<Option<(NamedTempFile, Footer)>, String> {
    let mut file = File::open(path).map_err(|e| e.to_string())?;
    let (fields, _) = thrift_compact::read_struct(footer.bytes(), |_| false).map_err(|e| e.to_string())?;
    // Which chunks have a page of several members, in order; looked for on a copy of the fields,
    // which the walk changes.
    let mut several = Vec::new();
    for_each_chunk(&mut fields.clone(), length_of(&file)?, |chunk, _| {
        several.push(chunk.codec == GZIP && chunk.has_several_members(&mut file)?);
        Ok(0)
    })?;
    if !several.contains(&true) {
        return Ok(None);
    }
    copied(&mut file, fields, &several, expanded, true).map(Some)
}

fn length_of(file: &File) -> Result<u64, String> {
    Ok(file.metadata().map_err(|e| e.to_string())?.len())
}

/// A copy of the chunks of `file` its footer's `fields` name, with the compressed part of each
/// page of the chunks `rewritten` (in footer order) replaced by what `rewrite` makes of it, and
/// its footer; with `now_uncompressed`, `rewrite` decompresses and those chunks are declared
/// UNCOMPRESSED.
fn copied(
    file: &mut File,
    mut fields: Vec<Field<'_>>,
    rewritten: &[bool],
    rewrite: impl Fn(&Compressed, &[u8]) -> Result<Vec<u8>, String>,
    now_uncompressed: bool,
) -> Result<(NamedTempFile, Footer), String> {
    let file_length = length_of(file)?;
    let mut rewritten = rewritten.iter();
    let copy = NamedTempFile::new().map_err(|e| format!("a temporary copy could not be made: {e}"))?;
    let mut out = BufWriter::new(copy.as_file());
    out.write_all(b"PAR1").map_err(|e| e.to_string())?;
    let mut written = 4u64;
    for_each_chunk(&mut fields, file_length, |chunk, meta| {
        let start = written;
        let rewrite_this = rewritten.next().copied().unwrap_or(false);
        let data_page_offset = if rewrite_this {
            chunk.rewritten(file, &mut out, &mut written, &rewrite, now_uncompressed)?
        } else {
            file.seek(SeekFrom::Start(chunk.start)).map_err(|e| e.to_string())?;
            let copied = std::io::copy(&mut (&mut *file).take(chunk.length), &mut out).map_err(|e| e.to_string())?;
            if copied != chunk.length {
                return Err(format!(
                    "{}: the column chunk runs past the end of the file",
                    chunk.name
                ));
            }
            written += copied;
            start + (chunk.data_page_offset - chunk.start)
        };
        let length = written - start;
        set(meta, id::DATA_PAGE_OFFSET, Value::I64(data_page_offset as i64));
        if value(meta, id::DICTIONARY_PAGE_OFFSET).is_some() {
            set(meta, id::DICTIONARY_PAGE_OFFSET, Value::I64(start as i64));
        }
        set(meta, id::TOTAL_COMPRESSED_SIZE, Value::I64(length as i64));
        if rewrite_this && now_uncompressed {
            set(meta, id::CODEC, Value::I32(UNCOMPRESSED));
            set(meta, id::TOTAL_UNCOMPRESSED_SIZE, Value::I64(length as i64));
        }
        meta.retain(|f| !id::META_NOT_COPIED.contains(&f.id));
        Ok(start)
    })?;
    let mut bytes = Vec::new();
    thrift_compact::write_struct(&fields, &mut bytes);
    out.write_all(&bytes).map_err(|e| e.to_string())?;
    out.write_all(&(bytes.len() as u32).to_le_bytes())
        .map_err(|e| e.to_string())?;
    out.write_all(b"PAR1").map_err(|e| e.to_string())?;
    out.flush()
        .map_err(|e| format!("the temporary copy could not be written: {e}"))?;
    drop(out);
    Ok((copy, Footer::from_bytes(bytes)))
}

/// A column chunk's place in the file and how its pages are compressed.
struct Chunk {
    /// Its column's path in the schema, dotted: names it in errors.
    name: String,
    codec: i32,
    /// Where its first page (the dictionary page, if it has one) starts, and its length.
    start: u64,
    length: u64,
    data_page_offset: u64,
}

/// Calls `with` on every column chunk of every row group, with the chunk's `ColumnMetaData` to
/// change; a chunk is then said to start where `with` answers. The row groups' own offsets and
/// the chunks' page indexes, which the copy does not keep, are left out.
fn for_each_chunk<'a>(
    fields: &mut [Field<'a>],
    file_length: u64,
    mut with: impl FnMut(&Chunk, &mut Vec<Field<'a>>) -> Result<u64, String>,
) -> Result<(), String> {
    let Some(Value::List { items: groups, .. }) =
        fields.iter_mut().find(|f| f.id == id::ROW_GROUPS).map(|f| &mut f.value)
    else {
        return Err("the footer has no row groups".into());
    };
    for (number, group) in groups.iter_mut().enumerate() {
        let Value::Struct(group) = group else {
            return Err(format!("row group {} is not a struct", number + 1));
        };
        group.retain(|f| f.id != id::GROUP_FILE_OFFSET && f.id != id::GROUP_COMPRESSED_SIZE);
        let Some(Value::List { items: chunks, .. }) =
            group.iter_mut().find(|f| f.id == id::COLUMNS).map(|f| &mut f.value)
        else {
            return Err(format!("row group {} has no column chunks", number + 1));
        };
        for column_chunk in chunks.iter_mut() {
            let Value::Struct(column_chunk) = column_chunk else {
                return Err(format!("a column chunk of row group {} is not a struct", number + 1));
            };
            column_chunk.retain(|f| !id::CHUNK_INDEXES.contains(&f.id));
            let Some(Value::Struct(meta)) = column_chunk
                .iter_mut()
                .find(|f| f.id == id::META_DATA)
                .map(|f| &mut f.value)
            else {
                return Err(format!("a column chunk of row group {} has no metadata", number + 1));
            };
            let chunk = Chunk::of(meta, file_length).map_err(|e| format!("row group {}: {e}", number + 1))?;
            let start = with(&chunk, meta).map_err(|e| format!("row group {}, column {e}", number + 1))?;
            set(column_chunk, id::CHUNK_FILE_OFFSET, Value::I64(start as i64));
        }
    }
    Ok(())
}

impl Chunk {
    /// The chunk `meta` describes, in a file of `file_length` bytes.
    fn of(meta: &[Field<'_>], file_length: u64) -> Result<Chunk, String> {
        let name = match value(meta, id::PATH_IN_SCHEMA) {
            Some(Value::List { items, .. }) => items
                .iter()
                .map(|item| match item {
                    Value::Binary(part) => String::from_utf8_lossy(part).into_owned(),
                    _ => "?".into(),
                })
                .collect::<Vec<_>>()
                .join("."),
            _ => "?".into(),
        };
        let offset = |field_id| match value(meta, field_id) {
            Some(Value::I64(n)) => u64::try_from(*n).ok(),
            _ => None,
        };
        let codec = match value(meta, id::CODEC) {
            Some(Value::I32(codec)) => *codec,
            _ => return Err(format!("column {name} has no codec")),
        };
        let (Some(data_page_offset), Some(length)) = (offset(id::DATA_PAGE_OFFSET), offset(id::TOTAL_COMPRESSED_SIZE))
        else {
            return Err(format!("column {name} has no data page offset or size"));
        };
        let start = offset(id::DICTIONARY_PAGE_OFFSET).map_or(data_page_offset, |d| d.min(data_page_offset));
        if start.checked_add(length).is_none_or(|end| end > file_length) || data_page_offset >= start + length {
            return Err(format!("column {name}: its chunk does not lie within the file"));
        }
        Ok(Chunk {
            name,
            codec,
            start,
            length,
            data_page_offset,
        })
    }

    /// Whether a page of this GZIP chunk holds several gzip members.
    fn has_several_members(&self, file: &mut File) -> Result<bool, String> {
        let mut at = self.start;
        while at < self.start + self.length {
            let page = self.page_at(file, at)?;
            if let Some(compressed) = page.compressed_part() {
                if compressed.length < 4 {
                    return Ok(true);
                }
                let mut trailer = [0u8; 4];
                file.seek(SeekFrom::Start(
                    page.body_start + compressed.skip + compressed.length - 4,
                ))
                .and_then(|_| file.read_exact(&mut trailer))
                .map_err(|e| format!("{}: {e}", self.name))?;
                if u64::from(u32::from_le_bytes(trailer)) != compressed.expanded & 0xFFFF_FFFF {
                    return Ok(true);
                }
            }
            at = page.body_start + page.body_length;
        }
        Ok(false)
    }

    /// Writes the chunk's pages to `out` with their compressed parts replaced by what `rewrite`
    /// makes of them, counting the bytes in `written`; answers where the data page the footer
    /// points at now starts.
    fn rewritten(
        &self,
        file: &mut File,
        out: &mut impl Write,
        written: &mut u64,
        rewrite: impl Fn(&Compressed, &[u8]) -> Result<Vec<u8>, String>,
        now_uncompressed: bool,
    ) -> Result<u64, String> {
        let mut data_page_offset = None;
        let mut at = self.start;
        let mut number = 0;
        while at < self.start + self.length {
            number += 1;
            if at == self.data_page_offset {
                data_page_offset = Some(*written);
            }
            let page = self.page_at(file, at)?;
            let mut body = vec![0u8; usize::try_from(page.body_length).map_err(|e| e.to_string())?];
            file.seek(SeekFrom::Start(page.body_start))
                .and_then(|_| file.read_exact(&mut body))
                .map_err(|e| format!("{}, page {number}: {e}", self.name))?;
            let (mut fields, _) = thrift_compact::read_struct(&page.header, |_| false).map_err(|e| e.to_string())?;
            if let Some(compressed) = page.compressed_part() {
                let skip = compressed.skip as usize;
                let made =
                    rewrite(&compressed, &body[skip..]).map_err(|e| format!("{}, page {number}: {e}", self.name))?;
                body.truncate(skip);
                body.extend_from_slice(&made);
                set(&mut fields, id::COMPRESSED_PAGE_SIZE, Value::I32(body.len() as i32));
                fields.retain(|f| f.id != id::CRC);
                if let (true, Some(Value::Struct(v2))) = (
                    now_uncompressed,
                    fields
                        .iter_mut()
                        .find(|f| f.id == id::DATA_PAGE_HEADER_V2)
                        .map(|f| &mut f.value),
                ) {
                    set(v2, id::IS_COMPRESSED, Value::Bool(false));
                }
            }
            let mut header = Vec::new();
            thrift_compact::write_struct(&fields, &mut header);
            out.write_all(&header)
                .and_then(|_| out.write_all(&body))
                .map_err(|e| format!("the temporary copy could not be written: {e}"))?;
            *written += (header.len() + body.len()) as u64;
            at = page.body_start + page.body_length;
        }
        data_page_offset.ok_or_else(|| format!("{}: its data page offset is not where a page starts", self.name))
    }

    /// The page whose header starts at `at`.
    fn page_at(&self, file: &mut File, at: u64) -> Result<Page, String> {
        let end = self.start + self.length;
        let mut wanted = FIRST_HEADER_READ.min(end - at);
        loop {
            let mut header = vec![0u8; wanted as usize];
            file.seek(SeekFrom::Start(at))
                .and_then(|_| file.read_exact(&mut header))
                .map_err(|e| format!("{}: a page header at byte {at}: {e}", self.name))?;
            match thrift_compact::read_struct(&header, |_| false) {
                Ok((fields, header_length)) => {
                    let page = Page::of(&fields, at + header_length as u64)
                        .ok_or_else(|| format!("{}: the page header at byte {at} is not one", self.name))?;
                    if page.body_start + page.body_length > end {
                        return Err(format!(
                            "{}: the page at byte {at} runs past its column chunk",
                            self.name
                        ));
                    }
                    header.truncate(header_length);
                    return Ok(Page { header, ..page });
                }
                Err(_) if wanted < end - at => wanted = (wanted * 4).min(end - at),
                Err(e) => return Err(format!("{}: the page header at byte {at}: {e}", self.name)),
            }
        }
    }
}

/// A page: its header's bytes, and where its body is.
struct Page {
    header: Vec<u8>,
    kind: i32,
    uncompressed: u64,
    body_start: u64,
    body_length: u64,
    /// A version-2 data page's levels (never compressed), and whether the rest is.
    levels: Option<(u64, bool)>,
}

/// The compressed part of a page's body: after `skip` bytes, `length` bytes that expand to
/// `expanded`.
struct Compressed {
    skip: u64,
    length: u64,
    expanded: u64,
}

impl Page {
    fn of(fields: &[Field<'_>], body_start: u64) -> Option<Page> {
        let number = |fields: &[Field<'_>], field_id| match value(fields, field_id) {
            Some(Value::I32(n)) => u64::try_from(*n).ok(),
            _ => None,
        };
        let kind = match value(fields, id::PAGE_TYPE) {
            Some(Value::I32(kind)) => *kind,
            _ => return None,
        };
        let levels = match value(fields, id::DATA_PAGE_HEADER_V2) {
            Some(Value::Struct(v2)) => Some((
                number(v2, id::DEFINITION_LEVELS_LENGTH)? + number(v2, id::REPETITION_LEVELS_LENGTH)?,
                !matches!(value(v2, id::IS_COMPRESSED), Some(Value::Bool(false))),
            )),
            _ => None,
        };
        Some(Page {
            header: Vec::new(),
            kind,
            uncompressed: number(fields, id::UNCOMPRESSED_PAGE_SIZE)?,
            body_start,
            body_length: number(fields, id::COMPRESSED_PAGE_SIZE)?,
            levels,
        })
    }

    /// What of the body is compressed, or `None` for a page with nothing compressed.
    fn compressed_part(&self) -> Option<Compressed> {
        match (self.kind, self.levels) {
            (DATA_PAGE | DICTIONARY_PAGE, _) => Some(Compressed {
                skip: 0,
                length: self.body_length,
                expanded: self.uncompressed,
            }),
            (DATA_PAGE_V2, Some((levels, true))) => Some(Compressed {
                skip: levels.min(self.body_length),
                length: self.body_length.saturating_sub(levels),
                expanded: self.uncompressed.saturating_sub(levels),
            }),
            _ => None,
        }
    }
}

/// The bytes a compressed part's gzip members hold, all of them, checked against the size its
/// page header gives.
fn expanded(compressed: &Compressed, members: &[u8]) -> Result<Vec<u8>, String> {
    if compressed.expanded > MAX_PAGE_BYTES {
        return Err(format!(
            "its header says it holds {} bytes, more than a page is read ({MAX_PAGE_BYTES})",
            compressed.expanded
        ));
    }
    let mut expanded = Vec::new();
    MultiGzDecoder::new(members)
        .take(compressed.expanded + 1)
        .read_to_end(&mut expanded)
        .map_err(|e| format!("its gzip members: {e}"))?;
    let held = expanded.len() as u64;
    if held != compressed.expanded {
        let more = if held > compressed.expanded { "more than " } else { "" };
        return Err(format!(
            "its gzip members hold {more}{} bytes, its header says {}",
            held.min(compressed.expanded),
            compressed.expanded
        ));
    }
    Ok(expanded)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::campaign::{Encoding, InputFormat};
    use crate::input::{self, ColumnSpec};
    use flate2::write::GzEncoder;
    use flate2::Compression;
    use polars::prelude::*;
    use proptest::prelude::*;
    use std::path::PathBuf;

    /// A compressed part as Hadoop's codec writes a long one: its bytes in two gzip members.
    fn in_two_members(compressed: &Compressed, members: &[u8]) -> Result<Vec<u8>, String> {
        let whole = expanded(compressed, members)?;
        let mut out = Vec::new();
        for half in [&whole[..whole.len() / 2], &whole[whole.len() / 2..]] {
            let mut encoder = GzEncoder::new(Vec::new(), Compression::fast());
            encoder.write_all(half).unwrap();
            out.extend(encoder.finish().unwrap());
        }
        Ok(out)
    }

    const ROWS: usize = 5000;

    /// A GZIP file of `ROWS` rows in row groups of 1,500 and pages of about 4 KB (columns
    /// `skipped`, `phone` and a dictionary-encoded `name`), and the same file with every page in
    /// two gzip members.
    fn single_and_split(dir: &Path) -> (PathBuf, PathBuf) {
        let phones: Vec<String> = (0..ROWS).map(|i| format!("010{:08}", i * 7)).collect();
        let names: Vec<&str> = (0..ROWS).map(|i| ["김민수", "이서연", "박지훈"][i % 3]).collect();
        let skipped: Vec<i64> = (0..ROWS as i64).collect();
        let mut frame = df!("skipped" => &skipped, "phone" => &phones, "name" => &names).unwrap();
        let single = dir.join("single.parquet");
        ParquetWriter::new(File::create(&single).unwrap())
            .with_compression(ParquetCompression::Gzip(None))
            .with_row_group_size(Some(1500))
            .with_data_page_size(Some(4096))
            .finish(&mut frame)
            .unwrap();
        let footer = Footer::read(&single).ok().unwrap().kept(&[0, 1, 2]).unwrap();
        let (fields, _) = thrift_compact::read_struct(footer.bytes(), |_| false).unwrap();
        let mut file = File::open(&single).unwrap();
        let (split, _) = copied(&mut file, fields, &[true; 64], in_two_members, false).unwrap();
        let split_path = dir.join("split.parquet");
        std::fs::copy(split.path(), &split_path).unwrap();
        (single, split_path)
    }

    fn spec() -> ColumnSpec {
        ColumnSpec {
            phone: "phone".into(),
            name: Some("name".into()),
            vars: Vec::new(),
        }
    }

    #[test]
    fn pages_of_two_members_in_row_groups_with_dictionaries_read_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let (single, split) = single_and_split(dir.path());
        let footer = Footer::read(&split).ok().unwrap();
        let (fields, _) = thrift_compact::read_struct(footer.bytes(), |_| false).unwrap();
        let mut chunks = 0;
        let mut dictionaries = 0;
        let mut file = File::open(&split).unwrap();
        let length = file.metadata().unwrap().len();
        for_each_chunk(&mut fields.clone(), length, |chunk, meta| {
            chunks += 1;
            dictionaries += usize::from(value(meta, id::DICTIONARY_PAGE_OFFSET).is_some());
            assert!(chunk.has_several_members(&mut file).unwrap(), "{}", chunk.name);
            Ok(0)
        })
        .unwrap();
        assert!(
            chunks > 3 && chunks % 3 == 0,
            "several row groups of three columns: {chunks} chunks"
        );
        assert!(dictionaries > 0, "a dictionary page is among them");
        // polars alone stops at each page's first member.
        assert!(ParquetReader::new(File::open(&split).unwrap()).finish().is_err());
        let read = |path: &Path| {
            let mut source = input::open(path, InputFormat::Parquet, Encoding::Auto, &spec()).unwrap();
            let mut rows = Vec::new();
            while let Some(batch) = source.next_batch(700).unwrap() {
                rows.extend(batch.into_iter().map(|r| (r.row, r.phone, r.name)));
            }
            rows
        };
        let rows = read(&split);
        assert_eq!(rows.len(), ROWS);
        assert_eq!(rows, read(&single));
        assert_eq!(rows[4999].1.as_deref(), Some("01000034993"));
        // A file of single members is read where it is.
        let kept = Footer::read(&single).ok().unwrap().kept(&[1, 2]).unwrap();
        assert!(mended_copy(&single, &kept).unwrap().is_none());
    }

    #[test]
    fn a_version_2_page_keeps_its_levels_out_of_the_compressed_part() {
        let page = |is_compressed| Page {
            header: Vec::new(),
            kind: DATA_PAGE_V2,
            uncompressed: 100,
            body_start: 10,
            body_length: 40,
            levels: Some((6, is_compressed)),
        };
        let part = page(true).compressed_part().unwrap();
        assert_eq!((part.skip, part.length, part.expanded), (6, 34, 94));
        assert!(page(false).compressed_part().is_none());
    }

    #[test]
    fn a_page_claiming_more_than_a_page_holds_is_refused_before_it_is_expanded() {
        let mut encoder = GzEncoder::new(Vec::new(), Compression::fast());
        encoder.write_all(&[0u8; 1024]).unwrap();
        let members = encoder.finish().unwrap();
        let claim = |expanded| Compressed {
            skip: 0,
            length: members.len() as u64,
            expanded,
        };
        let error = expanded(&claim(MAX_PAGE_BYTES + 1), &members).unwrap_err();
        assert!(error.contains("more than a page is read"), "{error}");
        assert_eq!(expanded(&claim(1024), &members).unwrap(), vec![0u8; 1024]);
        let error = expanded(&claim(1000), &members).unwrap_err();
        assert!(
            error.contains("hold more than 1000 bytes, its header says 1000"),
            "{error}"
        );
        let error = expanded(&claim(2000), &members).unwrap_err();
        assert!(error.contains("hold 1024 bytes, its header says 2000"), "{error}");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// A page damaged anywhere (a byte changed, or the file cut short) is an error naming
        /// its row group, never a panic.
        #[test]
        fn a_damaged_page_is_an_error_not_a_panic(at in 4usize..1_000_000, byte in any::<u8>(), cut in any::<bool>()) {
            let dir = tempfile::tempdir().unwrap();
            let (_, split) = single_and_split(dir.path());
            let footer = Footer::read(&split).ok().unwrap().kept(&[1, 2]).unwrap();
            let mut bytes = std::fs::read(&split).unwrap();
            let pages_end = bytes.len() - 8 - footer.bytes().len();
            let at = 4 + at % (pages_end - 4);
            if cut {
                bytes.truncate(at);
            } else {
                bytes[at] = byte;
            }
            let damaged = dir.path().join("damaged.parquet");
            std::fs::write(&damaged, &bytes).unwrap();
            if let Err(error) = mended_copy(&damaged, &footer) {
                prop_assert!(error.contains("row group"), "{error}");
            }
        }
    }
}
