//! The workloads `axe bench cute` times: one representative call of each operator, on the inputs of
//! CuTe's documentation, so the same calls can be timed in pycute.

use crate::compose::Tiler;
use crate::error::Result;
use crate::layout::Layout;
use crate::swizzle::{ComposedLayout, Swizzle};

/// A named operator call on fixed inputs.
pub struct BenchCase {
    /// Operator name (`composition`, `complement`, ...).
    pub name: &'static str,
    /// The inputs, in CuTe's notation.
    pub input: &'static str,
    /// Runs the operation once; returns a value that depends on the result so it cannot be optimized out.
    pub run: Box<dyn Fn() -> Result<u64>>,
}

fn len(l: &Layout) -> u64 {
    l.modes_flat().len() as u64
}

/// The cases, inputs parsed once up front.
pub fn bench_cases() -> Result<Vec<BenchCase>> {
    let a: Layout = "(6,2):(8,2)".parse()?;
    let b: Layout = "(4,3):(3,1)".parse()?;
    let big: Layout = "(9,(4,8)):(59,(13,1))".parse()?;
    let tiler: Tiler = "<3:3,(2,4):(1,8)>".parse()?;
    let div: Layout = "(4,2,3):(2,1,8)".parse()?;
    let t42: Tiler = "4:2".parse()?;
    let blk: Layout = "(2,5):(5,1)".parse()?;
    let grid: Layout = "(3,4):(1,3)".parse()?;
    let inv: Layout = "(4,(2,3)):(2,(1,8))".parse()?;
    let nest: Layout = "((2,4),(3,1),(1,5)):((1,2),(8,1),(0,24))".parse()?;
    let sw: ComposedLayout = "Sw<3,3,3> o 0 o (8,64):(64,1)".parse()?;
    let s1: Swizzle = "Sw<1,0,2>".parse()?;
    let s2: Swizzle = "Sw<1,1,2>".parse()?;
    let (a2, b2, big2, div2, inv2, blk2, grid2, big3, tiler2) = (
        a.clone(),
        b.clone(),
        big.clone(),
        div.clone(),
        inv.clone(),
        blk.clone(),
        grid.clone(),
        big.clone(),
        tiler.clone(),
    );
    Ok(vec![
        BenchCase {
            name: "parse",
            input: "(9,(4,8)):(59,(13,1))",
            run: Box::new(|| Ok(len(&"(9,(4,8)):(59,(13,1))".parse::<Layout>()?))),
        },
        BenchCase {
            name: "print",
            input: "(9,(4,8)):(59,(13,1))",
            run: Box::new(move || Ok(big3.to_string().len() as u64)),
        },
        BenchCase {
            name: "eval",
            input: "(9,(4,8)):(59,(13,1)) at 200",
            run: Box::new(move || Ok(big2.eval(200)?.unsigned_abs())),
        },
        BenchCase {
            name: "coalesce",
            input: "((2,4),(3,1),(1,5)):((1,2),(8,1),(0,24))",
            run: Box::new(move || Ok(len(&nest.coalesce()?))),
        },
        BenchCase {
            name: "composition",
            input: "(6,2):(8,2) o (4,3):(3,1)",
            run: Box::new(move || Ok(len(&a2.compose(&b2)?))),
        },
        BenchCase {
            name: "complement",
            input: "(4,2,3):(2,1,8) bound 96",
            run: Box::new(move || Ok(len(&div2.complement(96)?))),
        },
        BenchCase {
            name: "right_inverse",
            input: "(4,(2,3)):(2,(1,8))",
            run: Box::new(move || Ok(len(&inv2.right_inverse()?))),
        },
        BenchCase {
            name: "left_inverse",
            input: "(4,(2,3)):(2,(1,8))",
            run: Box::new(move || Ok(len(&inv.left_inverse()?))),
        },
        BenchCase {
            name: "logical_divide",
            input: "(4,2,3):(2,1,8) / 4:2",
            run: Box::new(move || Ok(len(&crate::logical_divide(&div, &t42)?))),
        },
        BenchCase {
            name: "zipped_divide",
            input: "(9,(4,8)):(59,(13,1)) / <3:3,(2,4):(1,8)>",
            run: Box::new(move || Ok(len(&crate::zipped_divide(&big, &tiler2)?))),
        },
        BenchCase {
            name: "logical_product",
            input: "(2,5):(5,1) x (3,4):(1,3)",
            run: Box::new({
                let grid_tiler = Tiler::Layout(grid2);
                move || Ok(len(&crate::logical_product(&blk2, &grid_tiler)?))
            }),
        },
        BenchCase {
            name: "blocked_product",
            input: "(2,5):(5,1) x (3,4):(1,3)",
            run: Box::new(move || Ok(len(&crate::blocked_product(&blk, &grid)?))),
        },
        BenchCase {
            name: "swizzle_eval",
            input: "Sw<3,3,3> o 0 o (8,64):(64,1) at 77",
            run: Box::new(move || Ok(sw.eval(77)?.unsigned_abs())),
        },
        BenchCase {
            name: "swizzle_compose",
            input: "Sw<1,0,2> o Sw<1,1,2>",
            run: Box::new(move || Ok(u64::from(s1.compose(&s2)?.params().0))),
        },
        BenchCase {
            name: "to_axe",
            input: "(6,2):(8,2)",
            run: Box::new(move || Ok(a.to_axe()?.shard().len() as u64)),
        },
        BenchCase {
            name: "tv_to_axe",
            input: "((4,2),2):((1,0),4)",
            run: Box::new({
                let tv: Layout = "((4,2),2):((1,0),4)".parse()?;
                move || Ok(crate::tv_to_axe(&tv)?.shard().len() as u64)
            }),
        },
        BenchCase {
            name: "clone (reference)",
            input: "(4,3):(3,1)",
            run: Box::new(move || Ok(b.clone().size().unsigned_abs())),
        },
    ])
}
