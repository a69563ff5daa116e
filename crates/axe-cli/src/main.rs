//! `axe`: read, compute with and explain tensor layouts.
//!
//! A thin layer over the libraries: argument handling, input collection and output formatting only.

mod bench;
mod bench_cute;
mod bench_hlo;
mod bench_kernel;
#[cfg(feature = "cuda")]
mod bench_kernel_gpu;
mod bench_relayout;
mod bench_shard;
mod cute_cmd;
mod explain_cmd;
mod file;
mod gpu;
mod hlo_cmd;
mod input;
mod kernel_cmd;
mod kernel_shipped;
mod kernel_xdev;
mod layout_cmd;
mod npy;
mod only;
mod output;
mod relayout_cmd;
mod render_format;
mod render_kernel;
mod report;
mod shard_cmd;
mod shard_memory;
mod shard_picture;
mod shard_plan;
mod shard_run;
mod shard_show;
mod tensor_file;
mod triton_cmd;
mod xla_cmd;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Tensor layouts you can read, compute with and move data through.
#[derive(Parser)]
#[command(name = "axe", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Explain a layout in plain words (default: the XLA doc's f32[3,5]{1,0:T(2,2)}).
    Explain(explain_cmd::ExplainArgs),
    /// Draw a layout: memory offsets and tiles, threads, or devices; CuTe grids and TV layouts; the
    /// registers, lanes and warps of Triton and Gluon layouts (SVG, PNG or text).
    Render(explain_cmd::RenderArgs),
    /// Rewrite a tensor file from one layout into another (.npy or raw .bin).
    Relayout(relayout_cmd::RelayoutArgs),
    /// Axe layouts: shard / replica / offset over named axes, and their operators.
    Layout {
        #[command(subcommand)]
        verb: layout_cmd::Verb,
    },
    /// XLA shapes and tiled layouts: parse, index, sizes, Axe form, TPU defaults, numpy recipe.
    Xla {
        #[command(subcommand)]
        verb: xla_cmd::Verb,
    },
    /// Whole HLO modules: cost report, formatting, synthetic modules, shardings.
    Hlo {
        #[command(subcommand)]
        verb: hlo_cmd::Verb,
    },
    /// Device meshes and shardings: every notation, who holds what, reshard plans and runs.
    Shard {
        #[command(subcommand)]
        verb: shard_cmd::Verb,
    },
    /// CuTe layouts: read, evaluate, the layout algebra (every result checked), swizzles, to and from Axe.
    Cute {
        #[command(subcommand)]
        verb: cute_cmd::Verb,
    },
    /// Triton linear layouts and Gluon layouts: read, apply, compose, invert, to and from Axe.
    Triton {
        #[command(subcommand)]
        verb: triton_cmd::Verb,
    },
    /// Kernels described with Axe layouts: list, emit CUDA, explain dispatch, compile, run.
    Kernel {
        #[command(subcommand)]
        verb: kernel_cmd::Verb,
    },
    /// Measure speed against a reference measured in the same run.
    Bench {
        #[command(subcommand)]
        what: bench::What,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let ok = match cli.command {
        Command::Explain(args) => explain_cmd::explain(args),
        Command::Render(args) => explain_cmd::render(args),
        Command::Relayout(args) => relayout_cmd::run(args),
        Command::Layout { verb } => layout_cmd::run(verb),
        Command::Xla { verb } => xla_cmd::run(verb),
        Command::Hlo { verb } => hlo_cmd::run(verb),
        Command::Shard { verb } => shard_cmd::run(verb),
        Command::Cute { verb } => cute_cmd::run(verb),
        Command::Triton { verb } => triton_cmd::run(verb),
        Command::Kernel { verb } => kernel_cmd::run(verb),
        Command::Bench { what } => bench::run(what),
    };
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
