//! The format of a picture file, one rule for every command that writes pictures (`axe render -o`,
//! `axe shard show -o`): `--format` if given, else the file's extension, checked before any work.
//!
//! - A name ending `.svg`, `.png` or `.txt` (any case) is written in that format; `--format` naming
//!   another of them is an error, never PNG bytes in a `.svg`.
//! - A name with another extension, or with none, is refused with the extensions accepted, unless
//!   `--format` says what to write (`-o picture.out --format svg`).
//! - A character device or FIFO (`/dev/null`, `/dev/stdout` to a terminal, a pipe, or a `/proc` link to
//!   the shell's open file), which is written in place and has no name to choose, takes SVG by default.
//! - No file at all: `--format`, else SVG.

use clap::ValueEnum;

/// A picture format.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum Format {
    /// SVG (.svg).
    Svg,
    /// PNG, the SVG rasterised (.png).
    Png,
    /// Plain text, without colours (.txt).
    Txt,
}

impl Format {
    /// Every format, in the order messages name them.
    pub const ALL: [Format; 3] = [Format::Svg, Format::Png, Format::Txt];

    /// The format's name and file extension.
    pub fn name(self) -> &'static str {
        match self {
            Format::Svg => "svg",
            Format::Png => "png",
            Format::Txt => "txt",
        }
    }

    /// The format a file extension (without its dot, any case) names.
    fn of_extension(ext: &str) -> Option<Format> {
        Format::ALL
            .into_iter()
            .find(|f| ext.eq_ignore_ascii_case(f.name()))
    }
}

/// The extensions accepted, in words: `.svg, .png or .txt`.
fn accepted() -> String {
    let names: Vec<String> = Format::ALL
        .iter()
        .map(|f| format!(".{}", f.name()))
        .collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.concat(),
    }
}

/// Whether `path` is written in place rather than named by the user: a character device or FIFO, or a
/// link to one or into `/proc` (as `/dev/stdout` is), which [`crate::output::Output`] streams into.
fn is_stream(path: &str) -> bool {
    use std::os::unix::fs::FileTypeExt;
    let into_proc = std::fs::read_link(path).is_ok_and(|t| t.starts_with("/proc/"));
    std::fs::metadata(path).is_ok_and(|m| {
        let t = m.file_type();
        t.is_char_device() || t.is_fifo() || (into_proc && t.is_file())
    })
}

/// The format of a picture written to `path` (given with the option `flag`, e.g. `-o`) under
/// `--format` `format`, by the rule of the [module documentation](self); an error says what is wrong
/// with the name and which extensions are accepted.
pub fn picture_format(
    flag: &str,
    path: Option<&str>,
    format: Option<Format>,
) -> Result<Format, String> {
    let Some(path) = path else {
        return Ok(format.unwrap_or(Format::Svg));
    };
    let ext = std::path::Path::new(path)
        .extension()
        .map(|e| e.to_string_lossy().into_owned());
    let named = ext.as_deref().and_then(Format::of_extension);
    match (format, named, ext) {
        (Some(f), Some(n), _) if f != n => Err(format!(
            "{flag} {path} is named .{}, but --format asks for {}; make them agree",
            n.name(),
            f.name()
        )),
        (Some(f), _, _) => Ok(f),
        (None, Some(n), _) => Ok(n),
        (None, None, Some(other)) => Err(format!(
            "{flag} {path}: axe writes pictures as {}, not .{other}; name the file so, or say which \
             with --format",
            accepted()
        )),
        (None, None, None) if is_stream(path) => Ok(Format::Svg),
        (None, None, None) => Err(format!(
            "{flag} {path} has no extension to say the picture's format: name it {}, or say which \
             with --format",
            accepted()
        )),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_extension_or_format_decides_and_they_must_agree() {
        use Format::*;
        let f = |p: &str, fmt: Option<Format>| picture_format("-o", Some(p), fmt);
        // Every pair of (extension, --format): agreeing, one of them alone, or a refusal.
        for ext in ["svg", "PNG", "Txt", "jpg", "svgz", ""] {
            let path = if ext.is_empty() {
                "/nonexistent-dir/pic".to_string()
            } else {
                format!("/nonexistent-dir/pic.{ext}")
            };
            let named = Format::of_extension(ext);
            for fmt in [None, Some(Svg), Some(Png), Some(Txt)] {
                let got = f(&path, fmt);
                match (named, fmt) {
                    (Some(n), Some(g)) if n != g => {
                        let e = got.unwrap_err();
                        assert!(e.contains("make them agree"), "{path} {fmt:?}: {e}");
                    }
                    (Some(n), _) => assert_eq!(got, Ok(n), "{path} {fmt:?}"),
                    (None, Some(g)) => assert_eq!(got, Ok(g), "{path} {fmt:?}"),
                    (None, None) => {
                        let e = got.unwrap_err();
                        assert!(e.contains(".svg, .png or .txt"), "{path}: {e}");
                        assert!(e.contains("--format"), "{path}: {e}");
                    }
                }
            }
        }
        assert_eq!(picture_format("-o", None, None), Ok(Svg));
        assert_eq!(picture_format("-o", None, Some(Png)), Ok(Png));
    }

    #[test]
    fn a_device_written_in_place_takes_svg() {
        assert_eq!(
            picture_format("-o", Some("/dev/null"), None),
            Ok(Format::Svg)
        );
        assert!(picture_format("-o", Some("/tmp/no-such-axe-picture"), None).is_err());
    }
}
