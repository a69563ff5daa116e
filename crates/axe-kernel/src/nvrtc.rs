//! Compiling emitted CUDA C++ with NVRTC, in a child process.
//!
//! NVRTC is loaded at run time from NVIDIA's pip wheel (`nvidia-cuda-nvrtc`, installed in the project's
//! `.venv`); no CUDA toolkit is needed to build. Compilation runs in a child process (NVRTC can crash on
//! bad inline assembly): the parent ([`compile`]) starts a helper executable that calls [`child_main`],
//! sends the source on stdin and reads back the log, PTX and cubin. Results can be cached on disk, keyed
//! by a hash of the source, the architecture and the NVRTC library.
#![allow(unsafe_code)] // dlopen and the NVRTC C API; confined to `compile_here`.

use std::ffi::{c_char, c_int, CStr, CString};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::error::{KernelError, Result};

/// What NVRTC produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compiled {
    /// The compile log (warnings).
    pub log: String,
    /// PTX text.
    pub ptx: String,
    /// The cubin (ELF) for the real architecture.
    pub cubin: Vec<u8>,
}

/// The NVRTC library: `$AXE_NVRTC` if set, else the pip wheel's `libnvrtc.so.*` under `venv`, else a CUDA
/// toolkit's (`$CUDA_HOME`, or `/usr/local/cuda`).
pub fn find_nvrtc(venv: &Path) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("AXE_NVRTC") {
        return Some(PathBuf::from(p));
    }
    let lib = venv.join("lib");
    let pythons = std::fs::read_dir(&lib).into_iter().flatten();
    let mut found = Vec::new();
    for py in pythons.flatten() {
        let nv = py.path().join("site-packages").join("nvidia");
        for sub in ["cu13/lib", "cu12/lib", "cuda_nvrtc/lib"] {
            if let Ok(dir) = std::fs::read_dir(nv.join(sub)) {
                for f in dir.flatten() {
                    let name = f.file_name().to_string_lossy().to_string();
                    if name.starts_with("libnvrtc.so") {
                        found.push(f.path());
                    }
                }
            }
        }
    }
    found.sort();
    found.pop().or_else(toolkit_nvrtc)
}

/// NVRTC from a CUDA toolkit: `$CUDA_HOME/lib64`, else `/usr/local/cuda/lib64`.
fn toolkit_nvrtc() -> Option<PathBuf> {
    let home = std::env::var_os("CUDA_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/local/cuda"));
    let mut found: Vec<PathBuf> = std::fs::read_dir(home.join("lib64"))
        .ok()?
        .flatten()
        .map(|f| f.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("libnvrtc.so"))
        })
        .collect();
    found.sort();
    found.pop()
}

type Prog = *mut std::ffi::c_void;

/// Compiles in this process. Prefer [`compile`]: a crash in NVRTC takes the caller down.
pub fn compile_here(lib: &Path, source: &str, name: &str, arch: &str) -> Result<Compiled> {
    let err = |m: String| KernelError::Nvrtc(m);
    let src = CString::new(source).map_err(|_| err("the source contains a NUL byte".into()))?;
    let cname = CString::new(name).map_err(|_| err("the name contains a NUL byte".into()))?;
    let opts: Vec<CString> = [
        format!("--gpu-architecture={arch}"),
        "--std=c++17".into(),
        "-lineinfo".into(),
        // ptxas reports registers, spills and stack per kernel in the log.
        "--ptxas-options=-v".into(),
    ]
    .into_iter()
    .filter_map(|o| CString::new(o).ok())
    .collect();
    let opt_ptrs: Vec<*const c_char> = opts.iter().map(|o| o.as_ptr()).collect();
    // SAFETY: loading NVRTC runs its initialisers; the library is NVIDIA's, found by the caller.
    let l = unsafe { libloading::Library::new(lib) }
        .map_err(|e| err(format!("cannot load {}: {e}", lib.display())))?;
    type Create = unsafe extern "C" fn(
        *mut Prog,
        *const c_char,
        *const c_char,
        c_int,
        *const *const c_char,
        *const *const c_char,
    ) -> c_int;
    type Compile = unsafe extern "C" fn(Prog, c_int, *const *const c_char) -> c_int;
    type Size = unsafe extern "C" fn(Prog, *mut usize) -> c_int;
    type Get = unsafe extern "C" fn(Prog, *mut c_char) -> c_int;
    type Destroy = unsafe extern "C" fn(*mut Prog) -> c_int;
    type ErrStr = unsafe extern "C" fn(c_int) -> *const c_char;
    macro_rules! sym {
        ($t:ty, $n:literal) => {
            // SAFETY: the symbol has this C signature in every NVRTC since 11.
            *unsafe { l.get::<$t>($n) }
                .map_err(|e| err(format!("NVRTC lacks {}: {e}", String::from_utf8_lossy($n))))?
        };
    }
    let create: Create = sym!(Create, b"nvrtcCreateProgram\0");
    let compile: Compile = sym!(Compile, b"nvrtcCompileProgram\0");
    let log_size: Size = sym!(Size, b"nvrtcGetProgramLogSize\0");
    let get_log: Get = sym!(Get, b"nvrtcGetProgramLog\0");
    let ptx_size: Size = sym!(Size, b"nvrtcGetPTXSize\0");
    let get_ptx: Get = sym!(Get, b"nvrtcGetPTX\0");
    let cubin_size: Size = sym!(Size, b"nvrtcGetCUBINSize\0");
    let get_cubin: Get = sym!(Get, b"nvrtcGetCUBIN\0");
    let destroy: Destroy = sym!(Destroy, b"nvrtcDestroyProgram\0");
    let err_str: ErrStr = sym!(ErrStr, b"nvrtcGetErrorString\0");
    let describe = |code: c_int| -> String {
        // SAFETY: NVRTC returns a static NUL-terminated string for every code.
        let p = unsafe { err_str(code) };
        if p.is_null() {
            format!("error {code}")
        } else {
            unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
        }
    };
    let mut prog: Prog = std::ptr::null_mut();
    // SAFETY: valid NUL-terminated strings; no headers.
    let rc = unsafe {
        create(
            &mut prog,
            src.as_ptr(),
            cname.as_ptr(),
            0,
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    if rc != 0 {
        return Err(err(format!("nvrtcCreateProgram: {}", describe(rc))));
    }
    let fetch = |size: Size, get: Get| -> Option<Vec<u8>> {
        let mut n = 0usize;
        // SAFETY: prog is a live program; the buffer has the size NVRTC reported.
        if unsafe { size(prog, &mut n) } != 0 {
            return None;
        }
        let mut buf = vec![0u8; n];
        if unsafe { get(prog, buf.as_mut_ptr().cast()) } != 0 {
            return None;
        }
        Some(buf)
    };
    // SAFETY: prog is live; the option pointers outlive the call.
    let rc = unsafe { compile(prog, opt_ptrs.len() as c_int, opt_ptrs.as_ptr()) };
    let text = |b: Vec<u8>| {
        String::from_utf8_lossy(b.split(|&c| c == 0).next().unwrap_or(&[])).into_owned()
    };
    let log = fetch(log_size, get_log).map(text).unwrap_or_default();
    let out = if rc != 0 {
        Err(err(format!(
            "compiling {name} for {arch}: {}\n{log}",
            describe(rc)
        )))
    } else {
        Ok(Compiled {
            log,
            ptx: fetch(ptx_size, get_ptx).map(text).unwrap_or_default(),
            cubin: fetch(cubin_size, get_cubin).unwrap_or_default(),
        })
    };
    // SAFETY: destroys the program created above, once.
    unsafe { destroy(&mut prog) };
    out
}

/// Registers per thread of the cubin's kernels (the largest `EIATTR_REGCOUNT` in its `.nv.info`
/// sections), or `None` when the ELF has none or is malformed. Every read is bounds-checked.
pub fn cubin_registers(cubin: &[u8]) -> Option<u32> {
    let u16_at = |o: usize| {
        cubin
            .get(o..o + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
    };
    let u32_at = |o: usize| {
        cubin
            .get(o..o + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let u64_at = |o: usize| {
        cubin
            .get(o..o + 8)
            .and_then(|b| b.try_into().ok())
            .map(u64::from_le_bytes)
    };
    if !cubin.starts_with(b"\x7fELF\x02") {
        return None;
    }
    let shoff = usize::try_from(u64_at(0x28)?).ok()?;
    let (entsize, count, strndx) = (
        usize::from(u16_at(0x3a)?),
        usize::from(u16_at(0x3c)?),
        usize::from(u16_at(0x3e)?),
    );
    let section = |i: usize| -> Option<(u32, usize, usize)> {
        let o = shoff.checked_add(i.checked_mul(entsize)?)?;
        Some((
            u32_at(o)?,
            usize::try_from(u64_at(o + 24)?).ok()?,
            usize::try_from(u64_at(o + 32)?).ok()?,
        ))
    };
    let strtab = section(strndx)?.1;
    let mut best = None;
    for i in 0..count {
        let (name, off, size) = section(i)?;
        let start = strtab.checked_add(name as usize)?;
        let end = start + cubin.get(start..)?.iter().position(|&c| c == 0)?;
        if !cubin.get(start..end)?.starts_with(b".nv.info") {
            continue;
        }
        let (mut p, stop) = (off, off.checked_add(size)?);
        while p + 2 <= stop {
            let (fmt, attr) = (*cubin.get(p)?, *cubin.get(p + 1)?);
            match fmt {
                4 => {
                    let len = usize::from(u16_at(p + 2)?);
                    if attr == 0x2f {
                        let regs = u32_at(p + 8)?;
                        best = Some(best.map_or(regs, |b: u32| b.max(regs)));
                    }
                    p += 4 + len;
                }
                2 | 3 => p += 4,
                _ => p += 2,
            }
        }
    }
    best
}

const MAGIC: &[u8] = b"AXE-NVRTC 1\n";

fn put(out: &mut Vec<u8>, tag: &str, bytes: &[u8]) {
    out.extend_from_slice(format!("{tag} {}\n", bytes.len()).as_bytes());
    out.extend_from_slice(bytes);
}

/// The child's side: reads the source from `input`, compiles with `lib` for `arch`, writes the framed
/// result to `output`. Returns the process exit code.
pub fn child_main(
    lib: &Path,
    name: &str,
    arch: &str,
    input: &mut dyn Read,
    output: &mut dyn Write,
) -> i32 {
    let mut src = String::new();
    let mut out = MAGIC.to_vec();
    let r = match input.read_to_string(&mut src) {
        Ok(_) => compile_here(lib, &src, name, arch),
        Err(e) => Err(KernelError::Nvrtc(format!("reading the source: {e}"))),
    };
    let code = match r {
        Ok(c) => {
            put(&mut out, "log", c.log.as_bytes());
            put(&mut out, "ptx", c.ptx.as_bytes());
            put(&mut out, "cubin", &c.cubin);
            0
        }
        Err(e) => {
            put(&mut out, "error", e.to_string().as_bytes());
            1
        }
    };
    if output.write_all(&out).is_err() {
        return 2;
    }
    code
}

fn parse_frames(mut b: &[u8]) -> Result<Vec<(String, Vec<u8>)>> {
    let bad = || KernelError::Nvrtc("the compiler process answered something unreadable".into());
    b = b.strip_prefix(MAGIC).ok_or_else(bad)?;
    let mut out = Vec::new();
    while !b.is_empty() {
        let nl = b.iter().position(|&c| c == b'\n').ok_or_else(bad)?;
        let head = std::str::from_utf8(&b[..nl]).map_err(|_| bad())?;
        let (tag, n) = head.split_once(' ').ok_or_else(bad)?;
        let n: usize = n.parse().map_err(|_| bad())?;
        let body = b.get(nl + 1..nl + 1 + n).ok_or_else(bad)?;
        out.push((tag.to_string(), body.to_vec()));
        b = &b[nl + 1 + n..];
    }
    Ok(out)
}

/// Compiles `source` for `arch` in a child process: `helper` is run with `args` (they must make it call
/// [`child_main`] with `lib`, `name`, `arch`). With `cache`, a result already there is reused.
pub fn compile(
    helper: &Path,
    args: &[String],
    lib: &Path,
    source: &str,
    name: &str,
    arch: &str,
    cache: Option<&Path>,
) -> Result<Compiled> {
    let key = cache_key(lib, source, arch);
    let cached = cache.map(|d| d.join(format!("{name}-{arch}-{key:016x}.bin")));
    if let Some(p) = &cached {
        if let Ok(b) = std::fs::read(p) {
            if let Ok(c) = decode(&b) {
                return Ok(c);
            }
        }
    }
    let mut child = Command::new(helper)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| KernelError::Nvrtc(format!("starting {}: {e}", helper.display())))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(source.as_bytes())
            .map_err(|e| KernelError::Nvrtc(format!("sending the source: {e}")))?;
    }
    let out = child
        .wait_with_output()
        .map_err(|e| KernelError::Nvrtc(format!("waiting for the compiler: {e}")))?;
    if out.stdout.is_empty() {
        return Err(KernelError::Nvrtc(format!(
            "the compiler process died ({}) without an answer: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let c = decode(&out.stdout)?;
    if let Some(p) = &cached {
        if let Some(d) = p.parent() {
            let _ = std::fs::create_dir_all(d);
        }
        let tmp = p.with_extension("tmp");
        if std::fs::write(&tmp, &out.stdout).is_ok() {
            let _ = std::fs::rename(&tmp, p);
        }
    }
    Ok(c)
}

fn decode(b: &[u8]) -> Result<Compiled> {
    let mut c = Compiled {
        log: String::new(),
        ptx: String::new(),
        cubin: Vec::new(),
    };
    for (tag, body) in parse_frames(b)? {
        match tag.as_str() {
            "error" => {
                return Err(KernelError::Nvrtc(
                    String::from_utf8_lossy(&body).into_owned(),
                ))
            }
            "log" => c.log = String::from_utf8_lossy(&body).into_owned(),
            "ptx" => c.ptx = String::from_utf8_lossy(&body).into_owned(),
            "cubin" => c.cubin = body,
            _ => {}
        }
    }
    Ok(c)
}

/// FNV-1a over the source, the architecture and the library's path, size and modification time.
/// Bumped whenever the compile options change.
const OPTIONS_VERSION: u32 = 2;

/// What ptxas said of a kernel's resources (`--ptxas-options=-v` in the log): registers per thread,
/// bytes of spill stores and loads, and stack frame bytes per thread; `None` where the log does not say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Resources {
    /// Registers per thread.
    pub registers: Option<u32>,
    /// Bytes of spill stores per thread.
    pub spill_stores: Option<u32>,
    /// Bytes of spill loads per thread.
    pub spill_loads: Option<u32>,
    /// Stack frame bytes per thread.
    pub stack: Option<u32>,
}

/// The resources ptxas reports in an NVRTC log (the last report, for a log of one kernel).
pub fn resources(log: &str) -> Resources {
    let num_before = |line: &str, what: &str| -> Option<u32> {
        let at = line.find(what)?;
        line[..at].split_whitespace().last()?.parse().ok()
    };
    let mut r = Resources::default();
    for line in log.lines() {
        if let Some(v) = num_before(line, "bytes stack frame") {
            r.stack = Some(v);
        }
        if let Some(v) = num_before(line, "bytes spill stores") {
            r.spill_stores = Some(v);
        }
        if let Some(v) = num_before(line, "bytes spill loads") {
            r.spill_loads = Some(v);
        }
        if let Some(v) = num_before(line, "registers") {
            r.registers = Some(v);
        }
    }
    r
}

fn cache_key(lib: &Path, source: &str, arch: &str) -> u64 {
    let meta = std::fs::metadata(lib).ok();
    // The options' version: results compiled with other options are not reused.
    let stamp = format!(
        "{OPTIONS_VERSION}|{}|{:?}|{:?}|{arch}|",
        lib.display(),
        meta.as_ref().map(|m| m.len()),
        meta.and_then(|m| m.modified().ok())
    );
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in stamp.as_bytes().iter().chain(source.as_bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ptxas_reports_are_read() {
        let log = "ptxas info    : Compiling entry function 'gemm' for 'sm_90a'\nptxas info    : Function properties for gemm\n    8 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\nptxas info    : Used 128 registers, used 1 barriers, 8 bytes cumulative stack size\n";
        assert_eq!(
            resources(log),
            Resources {
                registers: Some(128),
                spill_stores: Some(8),
                spill_loads: Some(12),
                stack: Some(8)
            }
        );
        assert_eq!(resources(""), Resources::default());
    }

    #[test]
    fn frames_round_trip_and_garbage_is_an_error() {
        let mut out = MAGIC.to_vec();
        put(&mut out, "log", b"warn");
        put(&mut out, "ptx", b".version 9.0");
        put(&mut out, "cubin", &[0x7f, b'E', 0, 1]);
        let c = decode(&out).unwrap();
        assert_eq!(
            (c.log.as_str(), c.ptx.as_str(), c.cubin.as_slice()),
            ("warn", ".version 9.0", &[0x7f, b'E', 0, 1][..])
        );
        assert!(decode(b"garbage").is_err());
        assert!(decode(&out[..out.len() - 1]).is_err());
        let mut e = MAGIC.to_vec();
        put(&mut e, "error", b"bad asm");
        assert_eq!(decode(&e), Err(KernelError::Nvrtc("bad asm".into())));
    }
}
