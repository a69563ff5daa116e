#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! `copy_async.tma` on boxes of 3, 4 and 5 dims: the tensor-map parameters it derives (golden), the
//! interpreter's box against brute force on random arrays, boxes and swizzles (proptest), the
//! hardware's rules each declined with its reason, and `cp.async.bulk.tensor.{3,4,5}d` emitted and
//! compiled.

use axe_kernel::{
    emit_cuda, lower, run, DType, Expr, KernelBuilder, Launch, Mbar, Op, Program, RunLimits, Scope,
    Space, Swizzle, Target,
};
use axe_layout::{Axis, Layout};

mod sass;
use proptest::prelude::*;

/// A copy of the box `bx` (outermost first) at coordinates `at` of a dense array of extents `arr`,
/// into a dense shared tile with `sw`, then out to a dense global array. The window puts the box's
/// first element at run time; `strides` overrides the array's strides (elements) when given.
#[derive(Debug, Clone)]
struct Case {
    dt: DType,
    sw: Option<Swizzle>,
    arr: Vec<u64>,
    bx: Vec<u64>,
    at: Vec<u64>,
    strides: Option<Vec<i64>>,
    /// The shared tile's strides, when not dense.
    tile: Option<Vec<i64>>,
}

fn dense_strides(arr: &[u64]) -> Vec<i64> {
    let mut s = vec![1i64; arr.len()];
    for k in (0..arr.len().saturating_sub(1)).rev() {
        s[k] = s[k + 1] * arr[k + 1] as i64;
    }
    s
}

fn program(c: &Case, t: Target) -> Result<Program, String> {
    let mut k = KernelBuilder::new(
        "boxn",
        Launch {
            grid: 1,
            cluster: 1,
            threads: 64,
        },
    )
    .unwrap();
    let elems: u64 = c.arr.iter().product();
    let n: u64 = c.bx.iter().product();
    let g = k.buffer("g", Space::Global, c.dt, elems).unwrap();
    let o = k.buffer("o", Space::Global, c.dt, n).unwrap();
    let tile_strides = c.tile.clone().unwrap_or_else(|| dense_strides(&c.bx));
    let tile_elems = 1 + c
        .bx
        .iter()
        .zip(&tile_strides)
        .map(|(&b, &s)| (b - 1) * s as u64)
        .sum::<u64>();
    let tb = k
        .buffer("t", Space::Shared(c.sw), c.dt, tile_elems)
        .unwrap();
    let bars = k
        .buffer("bars", Space::Shared(None), DType::S64, 1)
        .unwrap();
    let bar = Mbar {
        buffer: bars,
        index: 0,
    };
    let axes = vec![Axis::memory(); c.bx.len()];
    let strides = c.strides.clone().unwrap_or_else(|| dense_strides(&c.arr));
    let src = k
        .tensor(
            "src",
            g,
            &c.bx,
            Layout::strided(&c.bx, &strides, &axes).unwrap(),
        )
        .unwrap();
    let dense = Layout::strided(&c.bx, &dense_strides(&c.bx), &axes).unwrap();
    let tile = k
        .tensor(
            "tile",
            tb,
            &c.bx,
            Layout::strided(&c.bx, &tile_strides, &axes).unwrap(),
        )
        .unwrap();
    let out = k.tensor("out", o, &c.bx, dense).unwrap();
    k.if_then(Expr::Thread.lt(Expr::Const(1)), |k| {
        k.mbar_init(bar, 1)?;
        k.mbar_fence_init();
        Ok(())
    })
    .unwrap();
    k.barrier();
    let base: i64 = c.at.iter().zip(&strides).map(|(&a, &s)| a as i64 * s).sum();
    k.window(g, Expr::Const(base), 1, |k| {
        k.call_forced(
            Scope::threads(0..1),
            Op::CopyAsync {
                dst: tile.clone(),
                src: src.clone(),
                bar,
            },
            Some("copy_async.tma"),
        )
        .map(|_| ())
    })
    .unwrap();
    k.mbar_wait(bar, Expr::Const(0)).unwrap();
    k.copy(Scope::cta(), &out, &tile).unwrap();
    lower(&k.build().unwrap(), t).map_err(|e| e.to_string())
}

/// The interpreter's output, and the box gathered by brute force.
fn run_case(c: &Case) -> Result<(Vec<u8>, Vec<u8>), String> {
    let p = program(c, Target::Cpu)?;
    let eb = u64::from(c.dt.bytes());
    let elems: u64 = c.arr.iter().product();
    let n: u64 = c.bx.iter().product();
    let data: Vec<u8> = (0..elems * eb).map(|i| (i * 7 + 3) as u8).collect();
    let out = run(
        &p,
        vec![data.clone(), vec![0; (n * eb) as usize]],
        RunLimits::default(),
    )
    .map_err(|e| e.to_string())?;
    let strides = c.strides.clone().unwrap_or_else(|| dense_strides(&c.arr));
    let mut want = Vec::new();
    for x in 0..n {
        let (mut r, mut g) = (x, 0i64);
        for k in (0..c.bx.len()).rev() {
            g += (c.at[k] + r % c.bx[k]) as i64 * strides[k];
            r /= c.bx[k];
        }
        let g = (g as u64 * eb) as usize;
        want.extend_from_slice(&data[g..g + eb as usize]);
    }
    Ok((out[1].clone(), want))
}

fn golden() -> Vec<(Case, Vec<u64>, Vec<u32>)> {
    vec![
        (
            Case {
                dt: DType::F32,
                sw: Some(Swizzle::B128),
                arr: vec![4, 16, 64],
                bx: vec![2, 8, 32],
                at: vec![1, 8, 32],
                strides: None,
                tile: None,
            },
            vec![64, 16, 4],
            vec![32, 8, 2],
        ),
        (
            Case {
                dt: DType::BF16,
                sw: Some(Swizzle::B64),
                arr: vec![3, 4, 8, 64],
                bx: vec![2, 2, 4, 32],
                at: vec![1, 2, 4, 0],
                strides: None,
                tile: None,
            },
            vec![64, 8, 4, 3],
            vec![32, 4, 2, 2],
        ),
        (
            Case {
                dt: DType::F32,
                sw: None,
                arr: vec![2, 3, 4, 4, 16],
                bx: vec![2, 2, 2, 4, 8],
                at: vec![0, 1, 2, 0, 8],
                strides: None,
                tile: None,
            },
            vec![16, 4, 4, 3, 2],
            vec![8, 4, 2, 2, 2],
        ),
        // Dims of extent 1 drop out: a [1, 4, 1, 32] box of a 4-D array is a 2-D map.
        (
            Case {
                dt: DType::F16,
                sw: Some(Swizzle::B64),
                arr: vec![2, 8, 3, 64],
                bx: vec![1, 4, 1, 32],
                at: vec![1, 4, 2, 32],
                strides: None,
                tile: None,
            },
            vec![192, 16],
            vec![32, 4],
        ),
    ]
}

#[test]
fn tensor_maps_of_3_4_and_5_dims_golden() {
    // The shared atom tile_of finds: 8 rows of a swizzle's span (or the rows a box has), a row
    // unswizzled.
    let atoms = ["8×32", "8×32", "1×8", "4×32"];
    for ((c, dims, box_dims), atom) in golden().into_iter().zip(atoms) {
        let p = program(&c, Target::Sm90a).unwrap();
        assert_eq!(p.decisions[0].variant, "copy_async.tma");
        let m = &p.tensor_maps[0];
        assert_eq!(
            (&m.dims, &m.box_dims, m.swizzle),
            (&dims, &box_dims, c.sw),
            "{}",
            p.decisions[0].why
        );
        let rank = dims.len();
        assert!(
            p.decisions[0]
                .why
                .contains(&format!("shared atoms of {atom})")),
            "{}",
            p.decisions[0].why
        );
        assert!(
            p.decisions[0].why.contains(&format!("rank-{rank} [")),
            "{}",
            p.decisions[0].why
        );
    }
}

#[test]
fn boxes_of_3_4_and_5_dims_land_as_brute_force_gathers_them() {
    for (c, _, _) in golden() {
        let (got, want) = run_case(&c).unwrap();
        assert_eq!(got, want, "box {:?} of {:?} at {:?}", c.bx, c.arr, c.at);
    }
}

#[test]
fn the_hardware_rules_are_declined_with_reasons() {
    let base = || Case {
        dt: DType::F32,
        sw: None,
        arr: vec![4, 8, 64],
        bx: vec![2, 4, 32],
        at: vec![0, 0, 0],
        strides: None,
        tile: None,
    };
    let why = |c: Case| program(&c, Target::Sm90a).unwrap_err();
    // Six dims of extent above 1.
    let e = why(Case {
        arr: vec![2, 2, 2, 2, 2, 8],
        bx: vec![2, 2, 2, 2, 2, 4],
        at: vec![0; 6],
        ..base()
    });
    assert!(e.contains("a tensor map has at most 5"), "{e}");
    // A box dim over 256.
    let e = why(Case {
        arr: vec![2, 512, 8],
        bx: vec![2, 300, 8],
        at: vec![0; 3],
        ..base()
    });
    assert!(e.contains("at most 256 elements per dimension"), "{e}");
    // A global stride that is not a multiple of 16 bytes (rows of 10 f32).
    let e = why(Case {
        arr: vec![4, 8, 10],
        bx: vec![2, 4, 4],
        at: vec![0; 3],
        ..base()
    });
    assert!(e.contains("multiples of 16 bytes below 2^40"), "{e}");
    // Inner box bytes over the swizzle span: 64 f32 rows in a 128-byte swizzle.
    let e = why(Case {
        sw: Some(Swizzle::B128),
        arr: vec![4, 8, 64],
        bx: vec![2, 8, 64],
        ..base()
    });
    assert!(e.contains("within the swizzle span"), "{e}");
    // Inner box bytes not a multiple of 16: rows of 2 f32.
    let e = why(Case {
        bx: vec![2, 4, 2],
        ..base()
    });
    assert!(e.contains("multiple of 16 bytes"), "{e}");
    // A transposed source: the innermost dim is not contiguous.
    let e = why(Case {
        arr: vec![4, 64, 64],
        bx: vec![2, 4, 32],
        strides: Some(vec![4096, 1, 64]),
        ..base()
    });
    assert!(e.contains("runs of consecutive elements"), "{e}");
    // Strides that do not nest (a dim wider than the next stride leaves).
    let e = why(Case {
        arr: vec![4, 8, 64],
        bx: vec![2, 4, 32],
        strides: Some(vec![96, 64, 1]),
        ..base()
    });
    assert!(e.contains("each divide the next"), "{e}");
    // A shared tile whose rows are padded (64 elements apart for rows of 32): not dense atoms.
    let e = why(Case {
        tile: Some(vec![512, 64, 1]),
        ..base()
    });
    assert!(e.contains("not one after another"), "{e}");
    // A shared tile with its two outer dims swapped: the atoms are out of order.
    let e = why(Case {
        tile: Some(vec![32, 64, 1]),
        ..base()
    });
    assert!(e.contains("atoms"), "{e}");
}

#[test]
fn cp_async_bulk_tensor_3d_4d_5d_is_emitted_and_compiles() {
    let venv = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv");
    let lib = axe_kernel::nvrtc::find_nvrtc(&venv);
    for (c, dims, _) in golden() {
        let p = program(&c, Target::Sm90a).unwrap();
        let cu = emit_cuda(&p).unwrap();
        let rank = dims.len();
        let want = format!("cp.async.bulk.tensor.{rank}d.shared::cluster.global");
        assert!(cu.contains(&want), "no {want} in\n{cu}");
        let Some(lib) = &lib else {
            eprintln!("skipped compiling: no NVRTC under {}", venv.display());
            continue;
        };
        let out = axe_kernel::nvrtc::compile_here(lib, &cu, "boxn", "sm_90a")
            .unwrap_or_else(|e| panic!("{e}\n{cu}"));
        assert!(
            out.ptx.contains(&format!("cp.async.bulk.tensor.{rank}d")),
            "{}",
            out.ptx
        );
        assert!(out.cubin.starts_with(b"\x7fELF"));
        // The copy engine's load of that rank in the SASS.
        if let Some(sass) = sass::sass(&out.cubin, &format!("box{rank}")) {
            assert!(sass.contains(&format!("UTMALDG.{rank}D")), "{sass}");
        }
    }
}

/// A random box of 3 to 5 dims in an array with room around it, and a swizzle its rows fit.
fn random_case() -> impl Strategy<Value = Case> {
    (3usize..=5, 0usize..4, any::<u64>()).prop_map(|(rank, swi, seed)| {
        let mut s = seed;
        let mut next = |m: u64| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 33) % m
        };
        let sw = [
            None,
            Some(Swizzle::B32),
            Some(Swizzle::B64),
            Some(Swizzle::B128),
        ][swi];
        let dt = [DType::F32, DType::BF16][next(2) as usize];
        let eb = u64::from(dt.bytes());
        let inner = sw.map_or(16 / eb * (1 + next(3)), |w| w.bytes() / eb);
        let mut bx = Vec::new();
        let mut arr = Vec::new();
        for k in 0..rank {
            let b = if k + 1 == rank { inner } else { 1 + next(3) };
            // Inner rows a multiple of 16 bytes (the stride rule); room for the box to move.
            let a = if k + 1 == rank {
                b + 16 / eb * next(2)
            } else {
                b + next(3)
            };
            bx.push(b);
            arr.push(a);
        }
        let at = bx
            .iter()
            .zip(&arr)
            .map(|(&b, &a)| next(a - b + 1))
            .collect();
        Case {
            dt,
            sw,
            arr,
            bx,
            at,
            strides: None,
            tile: None,
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn random_boxes_land_as_brute_force_gathers_them(c in random_case()) {
        let (got, want) = run_case(&c).map_err(|e| TestCaseError::fail(format!(
            "box {:?} of {:?} at {:?}: {e}", c.bx, c.arr, c.at
        )))?;
        prop_assert_eq!(got, want, "box {:?} of {:?} at {:?}", c.bx, c.arr, c.at);
    }
}

/// A 3-dim f32 box whose dims run along a random permutation of a dense array's dims: the variant
/// takes it exactly when the rules, checked here on the box's strides, allow a tensor map (innermost
/// box dim contiguous in rows of a multiple of 16 bytes (a lone element is 4), each stride a multiple of the next inner one
/// with room for its box, strides multiples of 16 bytes, the outermost dividing the array), and what it
/// takes lands as brute force gathers it.
fn permuted_case() -> impl Strategy<Value = (Case, bool)> {
    (
        proptest::collection::vec(1u64..4, 3),
        prop_oneof![
            Just(vec![0usize, 1, 2]),
            Just(vec![0usize, 1, 2]).prop_shuffle()
        ],
        any::<u64>(),
    )
        .prop_map(|(ext, perm, seed)| {
            // Array extents (outer first): the innermost a multiple of 4 f32 (16 bytes).
            let arr = vec![ext[0] + 1, ext[1] + 2, 4 * ext[2]];
            let dense = dense_strides(&arr);
            let mut s = seed;
            let mut next = |m: u64| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (s >> 33) % m.max(1)
            };
            let mut bx = Vec::new();
            let mut strides = Vec::new();
            let mut at = Vec::new();
            for &p in &perm {
                // Along the array's rows, mostly whole 16-byte runs.
                let b = if p == 2 && next(4) > 0 {
                    4 * (1 + next(arr[p] / 4))
                } else {
                    1 + next(arr[p])
                };
                bx.push(b);
                strides.push(dense[p]);
                at.push(next(arr[p] - b + 1));
            }
            // The rules, on the dims of extent above 1, innermost first.
            let dims: Vec<(u64, u64)> = (0..3)
                .rev()
                .filter(|&k| bx[k] > 1)
                .map(|k| (bx[k], strides[k] as u64))
                .collect();
            let elems: u64 = arr.iter().product();
            let ok = dims
                .first()
                .is_some_and(|&(b, s)| s == 1 && (b * 4) % 16 == 0)
                && dims
                    .windows(2)
                    .all(|w| w[1].1 % w[0].1 == 0 && w[1].1 / w[0].1 >= w[0].0)
                && dims.iter().skip(1).all(|&(_, s)| (s * 4) % 16 == 0)
                && dims.last().is_none_or(|&(_, s)| elems.is_multiple_of(s));
            (
                Case {
                    dt: DType::F32,
                    sw: None,
                    arr,
                    bx,
                    at,
                    strides: Some(strides),
                    tile: None,
                },
                ok,
            )
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn permuted_boxes_are_taken_exactly_when_a_tensor_map_exists((c, ok) in permuted_case()) {
        match run_case(&c) {
            Ok((got, want)) => {
                prop_assert!(ok, "took box {:?} strides {:?}", c.bx, c.strides);
                prop_assert_eq!(got, want);
            }
            Err(e) => {
                prop_assert!(!ok, "declined box {:?} strides {:?}: {}", c.bx, c.strides, e);
                prop_assert!(e.contains("copy_async.tma"), "{}", e);
            }
        }
    }
}
