//! Which BIFF version an `.xls` workbook is, read from the first record of its Workbook stream in the compound file: a BIFF8 workbook's texts are UTF-16 whatever its CODEPAGE record says, and calamine must be told so (`excel_source`).
//!
//! In BIFF8 every text is Unicode: UTF-16LE, or "compressed" to one byte per character when all
//! its characters are below U+0100. The CODEPAGE record is for BIFF5 and older, whose texts are
//! bytes of that code page. Excel writes 1200 (UTF-16) there in BIFF8, but other writers put
//! their system's code page, and calamine 0.38 then decodes each compressed text's bytes, padded
//! to UTF-16 with zeros, in that code page: `Titel` becomes `T\0i\0t\0e\0l\0`. Told to use code
//! page 1200, it reads them right; told so for a BIFF5 workbook, it would read its bytes as
//! Latin-1, so the version is read first, here.
//!
//! Only what finding the stream's first sector needs is read of the compound file (MS-CFB): the
//! header, the sector chain of the directory and, for a stream under the mini-stream cutoff, of
//! the root's mini stream. Nothing is trusted: every offset and chain is checked against the
//! file, and a chain longer than the file has sectors is an error, never a loop.

use std::path::Path;

const SIGNATURE: [u8; 8] = [0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1];
const HEADER_BYTES: usize = 512;
const DIRECTORY_ENTRY_BYTES: usize = 128;
/// Sector numbers at and above this are markers (free, end of chain, FAT, DIFAT), not sectors.
const MAX_SECTOR: u32 = 0xFFFF_FFFA;
const FREE_OR_END: u32 = 0xFFFF_FFFE;
/// The DIFAT entries the header holds; a larger file continues them in DIFAT sectors.
const HEADER_DIFAT_ENTRIES: usize = 109;
const BOF: u16 = 0x0809;

/// Whether calamine reads the `.xls` file at `path` as BIFF8 (its texts carrying their high-byte
/// flag), as its first BOF record says: `None` when that cannot be read (calamine then says why).
pub fn is_biff8(path: &Path) -> Option<bool> {
    let bytes = std::fs::read(path).ok()?;
    let head = workbook_head(&bytes)?;
    Some(biff8_bof(&head))
}

/// As calamine 0.38 decides it (`xls::parse_bof`): BIFF8 unless the first record is a BOF whose
/// version names BIFF2 to BIFF5; a first record that is no `0x0809` BOF leaves it at BIFF8.
fn biff8_bof(head: &[u8]) -> bool {
    let word = |at: usize| head.get(at..at + 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
    if word(0) != Some(BOF) || word(2).unwrap_or(0) < 2 {
        return true;
    }
    // Versions 0x0200 to 0x0500, or 0 in a BIFF5 workbook stream (dt 0x1000), are older.
    !matches!(
        (word(4), word(6)),
        (Some(0x0200 | 0x0002 | 0x0007 | 0x0300 | 0x0400 | 0x0500), _) | (Some(0), Some(0x1000))
    )
}

/// The compound file's header fields used here.
struct Header {
    sector_bytes: usize,
    mini_sector_bytes: usize,
    first_directory: u32,
    mini_cutoff: u64,
    first_mini_fat: u32,
    first_difat: u32,
}

/// Up to the first 8 bytes of the `Workbook` stream (else `Book`, as calamine looks).
fn workbook_head(bytes: &[u8]) -> Option<Vec<u8>> {
    let file = Cfb::new(bytes)?;
    let entries = file.chain_bytes(file.header.first_directory)?;
    let entry = |index: usize| entries.get(index * DIRECTORY_ENTRY_BYTES..(index + 1) * DIRECTORY_ENTRY_BYTES);
    let count = entries.len() / DIRECTORY_ENTRY_BYTES;
    let named = |wanted: &str| {
        (0..count).filter_map(entry).find(|e| {
            let length = usize::from(u16::from_le_bytes([e[0x40], e[0x41]])).min(0x40);
            // Type 2: a stream. The name is UTF-16LE with its terminating NUL counted.
            let name: Vec<u16> = e[..length.saturating_sub(2)]
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]))
                .collect();
            e[0x42] == 2 && String::from_utf16_lossy(&name) == wanted
        })
    };
    let stream = named("Workbook").or_else(|| named("Book"))?;
    let start = u32_at(stream, 0x74)?;
    let size = u64::from(u32_at(stream, 0x78)?);
    let wanted = size.min(8) as usize;
    if size >= file.header.mini_cutoff {
        let at = file.sector_offset(start)?;
        return bytes.get(at..at + wanted).map(<[u8]>::to_vec);
    }
    // A small stream lives in the root's mini stream, cut in mini sectors of its own chain.
    let root = entry(0)?;
    let mini_stream = file.chain_sectors(u32_at(root, 0x74)?)?;
    let mini_fat = file.chain_bytes(file.header.first_mini_fat)?;
    let mut mini = start;
    let mut head = Vec::with_capacity(wanted);
    for _ in 0..=wanted {
        if head.len() == wanted {
            return Some(head);
        }
        let at = usize::try_from(mini).ok()?.checked_mul(file.header.mini_sector_bytes)?;
        let sector = *mini_stream.get(at / file.header.sector_bytes)?;
        let from = file.sector_offset(sector)? + at % file.header.sector_bytes;
        let take = (wanted - head.len()).min(file.header.mini_sector_bytes);
        head.extend_from_slice(bytes.get(from..from + take)?);
        mini = u32_at(&mini_fat, usize::try_from(mini).ok()?.checked_mul(4)?)?;
    }
    None
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

struct Cfb<'a> {
    bytes: &'a [u8],
    header: Header,
    /// The sectors holding the FAT, in order.
    fat_sectors: Vec<u32>,
}

impl<'a> Cfb<'a> {
    fn new(bytes: &'a [u8]) -> Option<Cfb<'a>> {
        if bytes.len() < HEADER_BYTES || bytes[..8] != SIGNATURE {
            return None;
        }
        let shift = |at: usize| u16::from_le_bytes([bytes[at], bytes[at + 1]]);
        let (sector_shift, mini_shift) = (shift(0x1E), shift(0x20));
        if !matches!(sector_shift, 9 | 12) || mini_shift >= sector_shift {
            return None;
        }
        let header = Header {
            sector_bytes: 1 << sector_shift,
            mini_sector_bytes: 1 << mini_shift,
            first_directory: u32_at(bytes, 0x30)?,
            mini_cutoff: u64::from(u32_at(bytes, 0x38)?),
            first_mini_fat: u32_at(bytes, 0x3C)?,
            first_difat: u32_at(bytes, 0x44)?,
        };
        let mut file = Cfb {
            bytes,
            header,
            fat_sectors: Vec::new(),
        };
        let mut fat_sectors: Vec<u32> = (0..HEADER_DIFAT_ENTRIES)
            .filter_map(|i| u32_at(bytes, 0x4C + 4 * i))
            .filter(|&s| s <= MAX_SECTOR)
            .collect();
        // DIFAT sectors: entries, and the next DIFAT sector in their last four bytes.
        let mut difat = file.header.first_difat;
        for _ in 0..file.sector_count() {
            if difat > MAX_SECTOR {
                break;
            }
            let at = file.sector_offset(difat)?;
            let sector = bytes.get(at..at + file.header.sector_bytes)?;
            let entries = file.header.sector_bytes / 4 - 1;
            fat_sectors.extend(
                (0..entries)
                    .filter_map(|i| u32_at(sector, 4 * i))
                    .filter(|&s| s <= MAX_SECTOR),
            );
            difat = u32_at(sector, 4 * entries)?;
        }
        file.fat_sectors = fat_sectors;
        Some(file)
    }

    fn sector_count(&self) -> usize {
        self.bytes.len() / self.header.sector_bytes
    }

    /// Where sector `sector` starts in the file, if it is a sector the file holds whole.
    fn sector_offset(&self, sector: u32) -> Option<usize> {
        if sector > MAX_SECTOR {
            return None;
        }
        let at = (usize::try_from(sector).ok()? + 1).checked_mul(self.header.sector_bytes)?;
        (at.checked_add(self.header.sector_bytes)? <= self.bytes.len()).then_some(at)
    }

    /// The sector after `sector` in its chain, from the FAT.
    fn next(&self, sector: u32) -> Option<u32> {
        let per_sector = self.header.sector_bytes / 4;
        let index = usize::try_from(sector).ok()?;
        let fat = *self.fat_sectors.get(index / per_sector)?;
        u32_at(self.bytes, self.sector_offset(fat)? + 4 * (index % per_sector))
    }

    /// The sectors of the chain starting at `first`, in order.
    fn chain_sectors(&self, first: u32) -> Option<Vec<u32>> {
        let mut sectors = Vec::new();
        let mut sector = first;
        while sector != FREE_OR_END {
            if sectors.len() >= self.sector_count() {
                return None;
            }
            self.sector_offset(sector)?;
            sectors.push(sector);
            sector = self.next(sector)?;
        }
        Some(sectors)
    }

    /// The bytes of the chain starting at `first`.
    fn chain_bytes(&self, first: u32) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        for sector in self.chain_sectors(first)? {
            let at = self.sector_offset(sector)?;
            out.extend_from_slice(&self.bytes[at..at + self.header.sector_bytes]);
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A compound file of 512-byte sectors: sector 0 the FAT, 1 the directory, 2 the mini FAT,
    /// 3 the root's mini stream, 4 and on a big `Workbook` stream (when `big`).
    fn compound(head: &[u8], big: bool) -> Vec<u8> {
        let mut file = vec![0u8; 512 * 6];
        file[..8].copy_from_slice(&SIGNATURE);
        file[0x1E] = 9;
        file[0x20] = 6;
        file[0x30..0x34].copy_from_slice(&1u32.to_le_bytes());
        file[0x38..0x3C].copy_from_slice(&4096u32.to_le_bytes());
        file[0x3C..0x40].copy_from_slice(&2u32.to_le_bytes());
        file[0x44..0x48].copy_from_slice(&FREE_OR_END.to_le_bytes());
        file[0x4C..0x50].copy_from_slice(&0u32.to_le_bytes());
        for i in 1..HEADER_DIFAT_ENTRIES {
            file[0x4C + 4 * i..0x50 + 4 * i].copy_from_slice(&u32::MAX.to_le_bytes());
        }
        let fat = 512;
        let chain = [0xFFFF_FFFD, FREE_OR_END, FREE_OR_END, FREE_OR_END, FREE_OR_END];
        for (i, next) in chain.iter().enumerate() {
            file[fat + 4 * i..fat + 4 * i + 4].copy_from_slice(&next.to_le_bytes());
        }
        // The mini FAT: mini sector 0 ends its chain.
        file[512 * 3..512 * 3 + 4].copy_from_slice(&FREE_OR_END.to_le_bytes());
        let directory = 512 * 2;
        let mut entry = |index: usize, name: &str, kind: u8, start: u32, size: u32| {
            let e = directory + index * DIRECTORY_ENTRY_BYTES;
            let name: Vec<u8> = name.encode_utf16().chain([0]).flat_map(u16::to_le_bytes).collect();
            file[e..e + name.len()].copy_from_slice(&name);
            file[e + 0x40..e + 0x42].copy_from_slice(&(name.len() as u16).to_le_bytes());
            file[e + 0x42] = kind;
            file[e + 0x74..e + 0x78].copy_from_slice(&start.to_le_bytes());
            file[e + 0x78..e + 0x7C].copy_from_slice(&size.to_le_bytes());
        };
        entry(0, "Root Entry", 5, 3, 64);
        if big {
            entry(1, "Workbook", 2, 4, 4096);
        } else {
            entry(1, "Workbook", 2, 0, 16);
        }
        let at = if big { 512 * 5 } else { 512 * 4 };
        file[at..at + head.len()].copy_from_slice(head);
        file
    }

    const BIFF8: [u8; 8] = [0x09, 0x08, 0x10, 0x00, 0x00, 0x06, 0x05, 0x00];
    const BIFF5: [u8; 8] = [0x09, 0x08, 0x08, 0x00, 0x00, 0x05, 0x05, 0x00];

    #[test]
    fn the_version_is_read_from_a_big_stream_and_from_the_mini_stream() {
        for big in [true, false] {
            assert_eq!(
                workbook_head(&compound(&BIFF8, big)).as_deref(),
                Some(&BIFF8[..]),
                "{big}"
            );
            assert!(biff8_bof(&workbook_head(&compound(&BIFF8, big)).unwrap()));
            assert!(!biff8_bof(&workbook_head(&compound(&BIFF5, big)).unwrap()));
        }
    }

    #[test]
    fn calamines_rule_for_versions() {
        assert!(biff8_bof(&[0x09, 0x08, 0x08, 0x00, 0x00, 0x00, 0x05, 0x00]));
        assert!(!biff8_bof(&[0x09, 0x08, 0x08, 0x00, 0x00, 0x00, 0x00, 0x10]));
        assert!(biff8_bof(&[0x09, 0x02, 0x04, 0x00, 0x00, 0x05, 0x10, 0x00]));
    }

    #[test]
    fn a_file_that_is_no_compound_file_has_no_version() {
        assert_eq!(workbook_head(b"PK\x03\x04"), None);
        let mut looping = compound(&BIFF8, true);
        // The directory's chain points at itself.
        looping[512 + 4..512 + 8].copy_from_slice(&1u32.to_le_bytes());
        assert_eq!(workbook_head(&looping), None);
    }

    proptest! {
        #[test]
        fn any_damage_to_a_compound_file_reads_or_fails_never_panics(
            big in any::<bool>(),
            damage in prop::collection::vec((0usize..512 * 6, any::<u8>()), 0..24),
        ) {
            let mut file = compound(&BIFF8, big);
            for (at, byte) in damage {
                file[at] = byte;
            }
            let _ = workbook_head(&file);
        }

        #[test]
        fn any_bytes_read_or_fail_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
            let mut bytes = bytes;
            if bytes.len() >= 8 {
                bytes[..8].copy_from_slice(&SIGNATURE);
            }
            let _ = workbook_head(&bytes);
        }
    }
}
