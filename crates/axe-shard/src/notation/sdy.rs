//! Shardy (`sdy`) tensor shardings, as JAX 0.10 lowers them: `#sdy.sharding<@mesh, [{"x"}, {"y", ?}]>`.
//!
//! Read: a `#sdy.sharding<MESH, [DIMS], replicated={...}, unreduced={...}>` attribute (the `#sdy.sharding`
//! prefix may be left off, as `sdy.sharding_constraint` prints it: `<@mesh, [{"x"}, {}]>`), optionally
//! after the `sdy.mesh @name = <...>` lines that define its mesh (separated by newlines or `;`, a trailing
//! `{stablehlo.mesh = ...}` dictionary ignored). MESH is `@name` (a mesh defined before it, else the
//! caller's mesh, whatever its name) or an inline `mesh<["x"=2, "y"=4], device_ids=[...]>`. Each dim lists
//! the mesh axes splitting it, major to minor; a sub-axis `"x":(p)s` is the part of axis `x` of size `s`
//! after the major part of size `p` (so `"x":(1)2` is the major half of an `x` of 4), read by splitting
//! the mesh axis (`x` of 4 becomes `x_0=2,x_1=2`, pieces of `x` ([`Mesh::split_of`]), as HLO text read onto
//! a mesh splits it). An open dim (`?`) and a priority (`p1`) only steer Shardy's propagation: the sharding
//! is the axes listed, and they are kept as its [`crate::DimHint`]s, which Shardy text prints back. Axes in
//! `replicated={...}` replicate (as every axis named nowhere does); `unreduced={...}` axes hold partial
//! sums (XLA's `unreduced`). A mesh with no axes and one device id (`<[], device_ids=[3]>`) is maximal:
//! its sharding lists no dims, and device 3 holds everything. A mesh with no axes and no ids replicates.
//!
//! A sharding whose mesh is in its own text (a definition or inline) is over device ids, as HLO text is:
//! read onto the caller's mesh, its device order becomes a placement ([`Sharding::with_placement`]).

use crate::error::{Result, ShardError};
use crate::mesh::Mesh;
use crate::model::{DimHint, Sharding};
use crate::notation::sdy_axes::on_mesh;

/// A read mesh: axes (name, size) and its device ids where the text gives them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct MeshLit {
    pub(crate) axes: Vec<(String, u64)>,
    pub(crate) ids: Option<Vec<u64>>,
}

impl MeshLit {
    /// The mesh (ids `0..N-1` where the text gives none).
    fn mesh(&self) -> Result<Mesh> {
        let refs: Vec<(&str, u64)> = self.axes.iter().map(|(n, s)| (n.as_str(), *s)).collect();
        match &self.ids {
            Some(ids) => Mesh::with_devices(&refs, ids.clone()),
            None => Mesh::new(&refs),
        }
    }
}

/// One axis reference: a name, and `(pre, size)` for a sub-axis; with its byte offset.
#[derive(Clone, Debug)]
pub(crate) struct AxisRef {
    pub(crate) name: String,
    pub(crate) sub: Option<(u64, u64)>,
    pub(crate) at: usize,
}

/// The parsed attribute, before its axes are resolved on a mesh.
pub(crate) struct Attr {
    mesh: Option<MeshLit>,
    mesh_name: Option<(String, usize)>,
    pub(crate) dims: Vec<Vec<AxisRef>>,
    /// Per dim, its `?` and priority.
    pub(crate) hints: Vec<DimHint>,
    pub(crate) replicated: Vec<AxisRef>,
    pub(crate) unreduced: Vec<AxisRef>,
    pub(crate) dims_at: usize,
}

/// A cursor over the text, every error at its byte offset.
struct Cur<'a> {
    text: &'a str,
    i: usize,
}

impl<'a> Cur<'a> {
    fn err<T>(&self, msg: impl Into<String>, at: usize) -> Result<T> {
        Err(ShardError::Parse {
            msg: msg.into(),
            text: self.text.to_string(),
            offset: at,
        })
    }
    fn ws(&mut self) {
        let rest = &self.text[self.i..];
        self.i += rest.len() - rest.trim_start().len();
    }
    fn eat(&mut self, s: &str) -> bool {
        self.ws();
        if self.text[self.i..].starts_with(s) {
            self.i += s.len();
            true
        } else {
            false
        }
    }
    fn expect(&mut self, s: &str, what: &str) -> Result<()> {
        if self.eat(s) {
            Ok(())
        } else {
            self.err(format!("expected {what}"), self.i)
        }
    }
    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.text.as_bytes().get(self.i).copied()
    }
    /// A decimal integer (at most 2^63 - 1, as MLIR's i64).
    fn int(&mut self, what: &str) -> Result<u64> {
        self.ws();
        let start = self.i;
        let digits = self.text[start..]
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count();
        if digits == 0 {
            return self.err(format!("expected {what} (a non-negative integer)"), start);
        }
        self.i += digits;
        match self.text[start..self.i].parse::<u64>() {
            Ok(v) if i64::try_from(v).is_ok() => Ok(v),
            _ => self.err(
                format!("{what} is past 2^63-1 (Shardy's integers are signed 64-bit)"),
                start,
            ),
        }
    }
    /// A `"quoted"` string (no escapes: axis names are letters, digits and `_`).
    fn string(&mut self, what: &str) -> Result<(String, usize)> {
        self.ws();
        let at = self.i;
        if !self.eat("\"") {
            return self.err(format!("expected {what} in double quotes"), at);
        }
        match self.text[self.i..].find(['"', '\n']) {
            Some(e) if self.text.as_bytes()[self.i + e] == b'"' => {
                let s = self.text[self.i..self.i + e].to_string();
                self.i += e + 1;
                Ok((s, at))
            }
            _ => self.err("unterminated string", at),
        }
    }
    /// `@name`: a symbol (letters, digits, `_`, `.`, `$`, `-`).
    fn symbol(&mut self) -> Result<(String, usize)> {
        self.ws();
        let at = self.i;
        if !self.eat("@") {
            return self.err("expected a mesh name '@mesh' or an inline mesh<[...]>", at);
        }
        let n = self.text[self.i..]
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || b"_.$-".contains(b))
            .count();
        if n == 0 {
            return self.err("expected a mesh name after '@'", self.i);
        }
        let s = self.text[self.i..self.i + n].to_string();
        self.i += n;
        Ok((s, at))
    }
    /// `<["x"=2, "y"=4], device_ids=[...]>`.
    fn mesh_lit(&mut self) -> Result<MeshLit> {
        self.expect("<", "'<' opening a mesh")?;
        self.expect("[", "'[' opening the mesh's axes")?;
        let mut axes: Vec<(String, u64)> = Vec::new();
        if !self.eat("]") {
            loop {
                let (name, at) = self.string("a mesh axis name")?;
                if axes.iter().any(|(n, _)| *n == name) {
                    return self.err(format!("mesh axis {name:?} is named twice"), at);
                }
                self.expect("=", "'=' and the axis size")?;
                let size = self.int("the axis size")?;
                axes.push((name, size));
                if self.eat("]") {
                    break;
                }
                self.expect(",", "',' or ']'")?;
            }
        }
        let mut ids = None;
        if self.eat(",") {
            self.expect("device_ids", "device_ids=[...]")?;
            self.expect("=", "'='")?;
            self.expect("[", "'['")?;
            let mut v = Vec::new();
            if !self.eat("]") {
                loop {
                    v.push(self.int("a device id")?);
                    if self.eat("]") {
                        break;
                    }
                    self.expect(",", "',' or ']'")?;
                }
            }
            ids = Some(v);
        }
        self.expect(">", "'>' closing the mesh")?;
        Ok(MeshLit { axes, ids })
    }
    /// `"x"` or `"x":(1)2`.
    fn axis_ref(&mut self) -> Result<AxisRef> {
        let (name, at) = self.string("a mesh axis name")?;
        let mut sub = None;
        if self.eat(":") {
            self.expect("(", "'(' and the sub-axis's pre-size, as in \"x\":(1)2")?;
            let pre = self.int("the sub-axis's pre-size")?;
            self.expect(")", "')'")?;
            let size = self.int("the sub-axis's size")?;
            sub = Some((pre, size));
        }
        Ok(AxisRef { name, sub, at })
    }
    /// `{"x", "y"}`, `{"x", ?}`, `{?}`, `{}`, then an optional priority `p1`.
    fn dim(&mut self) -> Result<(Vec<AxisRef>, DimHint)> {
        self.expect("{", "'{' opening a dim's axes")?;
        let mut out = Vec::new();
        let mut open = false;
        if !self.eat("}") {
            loop {
                if self.eat("?") {
                    open = true;
                    self.expect("}", "'}' after '?' (an open dim ends the list)")?;
                    break;
                }
                out.push(self.axis_ref()?);
                if self.eat("}") {
                    break;
                }
                self.expect(",", "',' or '}'")?;
            }
        }
        // A priority steers propagation only; Shardy refuses one on an empty closed dim.
        let mut priority = None;
        if self.text[self.i..].starts_with('p')
            && self.text[self.i + 1..].starts_with(|c: char| c.is_ascii_digit())
        {
            if out.is_empty() && !open {
                return self.err(
                    "an empty closed dim {} has no priority (as Shardy says)",
                    self.i,
                );
            }
            self.i += 1;
            priority = Some(self.int("a priority")?);
        }
        merged(self, &out)?;
        Ok((out, DimHint { open, priority }))
    }
    /// `{"x", "y":(1)2}` after `replicated=` or `unreduced=`.
    fn axis_set(&mut self) -> Result<Vec<AxisRef>> {
        self.expect("=", "'='")?;
        self.expect("{", "'{'")?;
        let mut out = Vec::new();
        if !self.eat("}") {
            loop {
                out.push(self.axis_ref()?);
                if self.eat("}") {
                    break;
                }
                self.expect(",", "',' or '}'")?;
            }
        }
        merged(self, &out)?;
        Ok(out)
    }
    /// Skips a balanced `{...}` dictionary (a mesh definition's trailing attributes).
    fn skip_dict(&mut self) -> Result<()> {
        let at = self.i;
        let mut depth = 0usize;
        for (k, b) in self.text[self.i..].bytes().enumerate() {
            match b {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        self.i += k + 1;
                        return Ok(());
                    }
                }
                _ => {}
            }
        }
        self.err("unbalanced '{' in the mesh's attributes", at)
    }
}

/// An error where two adjacent references are sub-axes of one axis that make one (`"x":(1)2, "x":(2)2`
/// is `"x":(1)4`), which Shardy refuses: it writes each sharding one way.
fn merged(c: &Cur, refs: &[AxisRef]) -> Result<()> {
    for w in refs.windows(2) {
        if let (Some((p, s)), Some((q, _))) = (w[0].sub, w[1].sub) {
            if w[0].name == w[1].name && p.saturating_mul(s) == q {
                return c.err(
                    format!(
                        "two adjacent sub-axes of {:?} make one: write them as one sub-axis (as Shardy asks)",
                        w[0].name
                    ),
                    w[1].at,
                );
            }
        }
    }
    Ok(())
}

/// Whether `text` looks like a Shardy sharding or mesh definition (how [`crate::Notation::detect`] tells).
pub(crate) fn looks_like(text: &str) -> bool {
    let t = text.trim_start();
    t.starts_with("#sdy") || t.starts_with("sdy.") || t.starts_with("<@") || t.starts_with("<mesh<")
}

/// Reads the text: mesh definitions, then the sharding attribute.
fn parse_attr(text: &str) -> Result<(Vec<(String, MeshLit)>, Attr)> {
    let mut c = Cur { text, i: 0 };
    let mut defs: Vec<(String, MeshLit)> = Vec::new();
    loop {
        c.ws();
        while c.eat(";") {}
        if !c.eat("sdy.mesh") {
            break;
        }
        let (name, at) = c.symbol()?;
        if defs.iter().any(|(n, _)| *n == name) {
            return c.err(format!("mesh @{name} is defined twice"), at);
        }
        c.expect("=", "'=' and the mesh")?;
        let m = c.mesh_lit()?;
        if c.peek() == Some(b'{') {
            c.skip_dict()?;
        }
        defs.push((name, m));
    }
    c.ws();
    let _ = c.eat("#sdy.sharding");
    c.expect("<", "#sdy.sharding<...>")?;
    let (mut mesh, mut mesh_name) = (None, None);
    if c.eat("#sdy.mesh") || c.eat("mesh") {
        mesh = Some(c.mesh_lit()?);
    } else {
        mesh_name = Some(c.symbol()?);
    }
    c.expect(",", "',' and the dims' axes [{...}, ...]")?;
    c.ws();
    let dims_at = c.i;
    c.expect("[", "'[' opening the dims' axes")?;
    let (mut dims, mut hints) = (Vec::new(), Vec::new());
    if !c.eat("]") {
        loop {
            let (d, h) = c.dim()?;
            dims.push(d);
            hints.push(h);
            if c.eat("]") {
                break;
            }
            c.expect(",", "',' or ']'")?;
        }
    }
    let (mut replicated, mut unreduced) = (Vec::new(), Vec::new());
    while c.eat(",") {
        c.ws();
        if c.eat("replicated") {
            replicated = c.axis_set()?;
        } else if c.eat("unreduced") {
            unreduced = c.axis_set()?;
        } else if c.text[c.i..].starts_with("reduced") {
            return c.err(
                "reduced={...} is not read (only replicated and unreduced)",
                c.i,
            );
        } else {
            return c.err("expected replicated={...} or unreduced={...}", c.i);
        }
    }
    c.expect(">", "'>' closing the sharding")?;
    c.ws();
    if c.i < text.len() {
        return c.err("unexpected text after the sharding", c.i);
    }
    let attr = Attr {
        mesh,
        mesh_name,
        dims,
        hints,
        replicated,
        unreduced,
        dims_at,
    };
    Ok((defs, attr))
}

/// Reads a Shardy mesh: `<["x"=2, "y"=4]>`, `<["x"=2], device_ids=[1,0]>`, `#sdy.mesh<...>`, `mesh<...>`
/// or a definition `sdy.mesh @mesh = <...>` (its trailing attribute dictionary ignored). Law: the mesh's
/// axes are the listed ones, in order, and its device at row-major position `v` is `device_ids[v]`
/// (`v` where there are none).
pub fn parse_sdy_mesh(text: &str) -> Result<Mesh> {
    let mut c = Cur { text, i: 0 };
    if c.eat("sdy.mesh") {
        c.symbol()?;
        c.expect("=", "'=' and the mesh")?;
    } else if !c.eat("#sdy.mesh") {
        let _ = c.eat("mesh");
    }
    let m = c.mesh_lit()?;
    if c.peek() == Some(b'{') {
        c.skip_dict()?;
    }
    c.ws();
    if c.i < text.len() {
        return c.err("unexpected text after the mesh", c.i);
    }
    m.mesh()
}

/// Reads Shardy text as a sharding of an array of `dims`: onto `mesh` where given (the mesh `@name`
/// refers to when the text does not define it, or the one a sharding with its own mesh is read onto),
/// else onto the mesh the text defines. Sub-axes split mesh axes, so the mesh returned may refine the one
/// given (`x` of 4 becoming `x_0=2,x_1=2`, positions unchanged).
///
/// Law: each device's region is the one Shardy (and XLA's export of it to HloSharding) gives it.
pub fn parse_sdy(text: &str, mesh: Option<&Mesh>, dims: &[u64]) -> Result<(Mesh, Sharding)> {
    let (defs, attr) = parse_attr(text)?;
    let own: Option<MeshLit> = match (&attr.mesh, &attr.mesh_name) {
        (Some(m), _) => Some(m.clone()),
        (None, Some((name, at))) => match defs.iter().find(|(n, _)| n == name) {
            Some((_, m)) => Some(m.clone()),
            None if mesh.is_some() => None,
            None => {
                return Err(ShardError::Parse {
                    msg: format!(
                        "mesh @{name} is not defined here: give the mesh (--mesh x=2,y=4, or its \
                         <[\"x\"=2, \"y\"=4]>), or put its 'sdy.mesh @{name} = <...>' line first"
                    ),
                    text: text.to_string(),
                    offset: *at,
                })
            }
        },
        (None, None) => None,
    };
    let err = |msg: String, offset: usize| ShardError::Parse {
        msg,
        text: text.to_string(),
        offset,
    };
    let Some(lit) = own else {
        let m = mesh.ok_or_else(|| err("no mesh".into(), 0))?;
        return on_mesh(text, &attr, m, dims);
    };
    // The text's own mesh: a maximal mesh names its device.
    let own_mesh = lit.mesh().map_err(|e| err(e.to_string(), 0))?;
    let s = if lit.axes.is_empty() && lit.ids.is_some() {
        if !attr.dims.is_empty() || !attr.replicated.is_empty() || !attr.unreduced.is_empty() {
            return Err(err(
                "a maximal mesh (no axes, one device id) shards no dims: its sharding is []".into(),
                attr.dims_at,
            ));
        }
        let d = own_mesh.devices()[0];
        (
            own_mesh.clone(),
            Sharding::maximal(&own_mesh, dims.to_vec(), d)?,
        )
    } else {
        on_mesh(text, &attr, &own_mesh, dims)?
    };
    match mesh {
        None => Ok(s),
        // Over device ids: through its HloSharding form, read onto the caller's mesh as HLO text is
        // (the dims' hints kept: they are per tensor dim).
        Some(m) => {
            let h = crate::notation::hlo::to_hlo(&s.0, &s.1)?;
            let (m, t) =
                crate::notation::any::parse_any(&h, Some(crate::Notation::Hlo), Some(m), dims)?;
            Ok((m, t.hints_of(&s.1)))
        }
    }
}
