//! `axe relayout`: rewrite a tensor file from one layout into another.

use std::io::{IsTerminal, Read, Write};

use axe_relayout::{relayout, Options, TensorLayout};
use axe_xla::{parse_layout, parse_shape, ArrayShape, PrimitiveType, Shape};
use clap::Args;

use crate::hlo_cmd::write_atomically;

#[derive(Args)]
pub struct RelayoutArgs {
    /// The input's shape and layout, e.g. 'f32[4096,4096]{1,0}' (a .npy input is row-major).
    #[arg(long)]
    shape: String,
    /// The output layout: an XLA layout '{1,0:T(8,128)}', a whole shape, or an Axe layout on m 'S[...]'.
    #[arg(long)]
    to: String,
    /// Input file: .npy (row-major) or raw bytes (.bin) in --shape's layout.
    input: String,
    /// Output file: raw bytes (.bin) in --to's layout, or .npy when --to is row-major. Written atomically.
    output: String,
    /// Worker threads (0: all cores).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Leave the output's padding bytes as zero-initialised memory left them instead of writing zeros
    /// explicitly (faster when padding dominates).
    #[arg(long)]
    keep_padding: bool,
    /// Print the plan.
    #[arg(long)]
    explain: bool,
}

fn array(text: &str) -> Result<ArrayShape, String> {
    match parse_shape(text).map_err(|e| e.to_string())? {
        Shape::Array(a) => Ok(a),
        other => Err(format!("{other} is not an array shape")),
    }
}

/// The numpy dtype of an element type (bf16 has none: its raw 16 bits are written as '<u2').
fn npy_descr(t: PrimitiveType) -> Option<&'static str> {
    use PrimitiveType::*;
    Some(match t {
        Pred => "|b1",
        S8 => "|i1",
        S16 => "<i2",
        S32 => "<i4",
        S64 => "<i8",
        U8 => "|u1",
        U16 => "<u2",
        U32 => "<u4",
        U64 => "<u8",
        F16 => "<f2",
        Bf16 => "<u2",
        F32 => "<f4",
        F64 => "<f8",
        C64 => "<c8",
        C128 => "<c16",
        _ if t.bits() == 8 => "|u1",
        _ => return None,
    })
}

fn is_row_major_dense(a: &ArrayShape) -> bool {
    a.layout == axe_xla::Layout::default_for_rank(a.rank())
}

fn destination(to: &str, src: &ArrayShape) -> Result<(TensorLayout, Option<ArrayShape>), String> {
    let t = to.trim();
    if t.starts_with('{') {
        let layout = parse_layout(t, src.rank()).map_err(|e| e.to_string())?;
        let a = ArrayShape {
            layout,
            ..src.clone()
        };
        return Ok((
            TensorLayout::from_xla(&a).map_err(|e| e.to_string())?,
            Some(a),
        ));
    }
    if t.starts_with(|c: char| c.is_ascii_lowercase()) {
        let a = array(t)?;
        if a.dims != src.dims || a.element_type != src.element_type {
            return Err(format!("--to {a} is not the same tensor as --shape {src}"));
        }
        return Ok((
            TensorLayout::from_xla(&a).map_err(|e| e.to_string())?,
            Some(a),
        ));
    }
    let l: axe_layout::Layout = t
        .parse()
        .map_err(|e: axe_layout::LayoutError| e.to_string())?;
    let dims: Vec<u64> = axe_xla::static_dims(src)
        .map_err(|e| e.to_string())?
        .iter()
        .map(|&d| d as u64)
        .collect();
    let bits = axe_xla::element_bits(src) as u32;
    Ok((
        TensorLayout::from_axe(&l, &dims, bits).map_err(|e| e.to_string())?,
        None,
    ))
}

/// The first `need` bytes of `reader`, in a tensor buffer (huge pages, see [`crate::file::tensor_buffer`]),
/// or an error naming `what` if it holds fewer.
fn read_tensor(
    mut reader: impl Read,
    need: u64,
    path: &str,
    what: impl Fn(u64) -> String,
) -> Result<memmap2::MmapMut, String> {
    let mut data = crate::file::tensor_buffer(need as usize)?;
    let mut got = 0;
    while got < need as usize {
        match reader.read(&mut data[got..need as usize]) {
            Ok(0) => return Err(what(got as u64)),
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(format!("{path}: {e}")),
        }
    }
    Ok(data)
}

fn read_input(path: &str, src: &ArrayShape, need: u64) -> Result<memmap2::MmapMut, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{path}: {e}"))?;
    if path.ends_with(".npy") {
        let npy = npyz::NpyFile::new(std::io::BufReader::new(file))
            .map_err(|e| format!("{path}: {e}"))?;
        if !is_row_major_dense(src) {
            return Err(format!("{path} holds a row-major array, but --shape says {src}; give raw bytes (.bin) for other layouts"));
        }
        let dims: Vec<u64> = axe_xla::static_dims(src)
            .map_err(|e| e.to_string())?
            .iter()
            .map(|&d| d as u64)
            .collect();
        if npy.shape() != dims.as_slice() {
            return Err(format!(
                "{path} has shape {:?}, --shape says {dims:?}",
                npy.shape()
            ));
        }
        if npy.order() != npyz::Order::C {
            return Err(format!("{path} is in Fortran order; save it in C order"));
        }
        let width = npy.header().dtype().num_bytes();
        if width != Some(src.element_type.byte_width() as usize) {
            return Err(format!(
                "{path} has {:?}-byte elements, {} takes {}",
                width,
                src.element_type,
                src.element_type.byte_width()
            ));
        }
        return read_tensor(npy.into_inner(), need, path, |got| {
            format!("{path} holds {got} bytes of data, the shape needs {need}")
        });
    }
    let reader = std::io::BufReader::with_capacity(1 << 20, file);
    read_tensor(reader, need, path, |got| {
        format!("{path} has {got} bytes, {src} needs {need}")
    })
}

fn write_output(path: &str, dst_shape: Option<&ArrayShape>, data: &[u8]) -> Result<(), String> {
    if path.ends_with(".npy") {
        let a = dst_shape.filter(|a| is_row_major_dense(a)).ok_or_else(|| {
            format!("{path}: a .npy file holds a row-major array; write other layouts as raw bytes (.bin)")
        })?;
        let descr = npy_descr(a.element_type)
            .ok_or_else(|| format!("{path}: {} has no numpy dtype; use .bin", a.element_type))?;
        let dims: Vec<u64> = a
            .dims
            .iter()
            .map(|d| d.bound().unwrap_or(0) as u64)
            .collect();
        let mut out = Vec::with_capacity(data.len() + 128);
        {
            use npyz::WriterBuilder;
            let dtype = npyz::DType::Plain(descr.parse().map_err(|e| format!("{descr}: {e}"))?);
            let w = npyz::WriteOptions::new_header_only()
                .dtype(dtype)
                .shape(&dims)
                .writer(&mut out)
                .write_header_only()
                .map_err(|e| e.to_string())?;
            w.write_all(data).map_err(|e| e.to_string())?;
        }
        return write_atomically(path, &out);
    }
    write_atomically(path, data)
}

pub fn run(args: RelayoutArgs) -> bool {
    let result = (|| -> Result<String, String> {
        let src = array(&args.shape)?;
        let src_layout = TensorLayout::from_xla(&src).map_err(|e| e.to_string())?;
        let (dst_layout, dst_shape) = destination(&args.to, &src)?;
        let progress =
            (std::io::stderr().is_terminal() && src_layout.bytes() > 64 << 20).then(|| {
                let p = indicatif::ProgressBar::new_spinner();
                p.enable_steady_tick(std::time::Duration::from_millis(120));
                p
            });
        let say = |m: &str| {
            if let Some(p) = &progress {
                p.set_message(m.to_string());
            }
        };
        say(&format!("reading {}", args.input));
        let input = read_input(&args.input, &src, src_layout.bytes())?;
        say("relayout");
        let mut output = crate::file::tensor_buffer(dst_layout.bytes() as usize)?;
        crate::file::populate(&output);
        let opts = Options {
            zero_padding: !args.keep_padding,
            threads: args.threads,
            ..Options::default()
        };
        let start = std::time::Instant::now();
        let plan = relayout(&input, &src_layout, &mut output, &dst_layout, &opts)
            .map_err(|e| e.to_string())?;
        let secs = start.elapsed().as_secs_f64();
        say(&format!("writing {}", args.output));
        write_output(&args.output, dst_shape.as_ref(), &output)?;
        if let Some(p) = progress {
            p.finish_and_clear();
        }
        let moved = (src_layout.bytes() + dst_layout.bytes()) as f64;
        let mut msg = format!(
            "{} -> {}: {} bytes in, {} bytes out, {:.2} GB/s",
            src,
            dst_shape.map_or(args.to.clone(), |a| a.to_string()),
            src_layout.bytes(),
            dst_layout.bytes(),
            moved / secs / 1e9
        );
        if args.explain {
            msg.push_str(&format!("\nplan: {}", plan.explain()));
        }
        Ok(msg)
    })();
    match result {
        Ok(m) => {
            eprintln!("{m}");
            true
        }
        Err(e) => {
            eprintln!("error: {e}");
            false
        }
    }
}
