//! Reading input files: memory-mapped, so a dump of hundreds of megabytes is read in place.

use std::fs::File;

/// The bytes of a file, mapped (or read, for non-regular files such as pipes).
pub enum Bytes {
    /// A memory map of a regular file.
    Mapped(memmap2::Mmap),
    /// The contents, read.
    Read(Vec<u8>),
}

impl Bytes {
    /// Opens `path` (`-` for stdin).
    pub fn open(path: &str) -> Result<Bytes, String> {
        if path == "-" {
            let mut v = Vec::new();
            std::io::Read::read_to_end(&mut std::io::stdin(), &mut v)
                .map_err(|e| format!("reading stdin: {e}"))?;
            return Ok(Bytes::Read(v));
        }
        let f = File::open(path).map_err(|e| format!("{path}: {e}"))?;
        let meta = f.metadata().map_err(|e| format!("{path}: {e}"))?;
        if !meta.is_file() || meta.len() == 0 {
            return std::fs::read(path)
                .map(Bytes::Read)
                .map_err(|e| format!("{path}: {e}"));
        }
        // SAFETY: the map is read-only and lives as long as the returned value. If another process
        // truncates the file while it is mapped, reads may fault; that is the documented risk of mapping
        // files, accepted here for reading large dumps in place.
        #[allow(unsafe_code)]
        let map =
            unsafe { memmap2::MmapOptions::new().map(&f) }.map_err(|e| format!("{path}: {e}"))?;
        Ok(Bytes::Mapped(map))
    }

    /// The contents as text. Checked with SIMD instructions (simdutf8, several times faster than the
    /// standard library's check) in parts on every thread of the pool, each part's pages of a mapped
    /// file mapped first: a 17 MB dump in about a millisecond. Text that is not UTF-8 is checked again
    /// by the standard library for where it goes wrong.
    pub fn text(&self, path: &str) -> Result<&str, String> {
        let (b, map): (&[u8], _) = match self {
            Bytes::Mapped(m) => (m, Some(m)),
            Bytes::Read(v) => (v, None),
        };
        if utf8_in_parts(b, map, UTF8_PART) {
            // SAFETY: every byte is in one of the parts, each of which is UTF-8 and starts where a
            // character starts, so the whole is UTF-8.
            #[allow(unsafe_code)]
            return Ok(unsafe { std::str::from_utf8_unchecked(b) });
        }
        std::str::from_utf8(b).map_err(|e| not_utf8(path, b, e.valid_up_to()))
    }
}

/// The error for text `b` that stops being UTF-8 at byte `at`: where (`path:line:column`, the column in
/// characters), the byte, and its line (the bad bytes shown as U+FFFD) with a caret under it.
fn not_utf8(path: &str, b: &[u8], at: usize) -> String {
    let line_start = b[..at]
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |p| p + 1);
    let line_end = b[at..]
        .iter()
        .position(|&c| c == b'\n')
        .map_or(b.len(), |p| at + p);
    let line_no = b[..line_start].iter().filter(|&&c| c == b'\n').count() + 1;
    // The bytes before `at` are UTF-8, so they keep their length in the lossy line.
    let before = String::from_utf8_lossy(&b[line_start..at]);
    let line = String::from_utf8_lossy(&b[line_start..line_end]);
    let (shown, caret) = axe_layout::caret_window(&line, at - line_start);
    format!(
        "{path}:{line_no}:{}: not UTF-8 text (byte 0x{:02x} {})\n  {shown}\n  {}^",
        before.chars().count() + 1,
        b[at],
        if b[at] & 0xC0 == 0x80 {
            "follows no character's first byte"
        } else {
            "starts no valid character"
        },
        axe_layout::caret_pad(&shown, caret)
    )
}

/// The bytes a thread checks at once in [`utf8_in_parts`].
const UTF8_PART: usize = 4 << 20;

/// Whether `b` is UTF-8, checked in parts of about `part` bytes on every thread of the pool,
/// each part cut where a character starts (a byte that is not `0b10xx_xxxx`; a part whose start would
/// move more than three bytes is not UTF-8 anyway). Where `b` is `map`, each part's pages are mapped
/// first, in one request to the kernel (mapping a large file's pages costs the kernel more than the
/// check).
fn utf8_in_parts(b: &[u8], map: Option<&memmap2::Mmap>, part: usize) -> bool {
    use rayon::prelude::*;
    let continues = |i: usize| b.get(i).is_some_and(|&c| c & 0xC0 == 0x80);
    let part = part.max(1);
    let mut cuts = Vec::with_capacity(b.len() / part + 2);
    for k in 0..=b.len().div_ceil(part) {
        let mut at = (k * part).min(b.len());
        // The text's first part starts at its first byte, whatever that is.
        for _ in 0..if k == 0 { 0 } else { 3 } {
            if continues(at) {
                at += 1;
            }
        }
        if continues(at) {
            return false;
        }
        cuts.push(at);
    }
    (0..cuts.len() - 1).into_par_iter().all(|k| {
        if let Some(map) = map {
            let from = k * part;
            let len = part.min(b.len().saturating_sub(from));
            if len > 0 {
                // Advice only: without it the pages are mapped as they are read.
                let _ = map.advise_range(memmap2::Advice::PopulateRead, from, len);
            }
        }
        simdutf8::basic::from_utf8(&b[cuts[k]..cuts[k + 1]]).is_ok()
    })
}

/// A zeroed buffer of `n` bytes for tensor data, asking the kernel for transparent huge pages: a
/// relayout that jumps between rows of a large tensor touches many pages, and 2 MiB pages keep their
/// translations cached (with 4 KiB pages a transpose spends much of its time walking page tables).
pub fn tensor_buffer(n: usize) -> Result<memmap2::MmapMut, String> {
    let map =
        memmap2::MmapMut::map_anon(n.max(1)).map_err(|e| format!("allocating {n} bytes: {e}"))?;
    #[cfg(target_os = "linux")]
    let _ = map.advise(memmap2::Advice::HugePage); // advice only: without it the buffer still works
    Ok(map)
}

/// Has the kernel back every page of `buf` now (on Linux 5.14 and later; elsewhere a no-op), so that the
/// first writes into it do not stop for page faults: the time of a relayout into it is then the time
/// of the relayout.
pub fn populate(buf: &memmap2::MmapMut) {
    #[cfg(target_os = "linux")]
    let _ = buf.advise(memmap2::Advice::PopulateWrite); // advice only, as above
    #[cfg(not(target_os = "linux"))]
    let _ = buf;
}

/// The share of a buffer the kernel backs with huge pages (Linux; `None` where it cannot tell).
pub fn huge_page_share(buf: &[u8]) -> Option<f64> {
    let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
    let (start, end) = (buf.as_ptr() as u64, buf.as_ptr() as u64 + buf.len() as u64);
    let mut inside = false;
    let mut huge = 0u64;
    for line in smaps.lines() {
        let head = line.split_whitespace().next().unwrap_or("");
        if let Some((a, b)) = head.split_once('-') {
            if let (Ok(a), Ok(b)) = (u64::from_str_radix(a, 16), u64::from_str_radix(b, 16)) {
                inside = a < end && start < b;
                continue;
            }
        }
        if inside {
            if let Some(kb) = line.strip_prefix("AnonHugePages:") {
                huge += kb
                    .trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse::<u64>()
                    .ok()?
                    * 1024;
            }
        }
    }
    Some((huge as f64 / buf.len().max(1) as f64).min(1.0))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Checked in parts of any size, bytes are UTF-8 exactly when the standard library says so:
        /// text of one- to four-byte characters, maybe with one byte changed.
        #[test]
        fn parts_agree_with_the_standard_check(
            chars in proptest::collection::vec(
                prop_oneof![Just('a'), Just('\n'), Just('é'), Just('€'), Just('😀'), any::<char>()],
                0..40,
            ),
            damage in proptest::option::of((any::<usize>(), any::<u8>())),
            part in 1usize..9,
        ) {
            let mut b = String::from_iter(chars).into_bytes();
            if let Some((at, byte)) = damage {
                if !b.is_empty() {
                    let i = at % b.len();
                    b[i] = byte;
                }
            }
            prop_assert_eq!(utf8_in_parts(&b, None, part), std::str::from_utf8(&b).is_ok());
        }
    }

    /// A mapped file whose characters straddle the cuts between parts reads whole; a stray byte where
    /// a part would start is found, with its place.
    #[test]
    fn a_mapped_file_is_checked_across_its_parts() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.hlo");
        let mut text = "x".repeat(UTF8_PART - 1);
        text.push('€'); // bytes UTF8_PART - 1 ..= UTF8_PART + 1
        text.push_str(&"y".repeat(UTF8_PART));
        text.push('😀');
        std::fs::write(&path, &text).unwrap();
        let p = path.to_str().unwrap();
        let bytes = Bytes::open(p).unwrap();
        assert!(matches!(bytes, Bytes::Mapped(_)));
        assert_eq!(bytes.text(p).unwrap(), text);

        let mut broken = text.into_bytes();
        broken[2 * UTF8_PART] = 0x80;
        std::fs::write(&path, &broken).unwrap();
        let e = Bytes::open(p).unwrap().text(p).unwrap_err();
        // One line: the column counts the characters before the byte (the euro sign is one).
        assert!(
            e.starts_with(&format!("{p}:1:{}: not UTF-8 text", 2 * UTF8_PART - 1)),
            "{e}"
        );
    }
}
