//! Operand lists read in one pass: the instruction names among an instruction's operands, without
//! allocating, for the common list of plain names.

use super::Instruction;

/// Byte classes for reading operand lists (see [`operand_names`]).
const NAME: u8 = 0; // a byte of a name: ASCII letters, digits, '_', '.', '-'
const BLANK: u8 = 1; // white space as `char::is_whitespace` has it
const COMMA: u8 = 2;
const OTHER: u8 = 3; // any other ASCII byte ('%' among them): no part of a name
const SPECIAL: u8 = 4; // brackets, quotes and non-ASCII bytes: the general reader's business

const CLASS: [u8; 256] = {
    let mut t = [SPECIAL; 256];
    let mut b = 0;
    while b < 128 {
        t[b] = match b as u8 {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'.' | b'-' => NAME,
            b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b' ' => BLANK,
            b',' => COMMA,
            b'(' | b')' | b'[' | b']' | b'{' | b'}' | b'"' => SPECIAL,
            _ => OTHER,
        };
        b += 1;
    }
    t
};

/// Puts into `out` the instruction names among `inst`'s operands, as [`Instruction::operand_names`] gives
/// them: of each piece between commas, its last blank-separated word without one leading '%', when that is
/// a name. A list without brackets, strings or non-ASCII text (the common case) is read here in one pass;
/// any other goes through the general reader.
pub(crate) fn operand_names<'a>(inst: &Instruction<'a>, out: &mut Vec<&'a str>) {
    out.clear();
    let text = inst.operands_text();
    let b = text.as_bytes();
    let n = b.len();
    // The class of byte `i`; the end of the text closes the last piece, as a comma would.
    let class = |i: usize| {
        if i < n {
            CLASS[usize::from(b[i])]
        } else {
            COMMA
        }
    };
    // The last word of the piece at hand, when it is a name.
    let mut last: Option<(usize, usize)> = None;
    let mut i = 0;
    while i < n {
        match CLASS[usize::from(b[i])] {
            BLANK => i += 1,
            COMMA => {
                if let Some((start, end)) = last.take() {
                    // ASCII bytes: `start..end` lies on char boundaries.
                    out.push(&text[start..end]);
                }
                i += 1;
            }
            SPECIAL => return general(inst, out),
            _ => {
                // A word: an optional '%', then the bytes of a name.
                let start = if b[i] == b'%' { i + 1 } else { i };
                let mut end = start;
                while end < n && CLASS[usize::from(b[end])] == NAME {
                    end += 1;
                }
                let name = end > start && (b[start].is_ascii_alphabetic() || b[start] == b'_');
                match class(end) {
                    BLANK | COMMA => last = name.then_some((start, end)),
                    SPECIAL => return general(inst, out),
                    _ => {
                        // Some other byte: the word is no name; it ends at a blank or comma.
                        last = None;
                        while matches!(class(end), NAME | OTHER) {
                            end += 1;
                        }
                    }
                }
                i = end;
            }
        }
    }
    if let Some((start, end)) = last {
        out.push(&text[start..end]);
    }
}

/// [`operand_names`] through the general reader.
fn general<'a>(inst: &Instruction<'a>, out: &mut Vec<&'a str>) {
    out.clear();
    out.extend(inst.operand_names());
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::hlo::instruction::Parts;
    use crate::hlo::Attributes;
    use proptest::prelude::*;

    /// The operand names of `%x = add(TEXT)`, read by the fast reader and by the general one.
    fn both(text: &str) -> (Vec<String>, Vec<String>) {
        let line = format!("%x = add({text})");
        let inst = Instruction::new(
            &line,
            Parts {
                is_root: false,
                name: &line[..2],
                shape: "",
                opcode: &line[5..8],
                operands: &line[9..9 + text.len()],
                attributes: Attributes::with_flags(&line[line.len()..], Attributes::CANONICAL),
            },
        )
        .unwrap();
        let mut fast = Vec::new();
        operand_names(&inst, &mut fast);
        let owned = |v: Vec<&str>| v.into_iter().map(String::from).collect();
        (owned(fast), owned(inst.operand_names().collect()))
    }

    #[test]
    fn operand_lists_read_as_the_general_reader_reads_them() {
        for text in [
            "",
            "%a, %b",
            " %a ,b ",
            "%a,,%b,",
            "f32[2]{0} %a, %b",
            "s32[] %a",
            "%%a, %a%b, a:b, 9a, %_a.1-2, %",
            "a b, c\td\n",
            "a\u{b}b, c\u{c}",
            "a\u{a0}b, %c",
            "\"s, t\", %u",
            "(%a, %b), %c",
            "%a, {1, 2}",
        ] {
            let (fast, general) = both(text);
            assert_eq!(fast, general, "{text:?}");
        }
    }

    proptest! {
        #[test]
        fn operand_lists_of_any_text(text in "[ %,a_.9\\-:/\t\n\u{b}\u{c}\u{a0}\u{2003}\"(){}\\[\\]\\\\b]{0,24}") {
            let (fast, general) = both(&text);
            prop_assert_eq!(fast, general);
        }
    }
}
