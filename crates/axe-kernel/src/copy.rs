//! `copy` and `fill` variants: vectorised moves of the widest vector both layouts and the alignment allow.
//!
//! A `b`-byte vector moves `w = b / bytes(dtype)` consecutive logical elements (flat, row-major). It is
//! correct for a tensor exactly when its layout `T` over the flat shape is a tile of the contiguous atom
//! `A = S[w:1]`: `T = tile(A, B)` ([`axe_layout::Layout::tile_of`] finds `B`), which says every chunk of `w`
//! is contiguous and every chunk starts at a multiple of `w` (σ = span(A) = w scales `B`), and the offset
//! is a multiple of `w` too. Global buffers are 16-byte aligned, shared ones 128-byte aligned.

use axe_layout::{Axis, Coord, Layout};

use crate::desc::{Call, Op, Space, Tensor, Value};
use crate::dispatch::{Ctx, Outcome, Variant};
use crate::dtype::DType;
use crate::error::{layout, Result};
use crate::ir::LStmt;
use crate::spread::{access, replica_offsets, spread, workers};

/// Whether `w`-element vectors fit tensor `t` (see the module docs); the reason if not. `role` names
/// the tensor in the reason ("the destination"). A source's replicas are ignored (one copy is read); a
/// destination's replica offsets must be multiples of `w` as well.
pub fn vector_fits(
    t: &Tensor,
    w: u64,
    role: &str,
    write: bool,
) -> Result<std::result::Result<(), String>> {
    if !t.in_memory() {
        return Ok(Err(format!(
            "{role} lives in registers, which this variant does not address"
        )));
    }
    if w <= 1 {
        return Ok(Ok(()));
    }
    let size = t.size();
    if !size.is_multiple_of(w) {
        return Ok(Err(format!(
            "{role} has {size} elements, not a multiple of {w}"
        )));
    }
    let m = Axis::memory();
    let replicas = if write {
        t.layout.replica().to_vec()
    } else {
        Vec::new()
    };
    let plain = Layout::new(t.layout.shard().to_vec(), replicas, Coord::zero())
        .map_err(layout(format!("tensor {}", t.name)))?;
    let atom = Layout::row_major(&[w]).map_err(layout("a vector atom"))?;
    if plain.tile_of(&atom, &[size], &[w]).is_err() {
        return Ok(Err(why_not(&plain, w, role)?));
    }
    let o = t.layout.offset().get(&m);
    if o % w as i64 != 0 {
        return Ok(Err(format!(
            "{role} starts at element {o}, not a multiple of {w}"
        )));
    }
    Ok(Ok(()))
}

/// A reason, in the canonical layout's terms, why `S[w:1]` does not tile `plain`.
fn why_not(plain: &Layout, w: u64, role: &str) -> Result<String> {
    let canon = plain.canonicalize().map_err(layout("a vector check"))?;
    let shard = canon.shard();
    let Some(inner) = shard.last() else {
        return Ok(format!("{role} has a single element"));
    };
    if inner.stride() != 1 {
        return Ok(format!("{role}'s innermost stride is {}", inner.stride()));
    }
    if inner.extent() % w != 0 {
        return Ok(format!(
            "{role}'s innermost contiguous run is {} elements",
            inner.extent()
        ));
    }
    if let Some(it) = shard
        .iter()
        .chain(canon.replica())
        .find(|it| it.stride() % w as i64 != 0)
    {
        return Ok(format!(
            "{role}'s stride {} (over {} steps) is not a multiple of {w}, so chunks would be misaligned",
            it.stride(),
            it.extent()
        ));
    }
    Ok(format!("{role}'s layout {canon} is not a tile of S[{w}:1]"))
}

/// The widest vector (in bytes, 16 down to the element size) that fits every tensor; the brute-force
/// property tests check this is the largest correct width.
pub fn widest(tensors: &[(&Tensor, &str, bool)], dtype: DType) -> Result<u32> {
    for bytes in [16, 8, 4, 2] {
        if bytes < dtype.bytes() {
            break;
        }
        let w = u64::from(bytes / dtype.bytes());
        let mut ok = true;
        for (t, role, write) in tensors {
            if vector_fits(t, w, role, *write)?.is_err() {
                ok = false;
            }
        }
        if ok {
            return Ok(bytes);
        }
    }
    Ok(dtype.bytes())
}

/// A copy or fill with `bytes`-byte vectors.
struct Vector {
    name: &'static str,
    op: &'static str,
    bytes: u32,
}

impl Variant for Vector {
    fn name(&self) -> &'static str {
        self.name
    }
    fn op(&self) -> &'static str {
        self.op
    }
    fn priority(&self) -> i32 {
        // Wider first; element-sized vectors (bytes 0 here: the element) last.
        if self.bytes == 0 {
            0
        } else {
            self.bytes as i32
        }
    }
    fn lower(&self, call: &Call, ctx: &mut Ctx<'_>) -> Result<Outcome> {
        let (dst, src, value) = match &call.op {
            Op::Copy { dst, src } => (dst, Some(src), None),
            Op::Fill { dst, value } => (dst, None, Some(*value)),
            _ => {
                return Ok(Outcome::Declined(format!(
                    "{} lowers copy and fill only",
                    self.name
                )))
            }
        };
        vector_moves(call, ctx, (dst, src, value), self.bytes)
    }
}

/// A copy (`src`) or fill (`value`) of `dst` by `bytes`-byte vectors (0: one element) spread over the
/// call's threads: one `Move` or `Store` per vector and destination replica, or why not.
pub(crate) fn vector_moves(
    call: &Call,
    ctx: &mut Ctx<'_>,
    (dst, src, value): (&Tensor, Option<&Tensor>, Option<Value>),
    bytes: u32,
) -> Result<Outcome> {
    {
        let eb = dst.dtype.bytes();
        let bytes = if bytes == 0 { eb } else { bytes };
        if bytes < eb || bytes % eb != 0 {
            return Ok(Outcome::Declined(format!(
                "{} elements are {eb} bytes, wider than {bytes}-byte vectors",
                dst.dtype
            )));
        }
        let w = u64::from(bytes / eb);
        let mut roles = vec![(dst, "the destination", true)];
        if let Some(s) = src {
            roles.push((s, "the source", false));
        }
        if let Some((_, role, _)) = roles.iter().find(|(t, _, _)| !t.in_memory()) {
            return Ok(Outcome::Declined(format!(
                "{role} lives in registers, which this variant does not address"
            )));
        }
        for (t, role, write) in &roles {
            if let Err(reason) = vector_fits(t, w, role, *write)? {
                let need = if w == 1 {
                    String::new()
                } else if src.is_some() {
                    format!("{bytes}-byte vectors need {w} contiguous {} in both layouts, aligned to {w} elements; ", dst.dtype)
                } else {
                    format!(
                        "{bytes}-byte vectors need {w} contiguous {} aligned to {w} elements; ",
                        dst.dtype
                    )
                };
                return Ok(Outcome::Declined(format!("{need}{reason}")));
            }
        }
        let workers = match workers(&call.scope, ctx) {
            Ok(w) => w,
            Err(reason) => return Ok(Outcome::Declined(reason)),
        };
        let pattern = match value {
            None => None,
            Some(v) => match encode(dst.dtype, v) {
                Ok(one) => Some(one.repeat(w as usize)),
                Err(reason) => return Ok(Outcome::Declined(reason)),
            },
        };
        let chunks = dst.size() / w;
        let reps = replica_offsets(dst)?;
        let id = call.id;
        let code = spread(ctx, &workers, chunks, |_, c| {
            let mut out = Vec::new();
            for r in &reps {
                let d = access(dst, &c, w, *r)?;
                out.push(match (src, &pattern) {
                    (Some(s), _) => LStmt::Move {
                        call: id,
                        dst: d,
                        src: access(s, &c, w, 0)?,
                        bytes,
                    },
                    (None, Some(p)) => LStmt::Store {
                        call: id,
                        dst: d,
                        value: p.clone(),
                    },
                    (None, None) => continue,
                });
            }
            Ok(out)
        })?;
        let space = |t: &Tensor| {
            if matches!(t.space, Space::Global) {
                "global"
            } else {
                "shared"
            }
        };
        let why = match src {
            Some(s) => format!(
                "{bytes}-byte vectors ({w} × {}) fit both layouts: {} {} → {} {}; {chunks} vectors over {} threads",
                dst.dtype, space(s), s.layout, space(dst), dst.layout, workers.count
            ),
            None => format!(
                "{bytes}-byte vectors ({w} × {}) fit {} {}; {chunks} vectors over {} threads",
                dst.dtype, space(dst), dst.layout, workers.count
            ),
        };
        Ok(Outcome::Lowered { why, code })
    }
}

static VARIANTS: [Vector; 10] = [
    Vector {
        name: "copy.vec16",
        op: "copy",
        bytes: 16,
    },
    Vector {
        name: "copy.vec8",
        op: "copy",
        bytes: 8,
    },
    Vector {
        name: "copy.vec4",
        op: "copy",
        bytes: 4,
    },
    Vector {
        name: "copy.vec2",
        op: "copy",
        bytes: 2,
    },
    Vector {
        name: "copy.element",
        op: "copy",
        bytes: 0,
    },
    Vector {
        name: "fill.vec16",
        op: "fill",
        bytes: 16,
    },
    Vector {
        name: "fill.vec8",
        op: "fill",
        bytes: 8,
    },
    Vector {
        name: "fill.vec4",
        op: "fill",
        bytes: 4,
    },
    Vector {
        name: "fill.vec2",
        op: "fill",
        bytes: 2,
    },
    Vector {
        name: "fill.element",
        op: "fill",
        bytes: 0,
    },
];

/// The copy and fill variants.
pub fn variants() -> Vec<&'static dyn Variant> {
    VARIANTS.iter().map(|v| v as &'static dyn Variant).collect()
}

/// The bytes of `v` as one `dtype` element (little-endian), or why it has none.
pub fn encode(dtype: DType, v: Value) -> std::result::Result<Vec<u8>, String> {
    let int = |lo: i64, hi: i64| match v {
        Value::Int(i) if (lo..=hi).contains(&i) => Ok(i),
        // Compared as i128: `hi as f64` rounds up to 2^63 for s64, which `f as i64` would saturate.
        Value::Float(f)
            if f.fract() == 0.0 && (i128::from(lo)..=i128::from(hi)).contains(&(f as i128)) =>
        {
            Ok(f as i64)
        }
        _ => Err(format!("{v:?} is not a {dtype} value ({lo}..={hi})")),
    };
    let float = match v {
        Value::Int(i) => i as f64,
        Value::Float(f) => f,
    };
    Ok(match dtype {
        DType::F64 => float.to_le_bytes().to_vec(),
        DType::F32 => match v {
            Value::Int(i) => i as f32,
            Value::Float(f) => f as f32,
        }
        .to_le_bytes()
        .to_vec(),
        // One rounding from the value given (an integer is not first made an f64).
        DType::F16 => match v {
            Value::Int(i) => crate::round::i64_to_f16(i),
            Value::Float(f) => crate::round::f64_to_f16(f),
        }
        .to_le_bytes()
        .to_vec(),
        DType::BF16 => match v {
            Value::Int(i) => crate::round::i64_to_bf16(i),
            Value::Float(f) => crate::round::f64_to_bf16(f),
        }
        .to_le_bytes()
        .to_vec(),
        DType::F8E4M3 if float == 0.0 => vec![if float.is_sign_negative() { 0x80 } else { 0 }],
        DType::F8E4M3 => return Err("f8e4m3 fills take 0 only (no converter yet)".into()),
        DType::S8 => (int(-128, 127)? as i8).to_le_bytes().to_vec(),
        DType::U8 => vec![int(0, 255)? as u8],
        DType::S16 => (int(-32768, 32767)? as i16).to_le_bytes().to_vec(),
        DType::S32 => (int(i32::MIN.into(), i32::MAX.into())? as i32)
            .to_le_bytes()
            .to_vec(),
        DType::S64 => int(i64::MIN, i64::MAX)?.to_le_bytes().to_vec(),
    })
}
