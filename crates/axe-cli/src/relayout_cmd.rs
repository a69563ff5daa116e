//! `axe relayout`: rewrite a tensor file from one layout into another.

use std::io::IsTerminal;

use axe_relayout::split::{self, Side};
use axe_relayout::{first_out_of_range, value_bits, Options, TensorLayout};
use axe_xla::{parse_layout, parse_shape, ArrayShape, Shape};
use clap::Args;

use crate::output::Output;
use crate::tensor_file::{npy_header, open_input, read_tensor};

/// The most worker threads `--threads` takes.
const MAX_THREADS: i64 = axe_relayout::MAX_THREADS as i64;

#[derive(Args)]
pub struct RelayoutArgs {
    /// The input's shape and layout, e.g. 'f32[4096,4096]{1,0}' (a .npy input is row-major).
    #[arg(long)]
    shape: String,
    /// The output layout: an XLA layout '{1,0:T(8,128)}', a whole shape, or an Axe layout on m 'S[...]'.
    #[arg(long)]
    to: String,
    /// Input file: .npy (row-major, or column-major when saved in Fortran order) or raw bytes (.bin) in
    /// --shape's layout.
    input: String,
    /// Output file: raw bytes (.bin) in --to's layout, or .npy when --to is row-major (or column-major:
    /// a Fortran-order .npy). Written atomically.
    output: String,
    /// Worker threads (0: all cores; at most 1024).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u16).range(0..=MAX_THREADS))]
    threads: u16,
    /// Leave the output's padding bytes as zero-initialised memory left them instead of writing zeros
    /// explicitly (faster when padding dominates).
    #[arg(long)]
    keep_padding: bool,
    /// Print the plan.
    #[arg(long)]
    explain: bool,
    /// Where the bytes move: cpu (this machine's cores) or cuda (the first NVIDIA GPU, with the shipped
    /// relayout kernel compiled by NVRTC; --to must then be an XLA layout or shape).
    #[arg(long, value_enum, default_value_t = Device::Cpu)]
    device: Device,
    /// The virtual environment holding nvidia-cuda-nvrtc, for --device cuda (default: $AXE_VENV or
    /// ./.venv, else a CUDA toolkit's).
    #[arg(long)]
    venv: Option<String>,
}

/// Where `axe relayout` moves the bytes.
#[derive(clap::ValueEnum, Clone, Copy, PartialEq, Eq)]
pub enum Device {
    /// This machine's cores.
    Cpu,
    /// An NVIDIA GPU.
    Cuda,
}

fn array(text: &str) -> Result<ArrayShape, String> {
    match parse_shape(text).map_err(|e| e.to_string())? {
        Shape::Array(a) => Ok(a),
        other => Err(format!("{other} is not an array shape")),
    }
}

/// The output layout `--to` names: an XLA array, or an Axe layout over the source's dimensions.
#[allow(clippy::large_enum_variant, reason = "one value per command")]
enum Destination {
    Xla(ArrayShape),
    Axe(axe_layout::Layout, Vec<u64>, u32),
}

impl Destination {
    fn side(&self) -> Side<'_> {
        match self {
            Destination::Xla(a) => Side::Xla(a),
            Destination::Axe(layout, dims, bits) => Side::Axe {
                layout,
                dims,
                bits: *bits,
            },
        }
    }

    fn shape(&self) -> Option<&ArrayShape> {
        match self {
            Destination::Xla(a) => Some(a),
            Destination::Axe(..) => None,
        }
    }
}

fn destination(to: &str, src: &ArrayShape) -> Result<Destination, String> {
    let t = to.trim();
    if t.starts_with('{') {
        let layout = parse_layout(t, src.rank()).map_err(|e| e.to_string())?;
        return Ok(Destination::Xla(ArrayShape {
            layout,
            ..src.clone()
        }));
    }
    if t.starts_with(|c: char| c.is_ascii_lowercase()) {
        let a = array(t)?;
        if a.dims != src.dims || a.element_type != src.element_type {
            let why = if a.element_type != src.element_type {
                format!(
                    "its element type is {}, not {}",
                    a.element_type, src.element_type
                )
            } else {
                format!(
                    "its dimensions are [{}], not [{}]",
                    join(&a.dims),
                    join(&src.dims)
                )
            };
            return Err(format!(
                "--to {a} is not the same tensor as --shape {src}: {why} (a relayout keeps the \
                 tensor and changes its layout)"
            ));
        }
        return Ok(Destination::Xla(a));
    }
    const TAKES: &str = "--to takes an XLA layout ('{1,0:T(8,128)}'), an array shape of the same \
                         tensor ('f32[8,128]{0,1}') or an Axe layout on m ('S[(8,128):(1,8)]')";
    if t.starts_with('(') {
        // A tuple (or a parenthesised shape): say what --to takes, as --shape does.
        return Err(match parse_shape(t) {
            Ok(s) => format!("--to {s} is not an array shape; {TAKES}"),
            Err(e) => format!("--to '{t}': {e}; {TAKES}"),
        });
    }
    let l: axe_layout::Layout = t
        .parse()
        .map_err(|e: axe_layout::LayoutError| format!("--to '{t}': {e}; {TAKES}"))?;
    let dims: Vec<u64> = axe_xla::static_dims(src)
        .map_err(|e| e.to_string())?
        .iter()
        .map(|&d| d as u64)
        .collect();
    let bits = axe_xla::element_bits(src) as u32;
    Ok(Destination::Axe(l, dims, bits))
}

pub fn run(args: RelayoutArgs) -> bool {
    let result = (|| -> Result<String, String> {
        let mut src = array(&args.shape)?;
        // The input is checked against the shape's size before any table or buffer is built for it.
        let size = axe_xla::sizes(&src)
            .map_err(|e| e.to_string())?
            .physical_bytes;
        let need = u64::try_from(size).map_err(|_| format!("{src} has a negative size"))?;
        let (input_path, output_path) = streams(&args.input, &args.output)?;
        let given = src.layout.clone();
        let input = open_input(input_path, &mut src, need)?;
        if src.layout != given && args.shape.contains('{') {
            // A Fortran-order file is read as column-major where `--shape` leaves the layout to it;
            // one the user spelled out as row-major is not overridden.
            return Err(format!(
                "{} holds a column-major (Fortran-order) array, but --shape says {}: give --shape \
                 without a layout or with {{{}}}, or save the array in C order (numpy.ascontiguousarray)",
                args.input,
                args.shape,
                join(&src.layout.minor_to_major)
            ));
        }
        let dst = destination(&args.to, &src)?;
        // Both layouts at once: large dimensions they cut alike are split (a padded one into a body and a
        // tail first), so the offset tables stay proportional to the sum of the factors.
        let pieces = split::pieces(Side::Xla(&src), dst.side()).map_err(|e| e.to_string())?;
        let (src_layout, dst_layout) = pieces
            .first()
            .cloned()
            .ok_or("the relayout has no elements to move")?;
        let dst_shape = dst.shape().cloned();
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
        let header = npy_header(output_path, dst_shape.as_ref())?;
        // Opened before the long work, so that a path that cannot be written fails at once.
        let mut out = Output::create(output_path)?;
        say(&format!("reading {}", args.input));
        let input = read_tensor(input, need, &args.input)?;
        if let Some(bits) = value_bits(src.element_type) {
            // An element narrower than its byte (pred's 0 or 1, s4's four bits) has the rest zero:
            // any other byte would read one way copied and another packed, so it is refused, naming
            // where it is.
            let sources: Vec<&TensorLayout> = pieces.iter().map(|(s, _)| s).collect();
            if let Some((at, v)) = first_out_of_range(&input, &sources, bits) {
                return Err(format!(
                    "{}: the byte at offset {at}{} is {v}, not {}; {}",
                    args.input,
                    if header_len(&args.input) {
                        " of the data"
                    } else {
                        ""
                    },
                    narrow_values(src.element_type, bits),
                    narrow_hint(src.element_type),
                ));
            }
        }
        if args.device == Device::Cuda {
            let Destination::Xla(d) = &dst else {
                return Err(
                    "--device cuda moves between XLA layouts: give --to as an XLA layout or shape"
                        .into(),
                );
            };
            say("relayout on the GPU");
            let body = input.get(..bytes_of(need)?).unwrap_or(&input);
            let (mut bytes, secs, gpu) = gpu_relayout(&src, d, body, &args.venv)?;
            if let Some(h) = header {
                h.finish(&mut bytes);
                out.put(&h.bytes)?;
            }
            out.put(&bytes)?;
            out.commit()?;
            if let Some(p) = progress {
                p.finish_and_clear();
            }
            let moved = (body.len() + bytes.len()) as f64;
            return Ok(format!(
                "{src} -> {d} on {gpu}: {} bytes in, {} bytes out, {} (the kernel alone)",
                body.len(),
                bytes.len(),
                speed(moved, secs)
            ));
        }
        say("relayout");
        if let Some(note) = padding_note(src_layout.bytes(), dst_layout.bytes()) {
            eprintln!("note: {note}");
        }
        let mut output = crate::file::tensor_buffer(dst_layout.bytes() as usize)?;
        crate::file::populate(&output);
        let opts = Options {
            zero_padding: !args.keep_padding,
            threads: usize::from(args.threads),
            ..Options::default()
        };
        let start = std::time::Instant::now();
        let plan = split::relayout_pieces(&input, &mut output, &pieces, &opts)
            .map_err(|e| e.to_string())?
            .ok_or("the relayout has no elements to move")?;
        let secs = start.elapsed().as_secs_f64();
        say(&format!("writing {}", args.output));
        // The buffer is at least one byte long (an empty mapping is not allowed); the output is its
        // layout's bytes, none for an empty tensor.
        let n = (dst_layout.bytes() as usize).min(output.len());
        if let Some(h) = header {
            h.finish(&mut output[..n]);
            out.put(&h.bytes)?;
        }
        out.put(&output[..n])?;
        out.commit()?;
        if let Some(p) = progress {
            p.finish_and_clear();
        }
        let moved = (src_layout.bytes() + dst_layout.bytes()) as f64;
        let mut msg = format!(
            "{} -> {}: {} bytes in, {} bytes out, {}",
            src,
            dst_shape.map_or(args.to.clone(), |a| a.to_string()),
            src_layout.bytes(),
            dst_layout.bytes(),
            speed(moved, secs)
        );
        if args.explain {
            msg.push_str(&format!("\nplan: {}", plan.explain()));
            if pieces.len() > 1 {
                msg.push_str(&format!(
                    " (the first of {} pieces: a long padded dimension is moved as a body and a tail)",
                    pieces.len()
                ));
            }
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

/// The paths `axe relayout` opens for its input and output: `-` is stdin for the input and stdout for
/// the output (raw bytes; stdout refused on a terminal), as `-` names stdin in the other commands. Law:
/// any other path is returned as given.
fn streams<'a>(input: &'a str, output: &'a str) -> Result<(&'a str, &'a str), String> {
    let input = if input == "-" { "/dev/stdin" } else { input };
    let output = if output != "-" {
        output
    } else if std::io::stdout().is_terminal() {
        return Err(
            "the output '-' is stdout, which is a terminal: redirect it (> out.bin) or pipe it, or \
             give a file name"
                .into(),
        );
    } else {
        "/dev/stdout"
    };
    Ok((input, output))
}

/// What an element of type `t` with `bits` bits of value may be as the byte it is kept in.
fn narrow_values(t: axe_xla::PrimitiveType, bits: u32) -> String {
    if t == axe_xla::PrimitiveType::Pred {
        "a pred value (0 or 1)".into()
    } else {
        format!(
            "a {t} element ({bits} bits low, the rest zero: 0..{})",
            (1u32 << bits) - 1
        )
    }
}

/// How to give elements of type `t` so that their bytes pass [`narrow_values`].
fn narrow_hint(t: axe_xla::PrimitiveType) -> &'static str {
    if t == axe_xla::PrimitiveType::Pred {
        "give pred elements as bytes of 0 and 1 (numpy bool)"
    } else {
        "a sub-byte element kept in a byte has its bits low and the rest zero, as XLA and ml_dtypes \
         write it (mask a sign-extended value: x & 0xf for s4)"
    }
}

/// Whether the input at `path` is a `.npy` file, whose data starts after a header (offsets into it
/// are offsets into the data).
fn header_len(path: &str) -> bool {
    std::path::Path::new(path)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("npy"))
}

fn bytes_of(n: u64) -> Result<usize, String> {
    usize::try_from(n).map_err(|_| format!("{n} bytes do not fit in memory"))
}

#[cfg(feature = "cuda")]
fn gpu_relayout(
    src: &ArrayShape,
    dst: &ArrayShape,
    data: &[u8],
    venv: &Option<String>,
) -> Result<(Vec<u8>, f64, String), String> {
    crate::gpu::relayout(src, dst, data, &crate::gpu::venv(venv))
}

#[cfg(not(feature = "cuda"))]
fn gpu_relayout(
    _: &ArrayShape,
    _: &ArrayShape,
    _: &[u8],
    _: &Option<String>,
) -> Result<(Vec<u8>, f64, String), String> {
    Err(crate::gpu::no_cuda())
}

/// A note for an output mostly padding: more than 1 GiB, and more than 16 times the input's bytes (a
/// tile larger than the tensor, say), which is legal but rarely meant; `None` otherwise.
fn padding_note(input: u64, output: u64) -> Option<String> {
    (output > 1 << 30 && output / 16 > input).then(|| {
        format!(
            "the output takes {output} bytes for {input} bytes in: the destination layout is mostly \
             padding (check its tile sizes)"
        )
    })
}

/// `4,4`: dims joined as the shape notation writes them.
fn join<T: ToString>(v: &[T]) -> String {
    v.iter().map(T::to_string).collect::<Vec<_>>().join(",")
}

/// `bytes` moved in `secs` as a rate a person reads: GB/s, or MB/s below 1 GB/s (a tiny relayout's
/// 0.06 GB/s reads as 60.0 MB/s rather than 0.00 GB/s).
fn speed(bytes: f64, secs: f64) -> String {
    let rate = bytes / secs.max(1e-9);
    // (From 999.95 MB/s on, as GB/s: "1000.0 MB/s" reads oddly.)
    if rate >= 0.999_95e9 {
        format!("{:.2} GB/s", rate / 1e9)
    } else {
        format!("{:.1} MB/s", rate / 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::padding_note;

    /// The note's rule: an output over 1 GiB and over 16 times the input (a 1×1 f32 into a
    /// 32768×32768 tile: 4 GiB for 4 bytes); none for large outputs of like size or small ones.
    #[test]
    fn only_outputs_mostly_padding_and_large_get_a_note() {
        let note = padding_note(4, 4 << 30).unwrap_or_default();
        assert!(note.contains("4294967296 bytes for 4 bytes in"), "{note}");
        assert_eq!(padding_note(1 << 30, 2 << 30), None);
        assert_eq!(padding_note(1, 1 << 30), None);
        assert!(padding_note((1 << 27) - 1, (2 << 30) + 1).is_some());
    }
}
