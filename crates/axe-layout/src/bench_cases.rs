//! The workloads `axe bench layout` and the criterion benches time: one representative call of each
//! operator on layouts of 4–8 iters. Shared so both report the same thing.

use crate::error::Result;
use crate::layout::Layout;

/// A named operator call on fixed inputs.
pub struct BenchCase {
    /// Operator name (`parse`, `canonicalize`, ...).
    pub name: &'static str,
    /// What the inputs are.
    pub input: &'static str,
    /// Runs the operation once; returns a value that depends on the result so it cannot be optimized out.
    pub run: Box<dyn Fn() -> Result<u64>>,
}

const TENSOR_CORE: &str = "S[(8,2,4,2):(4@lane,1@warp,1@lane,1@reg)] + R[2:4@warp] + 5@warp";
const SPLIT: &str = "S[(2,4,2,8,4,2,8,16):(8192,2048,1024,128,32,16,2,1)]";

/// The cases, parsed once up front.
pub fn bench_cases() -> Result<Vec<BenchCase>> {
    let tc: Layout = TENSOR_CORE.parse()?;
    let split: Layout = SPLIT.parse()?;
    let tile_a: Layout = "S[(8,4,4,2):(8,1@lane,2,1)]".parse()?;
    let tile_b: Layout = "S[(4,2,2,4):(1@warp,8,4@warp,1)]".parse()?;
    let (tiled, _) = tile_a.tile(&tile_b, &[8, 32], &[8, 8])?;
    let rm: Layout = "S[(64,128,2,8):(2048,16,8,1)]".parse()?;
    let permuted: Layout = "S[(64,2,64,2,8):(2048,1024,16,8,1)]".parse()?;
    let (c1, c2, c3, c4, c5, c6, c7) = (
        tc.clone(),
        split.clone(),
        tile_a.clone(),
        tiled.clone(),
        rm.clone(),
        permuted.clone(),
        tc.clone(),
    );
    Ok(vec![
        BenchCase {
            name: "parse",
            input: TENSOR_CORE,
            run: Box::new(|| Ok(TENSOR_CORE.parse::<Layout>()?.size())),
        },
        BenchCase {
            name: "canonicalize",
            input: SPLIT,
            run: Box::new(move || Ok(c2.canonicalize()?.shard().len() as u64)),
        },
        BenchCase {
            name: "group",
            input: "S[(2,4,2,8,4,2,8,16)...] by (64, 2048)",
            run: Box::new(move || Ok(split.group(&[64, 2048])?.layout.shard().len() as u64)),
        },
        BenchCase {
            name: "tile",
            input: "S[(8,4,4,2)...] inner, S[(4,2,2,4)...] outer",
            run: Box::new(move || Ok(c3.tile(&tile_b, &[8, 32], &[8, 8])?.0.shard().len() as u64)),
        },
        BenchCase {
            name: "tile_of",
            input: "the tile above, inner given",
            run: Box::new(move || {
                Ok(c4.tile_of(&tile_a, &[64, 256], &[8, 32])?.0.shard().len() as u64)
            }),
        },
        BenchCase {
            name: "slice",
            input: "S[(64,128,2,8)...] over (64, 2048), region [8,40)x[256,512)",
            run: Box::new(move || {
                Ok(c5.slice(&[64, 2048], &[8..40, 256..512])?.shard().len() as u64)
            }),
        },
        BenchCase {
            name: "equivalent",
            input: "S[(64,128,2,8)...] vs S[(64,2,64,2,8)...]",
            run: Box::new(move || Ok(rm.equivalent(&permuted)? as u64)),
        },
        BenchCase {
            name: "apply",
            input: TENSOR_CORE,
            run: Box::new(move || Ok(c1.apply(77)?.len() as u64)),
        },
        BenchCase {
            name: "print",
            input: TENSOR_CORE,
            run: Box::new(move || Ok(c7.to_string().len() as u64)),
        },
        BenchCase {
            name: "clone (reference)",
            input: "5-iter layout",
            run: Box::new(move || Ok(c6.clone().size())),
        },
    ])
}
