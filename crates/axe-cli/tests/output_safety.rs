#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! Output files: devices and FIFOs are written in place, never replaced; temporary files have
//! unpredictable names, follow no planted link, and are gone after an error or a termination signal.

mod common;

use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{arg, folder, names, run};

fn axe() -> PathBuf {
    assert_cmd::cargo::cargo_bin("axe")
}

fn mkfifo(p: &Path) {
    let ok = Command::new("mkfifo").arg(p).status().unwrap().success();
    assert!(ok, "mkfifo {}", p.display());
}

/// The character device `/dev/NAME` (`null` or `full`): a private copy made in `d` where `mknod` is
/// allowed, so that a regression replaces that copy and not the machine's device; otherwise the
/// device itself.
fn device(d: &Path, name: &str) -> String {
    let minor = if name == "full" { "7" } else { "3" };
    let p = d.join(name);
    let made = Command::new("mknod")
        .args(["-m", "666"])
        .arg(&p)
        .args(["c", "1", minor])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    // A folder on a `nodev` mount holds device nodes that cannot be opened.
    if made && std::fs::OpenOptions::new().write(true).open(&p).is_ok() {
        arg(&p)
    } else {
        format!("/dev/{name}")
    }
}

fn is_char_device(p: &str) -> bool {
    std::fs::symlink_metadata(p)
        .map(|m| m.file_type().is_char_device())
        .unwrap_or(false)
}

#[test]
fn a_character_device_is_written_to_never_replaced() {
    let d = folder("output-dev");
    std::fs::write(d.join("a.bin"), [7u8; 60]).unwrap();
    let a = arg(&d.join("a.bin"));
    let null = device(&d, "null");
    let runs: [&[&str]; 3] = [
        &["hlo", "synth", "--instructions", "20", "-o", &null],
        &["render", "S[4:1]", "-o", &null],
        &[
            "relayout", "--shape", "f32[3,5]", "--to", "{0,1}", &a, &null,
        ],
    ];
    for args in runs {
        assert!(is_char_device(&null));
        let (code, _, err) = run(args);
        assert_eq!(code, 0, "{args:?}: {err}");
        assert!(is_char_device(&null), "{args:?} replaced {null}");
    }
    // A full device: a clear error, and the device stays.
    let full = device(&d, "full");
    let (code, _, err) = run(&[
        "relayout", "--shape", "f32[3,5]", "--to", "{0,1}", &a, &full,
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains(&full) && err.contains("No space"), "{err}");
    assert!(is_char_device(&full));
}

#[test]
fn a_fifo_is_streamed_into() {
    let d = folder("output-fifo");
    let data: Vec<u8> = (0..60u8).collect();
    std::fs::write(d.join("a.bin"), &data).unwrap();
    let fifo = d.join("out.bin");
    mkfifo(&fifo);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    let (code, _, err) = run(&[
        "relayout",
        "--shape",
        "u8[60]",
        "--to",
        "{0}",
        &arg(&d.join("a.bin")),
        &arg(&fifo),
    ]);
    assert_eq!(code, 0, "{err}");
    // Checked before joining: a reader whose FIFO was replaced would wait for ever.
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
    assert_eq!(reader.join().unwrap(), data);
    assert_eq!(names(&d), ["a.bin", "out.bin"]);
}

#[test]
fn folders_and_sockets_are_refused() {
    let d = folder("output-odd");
    let (code, _, err) = run(&["hlo", "synth", "--instructions", "5", "-o", &arg(&d)]);
    assert_eq!(code, 1);
    assert!(err.contains("folder"), "{err}");
    let sock = d.join("s.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    let (code, _, err) = run(&["hlo", "synth", "--instructions", "5", "-o", &arg(&sock)]);
    assert_eq!(code, 1);
    assert!(err.contains("refusing"), "{err}");
    assert_eq!(names(&d), ["s.sock"]);
}

#[test]
fn a_link_planted_at_the_old_temporary_name_is_not_followed() {
    // The shell plants a link where a temporary file named after the process id would go, then
    // becomes axe (exec keeps the id).
    let d = folder("output-plant");
    std::fs::write(d.join("victim"), b"precious").unwrap();
    let status = Command::new("sh")
        .current_dir(&d)
        .arg("-c")
        .arg(r#"ln -s victim "out.hlo.tmp-$$" && exec "$0" hlo synth --instructions 5 -o out.hlo"#)
        .arg(axe())
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(std::fs::read(d.join("victim")).unwrap(), b"precious");
    let out = std::fs::symlink_metadata(d.join("out.hlo")).unwrap();
    assert!(out.file_type().is_file());
    assert!(std::fs::read_to_string(d.join("out.hlo"))
        .unwrap()
        .contains("HloModule"));
}

#[test]
fn an_output_that_is_a_link_is_replaced_not_written_through() {
    let d = folder("output-link");
    std::fs::write(d.join("target"), b"kept").unwrap();
    std::os::unix::fs::symlink("target", d.join("out.hlo")).unwrap();
    let (code, _, err) = run(&[
        "hlo",
        "synth",
        "--instructions",
        "5",
        "-o",
        &arg(&d.join("out.hlo")),
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read(d.join("target")).unwrap(), b"kept");
    assert!(std::fs::symlink_metadata(d.join("out.hlo"))
        .unwrap()
        .file_type()
        .is_file());
    assert_eq!(names(&d), ["out.hlo", "target"]);
}

#[test]
fn a_link_to_a_device_or_an_open_file_is_written_through() {
    let d = folder("output-through");
    // To a device (as /dev/stdout leads to a terminal): the device is written, the link stays.
    let null = device(&d, "null");
    std::os::unix::fs::symlink(&null, d.join("out.hlo")).unwrap();
    let (code, _, err) = run(&[
        "hlo",
        "synth",
        "--instructions",
        "5",
        "-o",
        &arg(&d.join("out.hlo")),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(is_char_device(&null));
    assert!(std::fs::symlink_metadata(d.join("out.hlo"))
        .unwrap()
        .file_type()
        .is_symlink());
    // Into /proc, as /dev/stdout is: whatever stdout is (a pipe, a file the shell opened with `>` or
    // `>>`) gets the output, and the link stays.
    let stdout = d.join("stdout");
    std::os::unix::fs::symlink("/proc/self/fd/1", &stdout).unwrap();
    let synth = ["hlo", "synth", "--instructions", "5", "-o", &arg(&stdout)];
    let piped = Command::new(axe()).args(synth).output().unwrap();
    assert!(piped.status.success());
    assert!(String::from_utf8_lossy(&piped.stdout).starts_with("HloModule"));
    let file = d.join("file.txt");
    std::fs::write(&file, "kept\n").unwrap();
    let append = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .unwrap();
    let status = Command::new(axe())
        .args(synth)
        .stdout(append)
        .status()
        .unwrap();
    assert!(status.success());
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.starts_with("kept\nHloModule"), "{text}");
    assert!(std::fs::symlink_metadata(&stdout)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(
        names(&d).iter().all(|n| !n.starts_with('.')),
        "{:?}",
        names(&d)
    );
}

#[test]
fn a_failed_write_leaves_no_temporary_file_and_the_old_output_intact() {
    // A file-size limit makes the write fail part-way (EFBIG), as a full disk does (ENOSPC).
    let d = folder("output-limit");
    std::fs::write(d.join("a.bin"), vec![1u8; 1 << 20]).unwrap();
    std::fs::write(d.join("out.bin"), b"old").unwrap();
    let out = Command::new("sh")
        .current_dir(&d)
        .arg("-c")
        .arg(r#"trap '' XFSZ; ulimit -f 64; exec "$0" relayout --shape 'u8[1048576]' --to '{0}' a.bin out.bin"#)
        .arg(axe())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("out.bin") && err.contains("too large"),
        "{err}"
    );
    assert_eq!(names(&d), ["a.bin", "out.bin"]);
    assert_eq!(std::fs::read(d.join("out.bin")).unwrap(), b"old");
}

#[test]
fn a_termination_signal_removes_the_temporary_file() {
    // The input is a FIFO that gets no data, so axe waits inside the job with its output open;
    // then a signal arrives.
    for (name, number) in [("TERM", 15), ("INT", 2), ("HUP", 1)] {
        let d = folder(&format!("signal-{name}"));
        let input = d.join("in.bin");
        mkfifo(&input);
        std::fs::write(d.join("out.bin"), b"old").unwrap();
        let mut child = Command::new(axe())
            .args(["relayout", "--shape", "f32[1024,1024]", "--to", "{0,1}"])
            .arg(&input)
            .arg(d.join("out.bin"))
            .stdin(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Blocks until axe opens the FIFO; held open (and silent) until the end.
        let writer = std::fs::OpenOptions::new()
            .write(true)
            .open(&input)
            .unwrap();
        let mut waited = 0;
        while names(&d).len() < 3 {
            assert!(
                waited < 60_000,
                "no temporary file appeared: {:?}",
                names(&d)
            );
            std::thread::sleep(std::time::Duration::from_millis(10));
            waited += 10;
        }
        let temp = names(&d)
            .into_iter()
            .find(|n| n.starts_with(".out.bin."))
            .unwrap_or_else(|| panic!("{:?}", names(&d)));
        assert_ne!(temp, format!("out.bin.tmp-{}", child.id()));
        // The shell's own kill, which every system has.
        let sent = Command::new("sh")
            .args(["-c", r#"kill -s "$0" "$1""#, name, &child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        let status = child.wait().unwrap();
        drop(writer);
        assert_eq!(status.code(), Some(128 + number), "SIG{name}: {status:?}");
        assert_eq!(names(&d), ["in.bin", "out.bin"], "SIG{name}");
        assert_eq!(std::fs::read(d.join("out.bin")).unwrap(), b"old");
    }
}
