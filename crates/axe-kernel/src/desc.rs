//! The kernel description: buffers, tensors with Axe layouts, statements and operators at scopes.
//!
//! A [`Tensor`] is a view: a dtype, a logical shape and an Axe layout mapping each logical index to the
//! place its element lives — the memory axis `m` (in elements) of a global or shared buffer, or the axes
//! `reg`, `lane`, `warp` of a register buffer. A region of a tensor is again a tensor ([`Tensor::region`],
//! the layout's `slice`). Operators ([`Op`]) are called at a [`Scope`]; dispatch picks their schedule.

use std::ops::Range;

use axe_layout::{Axis, Layout};

use crate::dtype::DType;
use crate::error::{layout, overflow, KernelError, Result};
use crate::expr::{Expr, Var};
use crate::scope::{Launch, Scope};

pub mod intrinsic;
mod names;
mod ops;
mod sync;
mod window;

pub(crate) use sync::mbar_access as sync_access;
pub use sync::{Mbar, SyncStmt};

pub use ops::{BinaryOp, Op, UnaryOp, Value};

/// A shared-memory swizzle: within each `bytes`-byte row of 16-byte chunks, chunk `c` of row `r` is
/// stored at chunk `c ^ (r mod (bytes/16))` (the 32/64/128-byte swizzles of TMA and wgmma).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Swizzle {
    /// 32-byte span: 2 chunks.
    B32,
    /// 64-byte span: 4 chunks.
    B64,
    /// 128-byte span: 8 chunks.
    B128,
}

impl Swizzle {
    /// The span in bytes.
    pub fn bytes(self) -> u64 {
        match self {
            Swizzle::B32 => 32,
            Swizzle::B64 => 64,
            Swizzle::B128 => 128,
        }
    }

    /// The physical byte offset of logical byte offset `b`: the 16-byte chunk bits `[4, 4+k)` are XORed
    /// with the row bits `[7, 7+k)`, `k = log2(bytes/16)`. An involution; bytes within a chunk keep order.
    pub fn apply(self, b: i64) -> i64 {
        let mask = (self.bytes() as i64 / 16) - 1;
        b ^ (((b >> 7) & mask) << 4)
    }
}

/// Where a buffer lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Space {
    /// Global memory: a kernel parameter.
    Global,
    /// Shared memory of each CTA, optionally swizzled.
    Shared(Option<Swizzle>),
    /// Registers: `elems` per thread; tensors address them through `reg`, `lane`, `warp`.
    Registers,
    /// Trainium's state buffer: 128 partitions (axis `P`) of `elems / 128` elements each (axis `F`,
    /// the free dimension); TensorE reads its operands here ([`crate::tensore`]).
    Sbuf,
    /// Trainium's partial-sum buffer: 128 partitions (`P`) by a free dimension (`F`), like SBUF;
    /// TensorE accumulates its results here.
    Psum,
}

/// A buffer: named storage of `elems` elements of one dtype.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Buffer {
    /// Its name (a kernel parameter's name for global buffers).
    pub name: String,
    /// Where it lives.
    pub space: Space,
    /// Element type.
    pub dtype: DType,
    /// Elements (per thread for registers).
    pub elems: u64,
}

impl Buffer {
    /// Bytes it holds (per thread for registers).
    pub fn bytes(&self) -> Result<u64> {
        self.elems
            .checked_mul(u64::from(self.dtype.bytes()))
            .ok_or_else(|| overflow("sizing a buffer"))
    }
}

/// A buffer's index in its kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BufferId(pub usize);

/// A tensor: `layout` maps each index of `shape` to where its element lives in `buffer`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tensor {
    /// The tensor's name in messages.
    pub name: String,
    /// The buffer holding it.
    pub buffer: BufferId,
    /// Where that buffer lives.
    pub space: Space,
    /// Element type.
    pub dtype: DType,
    /// Logical shape.
    pub shape: Vec<u64>,
    /// The Axe layout over `shape`.
    pub layout: Layout,
}

impl Tensor {
    /// Elements (the product of the shape).
    pub fn size(&self) -> u64 {
        self.shape.iter().product()
    }

    /// The region `Π [r_i.start, r_i.end)` as a tensor of shape `(r_i.end - r_i.start)`, with the layout
    /// `slice(L, shape, region)`: element `x` of the region is element `start + x` of `self`.
    pub fn region(&self, region: &[Range<u64>]) -> Result<Tensor> {
        let layout = self
            .layout
            .slice(&self.shape, region)
            .map_err(layout(format!("region {region:?} of tensor {}", self.name)))?;
        Ok(Tensor {
            name: format!("{}{}", self.name, show_region(region)),
            shape: region.iter().map(|r| r.end - r.start).collect(),
            layout,
            ..self.clone()
        })
    }

    /// Whether the tensor lives in memory addressed by `m` (global or shared; not SBUF or PSUM).
    pub fn in_memory(&self) -> bool {
        matches!(self.space, Space::Global | Space::Shared(_))
    }
}

fn show_region(region: &[Range<u64>]) -> String {
    let parts: Vec<String> = region
        .iter()
        .map(|r| format!("{}:{}", r.start, r.end))
        .collect();
    format!("[{}]", parts.join(","))
}

/// An operator called at a scope.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// Its index among the kernel's calls.
    pub id: usize,
    /// The operator.
    pub op: Op,
    /// Where it runs.
    pub scope: Scope,
    /// A variant the caller forces, bypassing priorities (it must still apply).
    pub force: Option<String>,
}

impl Call {
    /// `copy #3`, or `binary exp_sub #2` with a pointwise operator's function — how messages name
    /// the call.
    pub fn label(&self) -> String {
        match &self.op {
            Op::Unary { op, .. } => format!("unary {} #{}", op.name(), self.id),
            Op::Binary { op, .. } => format!("binary {} #{}", op.name(), self.id),
            op => format!("{} #{}", op.kind(), self.id),
        }
    }
}

/// A statement of the description.
#[derive(Debug, Clone, PartialEq)]
pub enum Stmt {
    /// `for var in 0..extent { body }`.
    For {
        /// The loop variable.
        var: Var,
        /// Iterations.
        extent: u64,
        /// The body.
        body: Vec<Stmt>,
    },
    /// `if cond != 0 { body }`.
    If {
        /// The condition.
        cond: Expr,
        /// The body.
        body: Vec<Stmt>,
    },
    /// `let var = value`.
    Let {
        /// The variable.
        var: Var,
        /// Its value.
        value: Expr,
    },
    /// A CTA-wide barrier (`__syncthreads`): every thread of the CTA must reach it.
    Barrier,
    /// Within `body`, every element of global buffer `buffer` is addressed `base` elements further on
    /// (a tensor's base pointer, per thread: rows of a grid loop). `base` is a multiple of `align`
    /// elements; lowering checks every vector the body moves in the buffer keeps its alignment.
    Window {
        /// The global buffer.
        buffer: BufferId,
        /// The element offset (a multiple of `align`).
        base: Expr,
        /// The alignment of `base`, in elements.
        align: u64,
        /// The body.
        body: Vec<Stmt>,
    },
    /// An mbarrier or register-allocation statement ([`SyncStmt`]).
    Sync(SyncStmt),
    /// Text given by the kernel's author ([`intrinsic::Intrinsic`]).
    Intrinsic(intrinsic::Intrinsic),
    /// An operator call.
    Call(Box<Call>),
}

/// A kernel: a name, a launch shape, buffers and a body.
#[derive(Debug, Clone, PartialEq)]
pub struct Kernel {
    /// The kernel's name (a C identifier).
    pub name: String,
    /// The launch shape.
    pub launch: Launch,
    /// Buffers; global ones are the parameters, in order.
    pub buffers: Vec<Buffer>,
    /// The statements.
    pub body: Vec<Stmt>,
    /// Variables used.
    pub vars: u32,
    /// CTAs per SM the GPU compiler must fit, capping registers per thread
    /// (`__launch_bounds__(threads, n)`); 0 leaves it to the compiler.
    pub min_ctas_per_sm: u32,
}

/// Builds a [`Kernel`], checking each tensor and call as it is added.
#[derive(Debug)]
pub struct KernelBuilder {
    kernel: Kernel,
    open: Vec<Vec<Stmt>>,
    calls: usize,
}

impl KernelBuilder {
    /// A kernel named `name` (a C identifier starting with a letter, not a word the generated code
    /// reserves) with launch shape `launch`.
    pub fn new(name: &str, launch: Launch) -> Result<KernelBuilder> {
        names::check_name("kernel", name)?;
        launch.check()?;
        Ok(KernelBuilder {
            kernel: Kernel {
                name: name.to_string(),
                launch,
                buffers: Vec::new(),
                body: Vec::new(),
                vars: 0,
                min_ctas_per_sm: 0,
            },
            open: vec![Vec::new()],
            calls: 0,
        })
    }

    /// Declares a buffer of `elems` elements in `space`.
    pub fn buffer(
        &mut self,
        name: &str,
        space: Space,
        dtype: DType,
        elems: u64,
    ) -> Result<BufferId> {
        names::check_name("buffer", name)?;
        if self.kernel.buffers.iter().any(|b| b.name == name) {
            return Err(KernelError::Invalid(format!(
                "buffer name {name:?} is taken by another buffer; each buffer needs its own name"
            )));
        }
        if elems == 0 {
            return Err(KernelError::Invalid(format!(
                "buffer {name} has no elements"
            )));
        }
        crate::tensore::check_partitioned(name, space, elems)?;
        let b = Buffer {
            name: name.to_string(),
            space,
            dtype,
            elems,
        };
        b.bytes()?;
        self.kernel.buffers.push(b);
        Ok(BufferId(self.kernel.buffers.len() - 1))
    }

    /// A tensor of `shape` in `buffer` with `layout`; checks the layout admits the shape, names only the
    /// axes the buffer's space has, and stays inside the buffer.
    pub fn tensor(
        &self,
        name: &str,
        buffer: BufferId,
        shape: &[u64],
        layout: Layout,
    ) -> Result<Tensor> {
        let b = self.kernel.buffers.get(buffer.0).ok_or_else(|| {
            KernelError::Invalid(format!("tensor {name}: no buffer #{}", buffer.0))
        })?;
        let t = Tensor {
            name: name.to_string(),
            buffer,
            space: b.space,
            dtype: b.dtype,
            shape: shape.to_vec(),
            layout,
        };
        self.check_tensor(&t)?;
        Ok(t)
    }

    /// Checks `t` is a tensor of this kernel: its buffer exists with `t`'s space and dtype, its layout
    /// admits its shape, names only the axes the buffer's space has, and stays inside the buffer.
    /// (Tensor fields are public, and a tensor of another kernel names a buffer by index only.)
    fn check_tensor(&self, t: &Tensor) -> Result<()> {
        let name = &t.name;
        let layout = &t.layout;
        let b = self.kernel.buffers.get(t.buffer.0).ok_or_else(|| {
            KernelError::Invalid(format!(
                "tensor {name}: kernel {} has no buffer #{}",
                self.kernel.name, t.buffer.0
            ))
        })?;
        if b.space != t.space || b.dtype != t.dtype {
            return Err(KernelError::Invalid(format!(
                "tensor {name}: it is {} in {} memory, but buffer #{} of kernel {} is {} ({} in {} memory): a tensor of another kernel?",
                t.dtype,
                space_name(t.space),
                t.buffer.0,
                self.kernel.name,
                b.name,
                b.dtype,
                space_name(b.space)
            )));
        }
        layout
            .check_admits(&t.shape)
            .map_err(crate::error::layout(format!("tensor {name}")))?;
        let allowed: &[&str] = match b.space {
            Space::Global | Space::Shared(_) => &["m"],
            Space::Registers => &["reg", "lane", "warp"],
            Space::Sbuf | Space::Psum => &["P", "F"],
        };
        for a in layout.axes() {
            if !allowed.contains(&a.name()) {
                return Err(KernelError::Invalid(format!(
                    "tensor {name}: its layout {layout} uses axis {a}, but buffer {} ({}) has only {}",
                    b.name,
                    space_name(b.space),
                    allowed.join(", ")
                )));
            }
        }
        if matches!(b.space, Space::Sbuf | Space::Psum) {
            return crate::tensore::check_bounds(name, b, layout);
        }
        let axis = if b.space == Space::Registers {
            Axis::new("reg").map_err(crate::error::layout("reg"))?
        } else {
            Axis::memory()
        };
        let (lo, hi) = extent_on(layout, &axis)?;
        if lo < 0 || hi >= b.elems as i64 {
            return Err(KernelError::Invalid(format!(
                "tensor {name}: its layout {layout} reaches {} elements {lo}..={hi}, outside buffer {} of {} elements",
                axis.name(),
                b.name,
                b.elems
            )));
        }
        Ok(())
    }

    /// A new variable.
    pub fn var(&mut self) -> Var {
        self.kernel.vars += 1;
        Var(self.kernel.vars - 1)
    }

    pub(crate) fn push(&mut self, s: Stmt) {
        if let Some(b) = self.open.last_mut() {
            b.push(s);
        }
    }

    /// `for v in 0..extent { body(v) }`.
    pub fn for_loop(
        &mut self,
        extent: u64,
        body: impl FnOnce(&mut Self, Var) -> Result<()>,
    ) -> Result<()> {
        let var = self.var();
        self.open.push(Vec::new());
        body(self, var)?;
        let b = self.open.pop().unwrap_or_default();
        self.push(Stmt::For {
            var,
            extent,
            body: b,
        });
        Ok(())
    }

    /// `if cond { body }`.
    pub fn if_then(
        &mut self,
        cond: Expr,
        body: impl FnOnce(&mut Self) -> Result<()>,
    ) -> Result<()> {
        self.open.push(Vec::new());
        body(self)?;
        let b = self.open.pop().unwrap_or_default();
        self.push(Stmt::If { cond, body: b });
        Ok(())
    }

    /// `let v = value`.
    pub fn let_(&mut self, value: Expr) -> Var {
        let var = self.var();
        self.push(Stmt::Let { var, value });
        var
    }

    /// Asks the GPU compiler to fit `n` CTAs per SM ([`Kernel::min_ctas_per_sm`]).
    pub fn min_ctas_per_sm(&mut self, n: u32) {
        self.kernel.min_ctas_per_sm = n;
    }

    /// A CTA barrier.
    pub fn barrier(&mut self) {
        self.push(Stmt::Barrier);
    }

    /// Calls `op` at `scope`; checks operand shapes and dtypes. Returns the call's index.
    pub fn call(&mut self, scope: Scope, op: Op) -> Result<usize> {
        self.call_forced(scope, op, None)
    }

    /// [`KernelBuilder::call`] with a forced variant.
    pub fn call_forced(&mut self, scope: Scope, op: Op, force: Option<&str>) -> Result<usize> {
        let id = self.calls;
        let label = format!("{} #{id}", op.kind());
        self.kernel.launch.check_scope(&scope)?;
        let dst = op.dst();
        for t in std::iter::once(dst).chain(op.sources()) {
            self.check_tensor(t).map_err(|e| match e {
                KernelError::Invalid(m) => KernelError::Invalid(format!("{label}: {m}")),
                other => other,
            })?;
        }
        if let Op::CopyAsync { bar, .. } = &op {
            self.check_mbar(*bar)?;
        }
        // At kernel scope the elements are spread over every CTA of the grid; a shared tensor is each
        // CTA's own, so each CTA's copy would hold only the elements its threads were given.
        if scope.level == crate::scope::Level::Kernel && self.kernel.launch.grid > 1 {
            if let Some(t) = std::iter::once(dst)
                .chain(op.sources())
                .find(|t| matches!(t.space, Space::Shared(_)))
            {
                return Err(KernelError::Invalid(format!(
                    "{label}: at kernel scope the work is spread over the {} CTAs of the grid, but shared tensor {} is each CTA's own (each would get only its threads' part): call it at cta scope",
                    self.kernel.launch.grid, t.name
                )));
            }
        }
        if let Op::Reduce { dims, src, .. } = &op {
            crate::reduce::check_shapes(&label, dst, src, dims)?;
        }
        if let Op::Gemm { c, a, b } = &op {
            crate::gemm::check_shapes(&label, c, a, b)?;
        }
        crate::bits::check_shapes(&label, &op)?;
        for s in op.sources().into_iter().filter(|_| {
            !matches!(
                op,
                Op::Gemm { .. } | Op::PackBits { .. } | Op::UnpackBits { .. }
            )
        }) {
            if s.shape != dst.shape && !matches!(op, Op::Reduce { .. }) {
                return Err(KernelError::Invalid(format!(
                    "{label}: source {} has shape {:?}, the destination {} has {:?}",
                    s.name, s.shape, dst.name, dst.shape
                )));
            }
            let same = !matches!(op, Op::Cast { .. });
            if same && s.dtype != dst.dtype {
                return Err(KernelError::Invalid(format!(
                    "{label}: source {} is {}, the destination {} is {} (use cast to convert)",
                    s.name, s.dtype, dst.name, dst.dtype
                )));
            }
        }
        check_in_place(&label, &op)?;
        self.calls += 1;
        self.push(Stmt::Call(Box::new(Call {
            id,
            op,
            scope,
            force: force.map(str::to_string),
        })));
        Ok(id)
    }

    /// `copy(dst, src)` at `scope`.
    pub fn copy(&mut self, scope: Scope, dst: &Tensor, src: &Tensor) -> Result<usize> {
        self.call(
            scope,
            Op::Copy {
                dst: dst.clone(),
                src: src.clone(),
            },
        )
    }

    /// `fill(dst, value)` at `scope`.
    pub fn fill(&mut self, scope: Scope, dst: &Tensor, value: Value) -> Result<usize> {
        self.call(
            scope,
            Op::Fill {
                dst: dst.clone(),
                value,
            },
        )
    }

    /// The finished kernel.
    pub fn build(mut self) -> Result<Kernel> {
        if self.open.len() != 1 {
            return Err(KernelError::Invalid("unclosed block".into()));
        }
        self.kernel.body = self.open.pop().unwrap_or_default();
        check_depths(&self.kernel.body)?;
        Ok(self.kernel)
    }
}

/// The most blocks (`for`, `if`, `window`) a kernel may nest: lowering and interpreting walk them
/// recursively.
pub const MAX_NESTING: usize = 64;

/// Refuses blocks nested deeper than [`MAX_NESTING`] and expressions deeper than
/// [`crate::MAX_EXPR_DEPTH`], walking the statements without recursion.
fn check_depths(body: &[Stmt]) -> Result<()> {
    let mut stack = vec![(body, 0usize)];
    while let Some((stmts, depth)) = stack.pop() {
        for s in stmts {
            let (exprs, inner): (Vec<&Expr>, Option<&Vec<Stmt>>) = match s {
                Stmt::For { body, .. } => (Vec::new(), Some(body)),
                Stmt::If { cond, body } => (vec![cond], Some(body)),
                Stmt::Window { base, body, .. } => (vec![base], Some(body)),
                Stmt::Let { value, .. } => (vec![value], None),
                Stmt::Sync(SyncStmt::Wait { parity, .. }) => (vec![parity], None),
                Stmt::Intrinsic(i) => (
                    i.args
                        .iter()
                        .map(|a| match a {
                            intrinsic::IntrinsicArg::Elem { index, .. } => index,
                            intrinsic::IntrinsicArg::Value(v) => v,
                        })
                        .collect(),
                    None,
                ),
                _ => (Vec::new(), None),
            };
            if let Some(e) = exprs.iter().find(|e| e.depth() > crate::expr::MAX_DEPTH) {
                return Err(KernelError::TooLarge(format!(
                    "an expression nested {} deep; kernels take at most {}",
                    e.depth(),
                    crate::expr::MAX_DEPTH
                )));
            }
            if let Some(b) = inner {
                if depth + 1 > MAX_NESTING {
                    return Err(KernelError::TooLarge(format!(
                        "blocks (for, if, window) nested more than {MAX_NESTING} deep"
                    )));
                }
                stack.push((b, depth + 1));
            }
        }
    }
    Ok(())
}

/// Whether `c` and `t` may share storage: the same buffer, and the ranges their layouts reach on each
/// of the buffer's storage axes (`reg` in registers — each thread has its own; `m` in memory; `P` and
/// `F` in SBUF and PSUM) intersect. Says where, if so.
pub(crate) fn overlap(c: &Tensor, t: &Tensor) -> Result<Option<String>> {
    if c.buffer != t.buffer {
        return Ok(None);
    }
    let axes: &[&str] = match c.space {
        Space::Registers => &["reg"],
        Space::Global | Space::Shared(_) => &["m"],
        Space::Sbuf | Space::Psum => &["P", "F"],
    };
    let mut spans = Vec::new();
    for name in axes {
        let axis = Axis::new(name).map_err(layout(*name))?;
        let (clo, chi) = extent_on(&c.layout, &axis)?;
        let (tlo, thi) = extent_on(&t.layout, &axis)?;
        if chi < tlo || thi < clo {
            return Ok(None);
        }
        spans.push(format!("{name} {clo}..={chi} and {tlo}..={thi}"));
    }
    Ok(Some(format!(
        "overlap in one buffer ({})",
        spans.join(", ")
    )))
}

/// An elementwise operator (`copy`, `unary`, `binary`, `cast`) in memory reads every source element
/// before it writes: the threads running it side by side cannot keep that when a destination element
/// is stored where another element's source is read. So a source sharing the destination's memory must
/// be exactly in place (the same element at the same place, the destination without replicas); one
/// that otherwise overlaps it is refused. (Register variants check their own in-place rule.)
fn check_in_place(label: &str, op: &Op) -> Result<()> {
    if !matches!(
        op,
        Op::Copy { .. } | Op::Unary { .. } | Op::Binary { .. } | Op::Cast { .. }
    ) {
        return Ok(());
    }
    let dst = op.dst();
    if dst.space == Space::Registers {
        return Ok(());
    }
    for s in op.sources() {
        if s.buffer != dst.buffer {
            continue;
        }
        let read = Layout::new(
            s.layout.shard().to_vec(),
            Vec::new(),
            s.layout.offset().clone(),
        )
        .map_err(layout(format!("tensor {}", s.name)))?;
        let in_place = dst.layout.replica().is_empty()
            && read
                .equivalent(&dst.layout)
                .map_err(layout(format!("tensor {}", s.name)))?;
        if in_place {
            continue;
        }
        if let Some(why) = overlap(dst, s)? {
            return Err(KernelError::Invalid(format!(
                "{label}: the destination {} and the source {} {why} without being the same elements in place: threads would overwrite source elements other threads still read (give the destination storage of its own)",
                dst.name, s.name
            )));
        }
    }
    Ok(())
}

/// The name of a space in messages.
pub fn space_name(s: Space) -> &'static str {
    match s {
        Space::Global => "global",
        Space::Shared(_) => "shared",
        Space::Registers => "registers",
        Space::Sbuf => "SBUF",
        Space::Psum => "PSUM",
    }
}

/// The lowest and highest coordinate a layout reaches on `axis` (shard, replicas and offset).
pub fn extent_on(l: &Layout, axis: &Axis) -> Result<(i64, i64)> {
    let (mut lo, mut hi) = (l.offset().get(axis), l.offset().get(axis));
    for it in l.shard().iter().chain(l.replica()) {
        if it.axis() != axis {
            continue;
        }
        let reach = i64::try_from(it.extent() - 1)
            .ok()
            .and_then(|e| e.checked_mul(it.stride()))
            .ok_or_else(|| overflow("bounding a layout"))?;
        if reach < 0 {
            lo = lo
                .checked_add(reach)
                .ok_or_else(|| overflow("bounding a layout"))?;
        } else {
            hi = hi
                .checked_add(reach)
                .ok_or_else(|| overflow("bounding a layout"))?;
        }
    }
    Ok((lo, hi))
}
