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
        // Every page is mapped at once (the whole file is read anyway): one request to the kernel rather
        // than a page fault per page.
        #[allow(unsafe_code)]
        let map = unsafe { memmap2::MmapOptions::new().populate().map(&f) }
            .map_err(|e| format!("{path}: {e}"))?;
        Ok(Bytes::Mapped(map))
    }

    /// The contents as text. Checked with SIMD instructions (simdutf8: a 17 MB dump in a fraction of
    /// a millisecond, several times faster than the standard library's check); text that is not
    /// UTF-8 is checked again by the standard library for where it goes wrong.
    pub fn text(&self, path: &str) -> Result<&str, String> {
        let b: &[u8] = match self {
            Bytes::Mapped(m) => m,
            Bytes::Read(v) => v,
        };
        simdutf8::basic::from_utf8(b)
            .or_else(|_| std::str::from_utf8(b))
            .map_err(|e| format!("{path}: not UTF-8 text ({e})"))
    }
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
