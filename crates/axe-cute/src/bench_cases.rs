//! The workloads `axe bench cute` times: one representative call of each operator, on the inputs of
//! CuTe's documentation, so the same calls can be timed in pycute.

use std::fmt::Display;
use std::rc::Rc;

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
    /// The same inputs one by one, as a peer implementation takes them: layouts, tilers (`<A,B>`) and
    /// swizzled layouts in CuTe's notation, integers in decimal.
    pub args: &'static [&'static str],
    /// Runs the operation once; returns a value that depends on the result so it cannot be optimized out.
    pub run: Box<dyn Fn() -> Result<u64>>,
    /// Runs the operation once and prints its result: a layout in CuTe's notation, an integer in
    /// decimal, an Axe layout in Axe's.
    pub result: Box<dyn Fn() -> Result<String>>,
}

fn len(l: &Layout) -> u64 {
    l.modes_flat().len() as u64
}

/// One case: `op` is timed through `weight` (cheap, so the result is used) and printed by `result`.
fn case<T: Display + 'static>(
    name: &'static str,
    input: &'static str,
    args: &'static [&'static str],
    op: impl Fn() -> Result<T> + 'static,
    weight: fn(&T) -> u64,
) -> BenchCase {
    let op = Rc::new(op);
    let shown = Rc::clone(&op);
    BenchCase {
        name,
        input,
        args,
        run: Box::new(move || Ok(weight(&op()?))),
        result: Box::new(move || Ok(shown()?.to_string())),
    }
}

const BIG: &str = "(9,(4,8)):(59,(13,1))";
const NEST: &str = "((2,4),(3,1),(1,5)):((1,2),(8,1),(0,24))";
const A: &str = "(6,2):(8,2)";
const B: &str = "(4,3):(3,1)";
const DIV: &str = "(4,2,3):(2,1,8)";
const INV: &str = "(4,(2,3)):(2,(1,8))";
const TILER: &str = "<3:3,(2,4):(1,8)>";
const BLK: &str = "(2,5):(5,1)";
const GRID: &str = "(3,4):(1,3)";
const SW: &str = "Sw<3,3,3> o 0 o (8,64):(64,1)";
const TV: &str = "((4,2),2):((1,0),4)";

/// The cases, inputs parsed once up front.
pub fn bench_cases() -> Result<Vec<BenchCase>> {
    let a: Layout = A.parse()?;
    let b: Layout = B.parse()?;
    let big: Layout = BIG.parse()?;
    let tiler: Tiler = TILER.parse()?;
    let div: Layout = DIV.parse()?;
    let t42: Tiler = "4:2".parse()?;
    let blk: Layout = BLK.parse()?;
    let grid: Layout = GRID.parse()?;
    let grid_tiler = Tiler::Layout(grid.clone());
    let inv: Layout = INV.parse()?;
    let nest: Layout = NEST.parse()?;
    let sw: ComposedLayout = SW.parse()?;
    let s1: Swizzle = "Sw<1,0,2>".parse()?;
    let s2: Swizzle = "Sw<1,1,2>".parse()?;
    let tv: Layout = TV.parse()?;
    Ok(vec![
        case("parse", BIG, &[BIG], || BIG.parse::<Layout>(), len),
        case(
            "print",
            BIG,
            &[BIG],
            {
                let l = big.clone();
                move || Ok(l.to_string())
            },
            |s| s.len() as u64,
        ),
        case(
            "eval",
            "(9,(4,8)):(59,(13,1)) at 200",
            &[BIG, "200"],
            {
                let l = big.clone();
                move || l.eval(200)
            },
            |x| x.unsigned_abs(),
        ),
        case("coalesce", NEST, &[NEST], move || nest.coalesce(), len),
        case(
            "composition",
            "(6,2):(8,2) o (4,3):(3,1)",
            &[A, B],
            {
                let (a, b) = (a.clone(), b.clone());
                move || a.compose(&b)
            },
            len,
        ),
        case(
            "complement",
            "(4,2,3):(2,1,8) bound 96",
            &[DIV, "96"],
            {
                let l = div.clone();
                move || l.complement(96)
            },
            len,
        ),
        case(
            "right_inverse",
            INV,
            &[INV],
            {
                let l = inv.clone();
                move || l.right_inverse()
            },
            len,
        ),
        case("left_inverse", INV, &[INV], move || inv.left_inverse(), len),
        case(
            "logical_divide",
            "(4,2,3):(2,1,8) / 4:2",
            &[DIV, "4:2"],
            move || crate::logical_divide(&div, &t42),
            len,
        ),
        case(
            "zipped_divide",
            "(9,(4,8)):(59,(13,1)) / <3:3,(2,4):(1,8)>",
            &[BIG, TILER],
            {
                let (l, t) = (big.clone(), tiler.clone());
                move || crate::zipped_divide(&l, &t)
            },
            len,
        ),
        case(
            "tiled_divide",
            "(9,(4,8)):(59,(13,1)) / <3:3,(2,4):(1,8)>",
            &[BIG, TILER],
            move || crate::tiled_divide(&big, &tiler),
            len,
        ),
        case(
            "logical_product",
            "(2,5):(5,1) x (3,4):(1,3)",
            &[BLK, GRID],
            {
                let (l, t) = (blk.clone(), grid_tiler.clone());
                move || crate::logical_product(&l, &t)
            },
            len,
        ),
        case(
            "zipped_product",
            "(2,5):(5,1) x (3,4):(1,3)",
            &[BLK, GRID],
            {
                let l = blk.clone();
                move || crate::zipped_product(&l, &grid_tiler)
            },
            len,
        ),
        case(
            "blocked_product",
            "(2,5):(5,1) x (3,4):(1,3)",
            &[BLK, GRID],
            {
                let (l, g) = (blk.clone(), grid.clone());
                move || crate::blocked_product(&l, &g)
            },
            len,
        ),
        case(
            "raked_product",
            "(2,5):(5,1) x (3,4):(1,3)",
            &[BLK, GRID],
            move || crate::raked_product(&blk, &grid),
            len,
        ),
        case(
            "swizzle_eval",
            "Sw<3,3,3> o 0 o (8,64):(64,1) at 77",
            &[SW, "77"],
            move || sw.eval(77),
            |x| x.unsigned_abs(),
        ),
        case(
            "swizzle_compose",
            "Sw<1,0,2> o Sw<1,1,2>",
            &["Sw<1,0,2>", "Sw<1,1,2>"],
            move || s1.compose(&s2),
            |s| u64::from(s.params().0),
        ),
        case(
            "to_axe",
            A,
            &[A],
            move || a.to_axe(),
            |l| l.shard().len() as u64,
        ),
        case(
            "tv_to_axe",
            TV,
            &[TV],
            move || crate::tv_to_axe(&tv),
            |l| l.shard().len() as u64,
        ),
        case(
            "clone (reference)",
            B,
            &[B],
            move || Ok(b.clone()),
            |l| l.size().unsigned_abs(),
        ),
    ])
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn every_case_runs_and_prints_and_names_its_args() {
        for c in bench_cases().unwrap() {
            assert!((c.run)().is_ok(), "{}", c.name);
            assert!(!(c.result)().unwrap().is_empty(), "{}", c.name);
            for arg in c.args {
                assert!(
                    c.input.contains(arg),
                    "{}: {arg} not in {}",
                    c.name,
                    c.input
                );
            }
        }
    }

    #[test]
    fn results_are_cutes() {
        let cases = bench_cases().unwrap();
        let result = |name: &str| {
            let c = cases.iter().find(|c| c.name == name).unwrap();
            (c.result)().unwrap()
        };
        assert_eq!(result("composition"), "((2,2),3):((24,2),8)");
        assert_eq!(result("print"), "(9,(4,8)):(59,(13,1))");
    }
}
