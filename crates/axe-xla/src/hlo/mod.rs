//! Whole HLO text modules: read (zero-copy, borrowing from the text), printed back the way XLA prints.
//!
//! ```text
//! module      := 'HloModule' NAME (',' ATTR '=' VALUE)* tables? computation*
//! computation := 'ENTRY'? NAME signature? '{' instruction* '}'
//! instruction := 'ROOT'? NAME '=' shape? OPCODE '(' operands? ')' (',' ATTR '=' VALUE)*
//! ```
//!
//! Names may carry a `%` prefix. Attribute values nest brackets and hold strings with escapes; unknown
//! attributes are kept verbatim. Shapes are kept as text and parsed on demand ([`Instruction::shape`]),
//! so reading a large dump is a single scan. Errors carry `line:col`, the line and a caret.

mod attrcheck;
mod attributes;
mod attrvalues;
mod callees;
pub mod calls;
mod header;
mod ident;
mod instruction;
mod literal;
mod mlir;
mod moves;
mod names;
mod opcheck;
mod opcodes;
mod operands;
pub mod partitioned;
pub mod per_device;
mod pieces;
#[cfg(test)]
mod pieces_tests;
mod print;
mod propagate;
mod propagate_dot;
#[cfg(test)]
mod propagate_dot_tests;
mod reader;
mod relayouts;
mod scan;
mod segment;
pub mod sharding;
pub mod stats;
mod stats_par;
mod stats_shapes;
mod stats_sums;
mod stats_values;
mod stats_walk;
pub mod synth;
mod validate;

pub use attributes::{Attribute, AttributeIter, Attributes};
pub use instruction::Instruction;
pub use reader::parse_module;

/// An HLO module: header, optional stack-frame tables, computations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Module<'a> {
    /// The module name (for a module without an `HloModule` line, `module_` and the entry's name, as XLA
    /// names it).
    pub name: std::borrow::Cow<'a, str>,
    /// Header attributes (`entry_computation_layout={...}`, ...), values verbatim.
    pub attributes: Attributes<'a>,
    /// Text between the header and the first computation (the stack-frame tables of newer dumps),
    /// verbatim, without surrounding blank lines.
    pub tables: &'a str,
    /// The computations in the order written.
    pub computations: Vec<Computation<'a>>,
}

/// A computation: `ENTRY %main (p: f32[2]) -> f32[2] { ... }`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Computation<'a> {
    /// Whether this is the entry computation.
    pub is_entry: bool,
    /// The name as written (with its `%`, if any).
    pub name: &'a str,
    /// The signature `(p: f32[2]) -> f32[2]`, verbatim; empty when absent.
    pub signature: &'a str,
    /// The instructions in the order written.
    pub instructions: Vec<Instruction<'a>>,
    /// Attributes after the closing brace (`}, execution_thread="host"`), values verbatim.
    pub attributes: Attributes<'a>,
}

impl Module<'_> {
    /// The entry computation (the one marked `ENTRY`, else the last).
    pub fn entry(&self) -> Option<&Computation<'_>> {
        self.computations
            .iter()
            .find(|c| c.is_entry)
            .or(self.computations.last())
    }

    /// The value of header attribute `name`, if present.
    pub fn attribute(&self, name: &str) -> Option<&str> {
        self.attributes.get(name)
    }

    /// Number of instructions in all computations.
    pub fn instruction_count(&self) -> usize {
        self.computations.iter().map(|c| c.instructions.len()).sum()
    }
}
