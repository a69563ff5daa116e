//! A plan in plain words ([`Plan::explain`], also its `Display`).

use std::fmt;

use super::*;

impl Plan {
    /// What the plan does, in plain words.
    pub fn explain(&self) -> String {
        let mut s = String::new();
        match self.zero_fill {
            ZeroFill::No => {}
            ZeroFill::Padding { slots } => {
                s.push_str(&format!("zero the destination's {slots} padding slot(s); "))
            }
            ZeroFill::Whole => s.push_str("zero the whole destination, then "),
        }
        // "for every index of dimensions [..] (and then of dimension a), " or nothing.
        let every = |then: Option<usize>| {
            let mut e = String::new();
            if !self.outer.is_empty() {
                e.push_str(&format!(
                    "for every index of dimensions [{}]",
                    join(&self.outer)
                ));
            }
            if let Some(a) = then {
                e.push_str(&if e.is_empty() {
                    format!("for every index of dimension {a}")
                } else {
                    format!(" and then of dimension {a}")
                });
            }
            if !e.is_empty() {
                e.push_str(", ");
            }
            e
        };
        match &self.mode {
            Mode::Runs {
                dim,
                runs,
                rows,
                across,
                straight,
            } => {
                let longest = runs.iter().map(|r| r.1).max().unwrap_or(0);
                s.push_str(&every(*across));
                s.push_str(&format!(
                    "copy {} contiguous run(s) along dimension {dim} (longest {} elements, {} bytes) as block copies",
                    runs.len(),
                    longest,
                    longest * self.element_bytes
                ));
                if let Some((r, k)) = rows {
                    s.push_str(&format!(", each for {k} indices of dimension {r} in turn"));
                }
                match straight {
                    Some(Straight::Source) => s.push_str(", reading the source straight through"),
                    Some(Straight::Destination) => {
                        s.push_str(", writing the destination straight through")
                    }
                    None => {}
                }
            }
            Mode::Blocked { dst_inner, src_inner, kernel } => {
                s.push_str(&every(None));
                s.push_str(&match kernel {
                    Block::Interleave { k } => format!(
                        "interleave {k} rows along dimension {src_inner} into one (consecutive indices of dimension {dst_inner} side by side)"
                    ),
                    Block::Deinterleave { k } => format!(
                        "split rows that hold {k} consecutive indices of dimension {src_inner} side by side into {k} rows along dimension {dst_inner}"
                    ),
                    Block::Transpose { tile: (ta, tb), carried: true, .. } => format!(
                        "transpose dimensions {dst_inner} (contiguous writes) and {src_inner} (contiguous reads) in {ta}×{tb} tiles of register blocks through a buffer, each destination row's partial last line carried to the next tile"
                    ),
                    Block::Transpose { tile: (ta, tb), staged: None, planes: 1, .. } => format!(
                        "transpose dimensions {dst_inner} (contiguous writes) and {src_inner} (contiguous reads) in {ta}×{tb} tiles of register blocks"
                    ),
                    Block::Transpose { staged: None, planes, .. } => format!(
                        "transpose dimensions {dst_inner} (contiguous writes) and {src_inner} (contiguous reads) a plane (one outer index) at a time, {planes} planes through one buffer, each destination row of them out in one go where they follow one another"
                    ),
                    Block::Transpose { tile: (ta, tb), staged: Some(span), .. } => format!(
                        "transpose dimensions {dst_inner} (contiguous writes) and {src_inner} (contiguous reads) in {ta}×{tb} tiles{}, staged through a buffer: register blocks of {} rows at a time in, whole {ta}-element rows out",
                        if *span > 1 { format!(" across {span} consecutive outer indices") } else { String::new() },
                        kernels::STAGED_GROUP
                    ),
                    Block::Elements { edge } => format!(
                        "walk dimensions {dst_inner} (contiguous writes) and {src_inner} (contiguous reads) in {edge}×{edge} blocks, element by element"
                    ),
                });
            }
            Mode::Bits => s.push_str("move each element bit by bit (sub-byte elements or a change of packing)"),
            Mode::PackBits { dst_inner, src_inner, k } => s.push_str(&format!(
                "{}pack {k} bytes along dimension {dst_inner} into {k} bits, all along dimension {src_inner} (ragged edges bit by bit)",
                every(None)
            )),
            Mode::UnpackBits { dst_inner, src_inner, k } => s.push_str(&format!(
                "{}unpack {k} bits along dimension {src_inner} into {k} bytes, all along dimension {dst_inner} (ragged edges bit by bit)",
                every(None)
            )),
            Mode::Empty => s.push_str("nothing to move"),
            Mode::Scalar => s.push_str("copy the one element"),
        }
        if self.copies > 1 {
            s.push_str(&format!(
                "; write each element {} times (destination replicas)",
                self.copies
            ));
        }
        s.push_str(&format!(
            "; {} kernels{}; {} thread(s)",
            self.isa.name(),
            if self.streaming {
                ", non-temporal stores"
            } else {
                ""
            },
            self.threads
        ));
        s
    }
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.explain())
    }
}
