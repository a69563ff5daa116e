//! Writing output files so that nothing is damaged or left behind.
//!
//! Where the output goes depends on what the path names now:
//!
//! - nothing, or a regular file: the data goes into a new temporary file in the same folder, created
//!   with an unpredictable name and `O_EXCL` (so a file or link planted under a guessable name is never
//!   written through), and is renamed over the path only once every byte is written and synced. A reader
//!   sees the old file or the new one, never half of one. An existing file's permission bits carry over;
//!   being a new file, the output has the writer as owner, and hard links to the old file keep the old
//!   contents.
//! - a character device (`/dev/null`, a terminal) or a FIFO: the data is streamed into it, opened for
//!   writing without following links; it is never replaced or renamed over.
//! - a symbolic link that leads to a character device or a FIFO (`/dev/stdout` to a terminal or a
//!   pipe), or into `/proc` (`/dev/stdout` → `/proc/self/fd/1` when the shell redirected it to a file):
//!   written through, in place, as the device, FIFO or open file it leads to (appending to a file, as
//!   the shell's `>` and `>>` left it). Any other link (to a regular file, or dangling) is replaced by the
//!   rename: nothing is written through it to its target.
//! - a directory, a socket, a block device: an error.
//!
//! A temporary file is removed on every path out of the process that can be handled: an error
//! (a failed write, a full disk, a file-size limit) drops it, and SIGINT, SIGTERM and SIGHUP are caught
//! while any temporary file is open, its file removed, and the process ended with status 128 + the
//! signal's number, as the shell reports a process that the signal killed. SIGKILL cannot be caught:
//! a process killed by it leaves its temporary file (named `.NAME.XXXXXX.tmp` beside the output) behind.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, Once};

/// The temporary files open now, which a termination signal removes before the process ends.
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn live() -> MutexGuard<'static, Vec<PathBuf>> {
    // A panic while the lock was held leaves the list as it was: still the files to remove.
    LIVE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Catches SIGINT, SIGTERM and SIGHUP (once per process) on a thread that removes the temporary files
/// open at that moment and ends the process with status 128 + the signal.
fn catch_signals() -> Result<(), String> {
    static ONCE: Once = Once::new();
    let mut result = Ok(());
    ONCE.call_once(|| {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        result = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])
            .and_then(|mut signals| {
                std::thread::Builder::new()
                    .name("axe-signals".into())
                    .spawn(move || {
                        if let Some(signal) = signals.forever().next() {
                            // The lock is held until the process ends, so no file is renamed into
                            // place or newly created after this point.
                            let files = live();
                            for f in files.iter() {
                                let _ = std::fs::remove_file(f);
                            }
                            std::process::exit(128 + signal);
                        }
                    })
                    .map(|_| ())
            })
            .map_err(|e| format!("catching termination signals: {e}"));
    });
    result
}

/// Ends the process as a closed pipe would have (status 141, as the shell reports a process that
/// SIGPIPE killed, which Rust ignores), quietly, removing the temporary files open now first.
fn closed_pipe() -> ! {
    let files = live();
    for f in files.iter() {
        let _ = std::fs::remove_file(f);
    }
    std::process::exit(141)
}

/// An output file being written: write to it, then [`Output::commit`]. Dropped without a commit, it
/// leaves the destination as it was (a temporary file is removed).
pub struct Output {
    path: String,
    target: Target,
}

enum Target {
    /// A temporary file beside the destination, renamed over it on commit. `None` once consumed.
    Temp(Option<tempfile::NamedTempFile>),
    /// A character device or FIFO, written in place.
    Stream(File),
}

impl Output {
    /// Opens the output `path` as the [module documentation](self) describes.
    /// Why no file can be made in `dir`, the output's folder, in the user's terms: the folder, not the
    /// temporary file's name.
    fn folder_error(path: &str, dir: &Path, e: &std::io::Error) -> String {
        let dir = dir.display();
        match std::fs::metadata(dir.to_string()) {
            Err(_) => format!("{path}: the folder {dir} does not exist"),
            Ok(m) if !m.is_dir() => format!("{path}: {dir} is not a folder"),
            Ok(_) => {
                // The io error without the path tempfile appends to it.
                let what = std::io::Error::from(e.kind());
                let what = match e.raw_os_error() {
                    Some(code) => std::io::Error::from_raw_os_error(code).to_string(),
                    None => what.to_string(),
                };
                format!("{path}: cannot create a file in {dir}: {what}")
            }
        }
    }

    pub fn create(path: &str) -> Result<Output, String> {
        let p = Path::new(path);
        let mut kept_mode = None;
        match std::fs::symlink_metadata(p) {
            Ok(meta) => {
                let t = meta.file_type();
                if t.is_char_device() || t.is_fifo() {
                    return Self::stream(path, false);
                }
                if t.is_symlink() && Self::leads_to_a_stream(p) {
                    return Self::stream(path, true);
                }
                if t.is_dir() {
                    return Err(format!("{path} is a folder; give a file name"));
                }
                if t.is_file() {
                    kept_mode = Some(meta.permissions().mode() & 0o777);
                } else if !t.is_symlink() {
                    return Err(format!(
                        "{path} is neither a regular file, a character device nor a FIFO; \
                         refusing to write to it"
                    ));
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("{path}: {e}")),
        }
        let name = p.file_name().ok_or_else(|| {
            format!("{path:?} names no file to write (it is empty, a root or ends in '..')")
        })?;
        let dir = match p.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let mut prefix = std::ffi::OsString::from(".");
        prefix.push(name);
        prefix.push(".");
        catch_signals()?;
        // Created and registered under the lock, so a signal either comes before the file exists or
        // finds it in the list.
        let mut files = live();
        let tmp = tempfile::Builder::new()
            .prefix(&prefix)
            .suffix(".tmp")
            // Less the umask, as for any newly created file.
            .permissions(std::fs::Permissions::from_mode(kept_mode.unwrap_or(0o666)))
            .tempfile_in(dir)
            .map_err(|e| Self::folder_error(path, dir, &e))?;
        files.push(tmp.path().to_path_buf());
        drop(files);
        let out = Output {
            path: path.to_string(),
            target: Target::Temp(Some(tmp)),
        };
        if let (Some(mode), Target::Temp(Some(t))) = (kept_mode, &out.target) {
            t.as_file()
                .set_permissions(std::fs::Permissions::from_mode(mode))
                .map_err(|e| format!("{path}: {e}"))?;
        }
        Ok(out)
    }

    /// Whether the link `p` leads to a character device or FIFO, or into `/proc` (a process's open
    /// files).
    fn leads_to_a_stream(p: &Path) -> bool {
        let into_proc = std::fs::read_link(p).is_ok_and(|t| t.starts_with("/proc/"));
        std::fs::metadata(p).is_ok_and(|m| {
            let t = m.file_type();
            t.is_char_device() || t.is_fifo() || (into_proc && t.is_file())
        })
    }

    /// Opens a character device or FIFO (through a link when `through_link`) for writing in place.
    fn stream(path: &str, through_link: bool) -> Result<Output, String> {
        let mut options = OpenOptions::new();
        options.write(true);
        if through_link {
            // A regular file reached through /proc is appended to, as the shell opened it.
            options.append(std::fs::metadata(path).is_ok_and(|m| m.is_file()));
        } else {
            options.custom_flags(libc::O_NOFOLLOW);
        }
        let f = options.open(path).map_err(|e| format!("{path}: {e}"))?;
        // What was opened is what was checked (the path may have changed in between).
        let t = f
            .metadata()
            .map_err(|e| format!("{path}: {e}"))?
            .file_type();
        let regular_ok = through_link && Self::leads_to_a_stream(Path::new(path));
        if !(t.is_char_device() || t.is_fifo() || (regular_ok && t.is_file())) {
            return Err(format!("{path} changed while it was being opened"));
        }
        Ok(Output {
            path: path.to_string(),
            target: Target::Stream(f),
        })
    }

    /// Writes all of `data`, with an error naming the destination. A stream whose reader has gone (a
    /// pipe closed early, as `-o /dev/stdout | head` does) ends the process quietly, as a closed stdout
    /// does (see [`closed_pipe`]).
    pub fn put(&mut self, data: &[u8]) -> Result<(), String> {
        match self.write_all(data) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => closed_pipe(),
            r => r.map_err(|e| format!("writing {}: {e}", self.path)),
        }
    }

    /// Finishes the output: syncs a temporary file and renames it over the destination, or flushes a
    /// stream.
    pub fn commit(mut self) -> Result<(), String> {
        let path = self.path.clone();
        match &mut self.target {
            Target::Stream(f) => match f.flush() {
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => closed_pipe(),
                r => r.map_err(|e| format!("writing {path}: {e}")),
            },
            Target::Temp(slot) => {
                let Some(tmp) = slot.take() else {
                    return Ok(());
                };
                tmp.as_file()
                    .sync_data()
                    .map_err(|e| format!("writing {path}: {e}"))?;
                let mut files = live();
                let tmp_path = tmp.path().to_path_buf();
                // On failure the temporary file comes back in the error and is removed as it drops.
                let done = tmp
                    .persist(&path)
                    .map(|_| ())
                    .map_err(|e| format!("{path}: {}", e.error));
                files.retain(|f| *f != tmp_path);
                done
            }
        }
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match &mut self.target {
            Target::Temp(Some(t)) => t.write(buf),
            Target::Temp(None) => Err(std::io::Error::other("output already committed")),
            Target::Stream(f) => f.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.target {
            Target::Temp(Some(t)) => t.flush(),
            Target::Temp(None) => Ok(()),
            Target::Stream(f) => f.flush(),
        }
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        if let Target::Temp(slot) = &mut self.target {
            if let Some(tmp) = slot.take() {
                let mut files = live();
                let tmp_path = tmp.path().to_path_buf();
                let _ = tmp.close();
                files.retain(|f| *f != tmp_path);
            }
        }
    }
}

/// Writes `data` to `path` as [`Output`] does: whole or not at all for a file, streamed for a
/// character device or FIFO.
pub fn write_atomically(path: &str, data: &[u8]) -> Result<(), String> {
    let mut out = Output::create(path)?;
    out.put(data)?;
    out.commit()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// A fresh folder, removed when dropped (a failing test's too).
    fn dir(name: &str) -> tempfile::TempDir {
        tempfile::Builder::new()
            .prefix(&format!("axe-output-{name}-"))
            .tempdir()
            .unwrap()
    }

    fn names(d: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_dropped_output_leaves_nothing_and_the_old_file_intact() {
        let t = dir("drop");
        let d = t.path();
        let p = d.join("out.bin");
        std::fs::write(&p, b"old").unwrap();
        let mut o = Output::create(p.to_str().unwrap()).unwrap();
        o.put(b"new data").unwrap();
        assert_eq!(names(d).len(), 2, "{:?}", names(d));
        assert!(live().iter().any(|f| f.starts_with(d)));
        drop(o);
        assert_eq!(names(d), ["out.bin"]);
        assert_eq!(std::fs::read(&p).unwrap(), b"old");
        assert!(!live().iter().any(|f| f.starts_with(d)));
    }

    #[test]
    fn a_new_file_gets_the_permissions_any_new_file_gets() {
        let t = dir("new-mode");
        let d = t.path();
        std::fs::write(d.join("plain"), b"x").unwrap();
        write_atomically(d.join("out.bin").to_str().unwrap(), b"x").unwrap();
        let mode = |n: &str| d.join(n).metadata().unwrap().permissions().mode();
        assert_eq!(mode("out.bin"), mode("plain"));
    }

    #[test]
    fn a_commit_keeps_the_permission_bits() {
        let t = dir("mode");
        let d = t.path();
        let p = d.join("out.bin");
        std::fs::write(&p, b"old").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_atomically(p.to_str().unwrap(), b"new").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        assert_eq!(p.metadata().unwrap().permissions().mode() & 0o777, 0o640);
        assert_eq!(names(d), ["out.bin"]);
    }
}
