//! Reading and printing linear layouts: the JSON bases form
//! (`{"in": {"register": [[0, 1]], ...}, "out": {"dim0": 32, "dim1": 16}}`) and the TTGIR attribute
//! (`#ttg.linear<{register = [[0, 1]], lane = [...], warp = [...], block = []}>`). The attribute does not
//! carry out-dim sizes: they are the smallest powers of two holding every base (at least 1), and there are
//! as many out-dims (`dim0`, `dim1`, ...) as coordinates per base.

use crate::error::{Result, TritonError};
use crate::linear::LinearLayout;
use crate::syntax::{error_at, parse_value, Spanned, Value};
use std::fmt::Write as _;

/// The in-dims of Triton's `#ttg.linear` attribute, in the order it reads them.
const TTG_IN_DIMS: [&str; 4] = ["register", "lane", "warp", "block"];

fn uint(src: &str, v: &Spanned, what: &str) -> Result<u64> {
    match v.value {
        Value::Int(i) if i >= 0 => Ok(i as u64),
        Value::Int(i) => Err(error_at(src, v.at, format!("{what} is {i}, negative"))),
        _ => Err(error_at(src, v.at, format!("{what} must be an integer"))),
    }
}

fn bases_of(src: &str, v: &Spanned, dim: &str) -> Result<Vec<Vec<u64>>> {
    let Value::List(items) = &v.value else {
        return Err(error_at(
            src,
            v.at,
            format!("the bases of `{dim}` must be a list"),
        ));
    };
    items
        .iter()
        .map(|b| match &b.value {
            Value::List(cs) => cs
                .iter()
                .map(|c| uint(src, c, "a base coordinate"))
                .collect(),
            _ => Err(error_at(src, b.at, "a base must be a list of coordinates")),
        })
        .collect()
}

fn with_offset(src: &str, at: usize, e: TritonError) -> TritonError {
    match e {
        TritonError::Parse(p) => TritonError::Parse(p),
        other => error_at(src, at, other.to_string()),
    }
}

/// Reads the JSON bases form. In-dims keep their written order; out-dims too. Errors carry the byte
/// offset of the offending value.
pub fn parse_json(src: &str) -> Result<LinearLayout> {
    let top = parse_value(src)?;
    let Value::Map(entries) = &top.value else {
        return Err(error_at(
            src,
            top.at,
            "expected an object with `in` and `out`",
        ));
    };
    let mut ins = None;
    let mut outs = None;
    for (key, v) in entries {
        match key.as_str() {
            "in" if ins.is_none() => ins = Some(v),
            "out" if outs.is_none() => outs = Some(v),
            "in" | "out" => {
                return Err(error_at(src, v.at, format!("key `{key}` is given twice")))
            }
            _ => {
                return Err(error_at(
                    src,
                    v.at,
                    format!("unexpected key `{key}`: the object has `in` (in-dim bases) and `out` (out-dim sizes)"),
                ))
            }
        }
    }
    let (Some(ins), Some(outs)) = (ins, outs) else {
        return Err(error_at(
            src,
            top.at,
            "the object needs both `in` and `out`",
        ));
    };
    let Value::Map(in_entries) = &ins.value else {
        return Err(error_at(
            src,
            ins.at,
            "`in` must be an object of in-dim bases",
        ));
    };
    let Value::Map(out_entries) = &outs.value else {
        return Err(error_at(
            src,
            outs.at,
            "`out` must be an object of out-dim sizes",
        ));
    };
    let mut out_dims: Vec<(String, u64)> = Vec::new();
    for (name, v) in out_entries {
        if out_dims.iter().any(|(n, _)| n == name) {
            return Err(error_at(
                src,
                v.at,
                format!("out-dim `{name}` is named twice"),
            ));
        }
        let size = uint(src, v, "an out-dim size")?;
        if !size.is_power_of_two() {
            return Err(error_at(
                src,
                v.at,
                format!("the size of out-dim `{name}` is {size}, not a power of two"),
            ));
        }
        out_dims.push((name.clone(), size));
    }
    let mut in_dims = Vec::new();
    for (name, v) in in_entries {
        let bases = bases_of(src, v, name)?;
        // Point at the first base that does not fit the out-dims.
        if let Value::List(items) = &v.value {
            for (b, (base, item)) in bases.iter().zip(items).enumerate() {
                let fits = base.len() == out_dims.len()
                    && base.iter().zip(&out_dims).all(|(c, (_, size))| c < size);
                if !fits {
                    let dims: Vec<String> =
                        out_dims.iter().map(|(n, s)| format!("{n}: {s}")).collect();
                    return Err(error_at(
                        src,
                        item.at,
                        format!(
                            "base {b} of in-dim `{name}` does not fit the out-dims {{{}}} \
                             (one coordinate per out-dim, each below its size)",
                            dims.join(", ")
                        ),
                    ));
                }
            }
        }
        in_dims.push((name.clone(), bases));
    }
    LinearLayout::new(in_dims, out_dims).map_err(|e| with_offset(src, top.at, e))
}

/// Reads `#ttg.linear<{register = [...], lane = [...], warp = [...], block = []}>` (the `#ttg.linear<`
/// wrapper is optional). Out-dims are `dim0..` sized to the smallest power of two above every base.
pub fn parse_ttg(src: &str) -> Result<LinearLayout> {
    let trimmed = src.trim_start();
    let lead = src.len() - trimmed.len();
    let (body_at, body) = match trimmed.strip_prefix("#ttg.linear<") {
        Some(rest) => {
            let rest_t = rest.trim_end();
            let Some(inner) = rest_t.strip_suffix('>') else {
                return Err(error_at(
                    src,
                    src.trim_end().len(),
                    "expected `>` closing `#ttg.linear<`",
                ));
            };
            (lead + "#ttg.linear<".len(), inner)
        }
        None => (lead, trimmed.trim_end()),
    };
    let top = parse_value(body).map_err(|e| match e {
        TritonError::Parse(mut p) => {
            p.offset += body_at;
            p.input = src.to_string();
            TritonError::Parse(p)
        }
        other => other,
    })?;
    let Value::Map(entries) = &top.value else {
        return Err(error_at(
            src,
            body_at + top.at,
            "expected `{in-dim = bases, ...}`",
        ));
    };
    let mut in_dims = Vec::new();
    let mut rank: Option<usize> = None;
    for (name, v) in entries {
        let bases = bases_of(body, v, name).map_err(|e| match e {
            TritonError::Parse(mut p) => {
                p.offset += body_at;
                p.input = src.to_string();
                TritonError::Parse(p)
            }
            other => other,
        })?;
        for b in &bases {
            match rank {
                None => rank = Some(b.len()),
                Some(r) if r != b.len() => {
                    return Err(error_at(
                        src,
                        body_at + v.at,
                        format!("bases of `{name}` have {} coordinates, others {r}", b.len()),
                    ))
                }
                _ => {}
            }
        }
        in_dims.push((name.clone(), bases));
    }
    let rank = rank.unwrap_or(0);
    let mut out_dims = Vec::new();
    for j in 0..rank {
        let max = in_dims
            .iter()
            .flat_map(|(_, bs)| bs.iter().map(|b| b[j]))
            .max()
            .unwrap_or(0);
        let size = max
            .checked_add(1)
            .and_then(u64::checked_next_power_of_two)
            .ok_or_else(|| {
                error_at(
                    src,
                    body_at,
                    format!("coordinate {max} of dim{j} is too large"),
                )
            })?;
        out_dims.push((format!("dim{j}"), size));
    }
    LinearLayout::new(in_dims, out_dims).map_err(|e| with_offset(src, body_at, e))
}

/// Reads either form: JSON when it starts with `{"` or `{ "`/`{'`, else the TTGIR attribute.
pub fn parse_linear(src: &str) -> Result<LinearLayout> {
    let t = src.trim_start();
    let after_brace = t.strip_prefix('{').map(str::trim_start);
    match after_brace {
        Some(rest) if rest.starts_with('"') || rest.starts_with('\'') || rest.is_empty() => {
            parse_json(src)
        }
        // TTGIR text with aliases, or the older `#triton_gpu.` prefix.
        _ if t.starts_with('#') && !t.starts_with("#ttg.linear<") => {
            crate::gluon::ttgir::parse_linear_ttgir(src)
        }
        _ => parse_ttg(src),
    }
}

fn write_bases(s: &mut String, bases: &[Vec<u64>]) {
    s.push('[');
    for (i, b) in bases.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        s.push('[');
        for (j, c) in b.iter().enumerate() {
            if j > 0 {
                s.push_str(", ");
            }
            let _ = write!(s, "{c}");
        }
        s.push(']');
    }
    s.push(']');
}

impl LinearLayout {
    /// The JSON bases form, in-dims and out-dims in order; [`parse_json`] reads it back.
    pub fn to_json(&self) -> String {
        let mut s = String::from("{\"in\": {");
        for (i, d) in self.in_dims().iter().enumerate() {
            if i > 0 {
                s.push_str(", ");
            }
            let _ = write!(s, "\"{}\": ", d.name);
            write_bases(&mut s, &d.bases);
        }
        s.push_str("}, \"out\": {");
        for (i, (name, size)) in self.out_dims().iter().enumerate() {
            if i > 0 {
                s.push_str(", ");
            }
            let _ = write!(s, "\"{name}\": {size}");
        }
        s.push_str("}}");
        s
    }

    /// This layout with Triton's distributed in-dims `register`, `lane`, `warp`, `block`, in that order
    /// (one it lacks is empty: size 1, the same map), or `None` when it has another in-dim (`offset`, a
    /// shared layout's, or any other name).
    pub fn ttg_form(&self) -> Option<LinearLayout> {
        if self
            .in_dims()
            .iter()
            .any(|d| !TTG_IN_DIMS.contains(&d.name.as_str()))
        {
            return None;
        }
        let dims = TTG_IN_DIMS
            .iter()
            .map(|&n| {
                let bases = self.in_dims().iter().find(|d| d.name == n);
                (n.to_string(), bases.map_or(Vec::new(), |d| d.bases.clone()))
            })
            .collect();
        LinearLayout::new(dims, self.out_dims().to_vec()).ok()
    }

    /// The TTGIR attribute `#ttg.linear<{register = [...], lane = [...], warp = [...], block = [...]}>`,
    /// whenever it stands for this layout: law `parse_ttg(l.ttg()?) == l.ttg_form()`. Triton reads
    /// exactly those four in-dims (each must be there; any other is ignored), so a layout with another
    /// in-dim (`offset`: a shared layout, whose attribute is `#ttg.shared_linear`) is refused, and one
    /// lacking some is written with them empty ([`LinearLayout::ttg_form`]). The attribute carries
    /// neither out-dim names nor sizes (TTGIR takes them from the tensor type: `dim0`, `dim1`, ... in
    /// order, each the smallest power of two above its bases when read alone), so a layout whose out-dims
    /// are named otherwise, come in another order or are larger than their bases reach is refused with
    /// [`TritonError::NotExpressible`] saying which; its JSON form ([`LinearLayout::to_json`]) carries
    /// everything.
    pub fn ttg(&self) -> Result<String> {
        let Some(full) = self.ttg_form() else {
            let names: Vec<&str> = self.in_dims().iter().map(|d| d.name.as_str()).collect();
            return Err(TritonError::NotExpressible(format!(
                "Triton's `#ttg.linear` reads the in-dims register, lane, warp and block and no other; \
                 this layout's are {}: the JSON form keeps them",
                names.join(", ")
            )));
        };
        full.ttg_checked()
    }

    fn ttg_checked(&self) -> Result<String> {
        for (j, (name, _)) in self.out_dims().iter().enumerate() {
            if *name != format!("dim{j}") {
                let names: Vec<&str> = self.out_dims().iter().map(|(n, _)| n.as_str()).collect();
                return Err(TritonError::NotExpressible(format!(
                    "a `#ttg.linear` attribute names its out-dims dim0, dim1, ... in order; this layout's \
                     are {} (out-dim {j} is `{name}`): the JSON form keeps them",
                    names.join(", ")
                )));
            }
        }
        let text = self.to_ttg();
        let unspellable = || {
            TritonError::NotExpressible(
                "its `#ttg.linear` attribute would not read back as this layout: the JSON form keeps it"
                    .to_string(),
            )
        };
        let back = parse_ttg(&text).map_err(|_| unspellable())?;
        if back.out_dims().len() != self.out_dims().len() {
            return Err(TritonError::NotExpressible(format!(
                "without bases a `#ttg.linear` attribute has no out-dims, and this layout has {}: the JSON \
                 form keeps them",
                self.out_dims().len()
            )));
        }
        for ((name, size), (_, read)) in self.out_dims().iter().zip(back.out_dims()) {
            if size != read {
                return Err(TritonError::NotExpressible(format!(
                    "out-dim `{name}` has size {size}, but its bases reach only {read}, and a \
                     `#ttg.linear` attribute carries no sizes (TTGIR takes them from the tensor type): \
                     the JSON form keeps them"
                )));
            }
        }
        if back != *self {
            return Err(unspellable());
        }
        Ok(text)
    }

    /// The bases as a TTGIR attribute `#ttg.linear<{register = [...], ...}>`, unchecked: it stands for this
    /// layout only where [`LinearLayout::ttg`] accepts it (out-dims `dim0..` in order, each the smallest
    /// power of two above its bases); elsewhere [`parse_ttg`] reads back another layout. Prefer
    /// [`LinearLayout::ttg`].
    pub fn to_ttg(&self) -> String {
        let mut s = String::from("#ttg.linear<{");
        for (i, d) in self.in_dims().iter().enumerate() {
            if i > 0 {
                s.push_str(", ");
            }
            let _ = write!(s, "{} = ", d.name);
            write_bases(&mut s, &d.bases);
        }
        s.push_str("}>");
        s
    }
}
