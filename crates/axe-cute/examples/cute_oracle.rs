//! Line-oriented access to the CuTe algebra for differential tests (`scripts/cute-differential`).
//! Each input line is `OP<TAB>A[<TAB>B]`; each output line is `ok<TAB>RESULT` or
//! `err<TAB>KIND<TAB>MESSAGE` (KIND: `NoLayout`, `Postcondition`, `Unsupported`, `TooLarge`, `Other`).
//! OPs: `coalesce`, `composition`, `complement` (B = bound), `right_inverse`, `left_inverse`,
//! `logical_divide`, `zipped_divide`, `tiled_divide`, `flat_divide`, `logical_product`,
//! `zipped_product`, `tiled_product`, `flat_product`, `blocked_product`, `raked_product`,
//! `swizzle_compose`, `to_axe`, `tv_to_axe`, `from_axe` (B = shape, optional), `tv_from_axe`,
//! `eval` (every value of A, which may be swizzled).

use std::io::{BufRead, Write};

use axe_cute::{AnyLayout, CuteError, Layout, Swizzle, Tiler};

fn run(op: &str, a: &str, b: &str) -> Result<String, CuteError> {
    let la = || a.parse::<Layout>();
    let tb = || b.parse::<Tiler>();
    let lb = || b.parse::<Layout>();
    let s = match op {
        "coalesce" => la()?.coalesce()?.to_string(),
        "filter" => la()?.filter()?.to_string(),
        "coalesce_by" => la()?
            .coalesce_by(&axe_cute::parse_int_tuple(b)?)?
            .to_string(),
        "composition" => axe_cute::composition_tiler(&la()?, &tb()?)?.to_string(),
        "complement" => {
            let bound: i64 = b
                .trim()
                .parse()
                .map_err(|_| CuteError::BadLayout(format!("bound {b}")))?;
            la()?.complement(bound)?.to_string()
        }
        "right_inverse" => la()?.right_inverse()?.to_string(),
        "left_inverse" => la()?.left_inverse()?.to_string(),
        "logical_divide" => axe_cute::logical_divide(&la()?, &tb()?)?.to_string(),
        "zipped_divide" => axe_cute::zipped_divide(&la()?, &tb()?)?.to_string(),
        "tiled_divide" => axe_cute::tiled_divide(&la()?, &tb()?)?.to_string(),
        "flat_divide" => axe_cute::flat_divide(&la()?, &tb()?)?.to_string(),
        "logical_product" => axe_cute::logical_product(&la()?, &tb()?)?.to_string(),
        "zipped_product" => axe_cute::zipped_product(&la()?, &tb()?)?.to_string(),
        "tiled_product" => axe_cute::tiled_product(&la()?, &tb()?)?.to_string(),
        "flat_product" => axe_cute::flat_product(&la()?, &tb()?)?.to_string(),
        "blocked_product" => axe_cute::blocked_product(&la()?, &lb()?)?.to_string(),
        "raked_product" => axe_cute::raked_product(&la()?, &lb()?)?.to_string(),
        "to_axe" => la()?.to_axe()?.to_string(),
        "tv_to_axe" => axe_cute::tv_to_axe(&la()?)?.to_string(),
        "from_axe" => {
            let axe: axe_layout::Layout = a.parse()?;
            let shape = if b.is_empty() {
                None
            } else {
                Some(axe_cute::parse_int_tuple(b)?)
            };
            Layout::from_axe(&axe, shape.as_ref())?.to_string()
        }
        "tv_from_axe" => axe_cute::tv_from_axe(&a.parse()?)?.to_string(),
        "swizzle_compose" => a.parse::<Swizzle>()?.compose(&b.parse()?)?.to_string(),
        "eval" => {
            let l: AnyLayout = a.parse()?;
            let v = (0..l.size())
                .map(|i| l.eval(i))
                .collect::<Result<Vec<_>, _>>()?;
            v.iter().map(i64::to_string).collect::<Vec<_>>().join(",")
        }
        _ => return Err(CuteError::BadLayout(format!("unknown op {op}"))),
    };
    Ok(s)
}

fn main() {
    let stdin = std::io::stdin();
    let mut out = std::io::BufWriter::new(std::io::stdout());
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let mut parts = line.split('\t');
        let op = parts.next().unwrap_or("");
        let a = parts.next().unwrap_or("");
        let b = parts.next().unwrap_or("");
        let reply = match run(op, a, b) {
            Ok(s) => format!("ok\t{s}"),
            Err(e) => {
                let kind = match e {
                    CuteError::NoLayout { .. } => "NoLayout",
                    CuteError::Postcondition { .. } => "Postcondition",
                    CuteError::Unsupported { .. } => "Unsupported",
                    CuteError::TooLarge(_) => "TooLarge",
                    _ => "Other",
                };
                format!("err\t{kind}\t{}", e.to_string().replace(['\n', '\t'], " "))
            }
        };
        if writeln!(out, "{reply}").is_err() {
            break;
        }
    }
    let _ = out.flush();
}
