//! What XLA's parser checks on a module's header and stack-frame tables: the header's attributes are
//! the ones XLA knows, with values of their kind; the tables, when present, are all four, in order
//! (`FileNames`, `FunctionNames`, `FileLocations`, `StackFrames`), each entry `N "name"` or
//! `N {key=value ...}` as its table holds.

use super::scan::module_error;
use super::Attributes;
use crate::error::Result;

/// Where `piece` (a slice of `text`) starts in `text`.
fn at(text: &str, piece: &str) -> usize {
    (piece.as_ptr() as usize)
        .saturating_sub(text.as_ptr() as usize)
        .min(text.len())
}

/// The kind of value a header attribute takes.
enum Kind {
    Int,
    Bool,
    BoolOrBoolList,
    Braced,
}

fn kind(name: &str) -> Option<Kind> {
    Some(match name {
        "replica_count" | "num_partitions" => Kind::Int,
        "is_scheduled" | "alias_passthrough_params" => Kind::Bool,
        "allow_spmd_sharding_propagation_to_parameters"
        | "allow_spmd_sharding_propagation_to_output" => Kind::BoolOrBoolList,
        "input_output_alias"
        | "buffer_donor"
        | "entry_computation_layout"
        | "frontend_attributes" => Kind::Braced,
        _ => return None,
    })
}

fn is_bool(v: &str) -> bool {
    matches!(v.trim(), "true" | "false")
}

/// Checks the header's attributes, read from `text`.
pub(crate) fn check_attributes(text: &str, attributes: &Attributes<'_>) -> Result<()> {
    for a in attributes {
        let v = a.value.trim();
        let ok = match kind(a.name) {
            None => {
                return Err(module_error(
                    text,
                    at(text, a.name),
                    format!("unknown module attribute {}", a.name),
                ))
            }
            Some(Kind::Int) => v.parse::<i64>().is_ok(),
            Some(Kind::Bool) => is_bool(v),
            Some(Kind::BoolOrBoolList) => {
                is_bool(v)
                    || v.strip_prefix('{')
                        .and_then(|s| s.strip_suffix('}'))
                        .is_some_and(|s| s.trim().is_empty() || s.split(',').all(is_bool))
            }
            Some(Kind::Braced) => v.starts_with('{') && v.ends_with('}'),
        };
        if !ok {
            return Err(module_error(
                text,
                at(text, a.value),
                format!("`{v}` is not a value of the module attribute {}", a.name),
            ));
        }
    }
    Ok(())
}

/// The tables' headings, in the order XLA writes and reads them.
pub(crate) const TABLE_HEADINGS: [&str; 4] =
    ["FileNames", "FunctionNames", "FileLocations", "StackFrames"];

/// Checks the stack-frame tables `tables` (a slice of `text`, empty when absent); `after` is where the
/// text goes on after them.
pub(crate) fn check_tables(text: &str, tables: &str, after: usize) -> Result<()> {
    if tables.is_empty() {
        return Ok(());
    }
    let mut next = 0usize;
    for line in tables.lines() {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if TABLE_HEADINGS.contains(&t) {
            if TABLE_HEADINGS.get(next) != Some(&t) {
                let want = TABLE_HEADINGS.get(next).copied().unwrap_or("a computation");
                return Err(module_error(
                    text,
                    at(text, t),
                    format!("expected {want}, found the table {t}"),
                ));
            }
            next += 1;
            continue;
        }
        // An entry: its number, then a string (names) or a braced list (locations, frames).
        let digits = t.bytes().take_while(u8::is_ascii_digit).count();
        let rest = t[digits..].trim_start();
        let names = next <= 2;
        let ok = digits > 0
            && if names {
                rest.len() >= 2 && rest.starts_with('"') && rest.ends_with('"')
            } else {
                rest.starts_with('{') && rest.ends_with('}')
            };
        if !ok {
            return Err(module_error(
                text,
                at(text, t),
                format!(
                    "an entry of {} is `N {}`",
                    TABLE_HEADINGS[next.saturating_sub(1).min(3)],
                    if names { "\"name\"" } else { "{key=value ...}" }
                ),
            ));
        }
    }
    if next < TABLE_HEADINGS.len() {
        return Err(module_error(
            text,
            after.min(text.len()),
            format!("expected the table {}", TABLE_HEADINGS[next]),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use crate::hlo::parse_module;

    const BODY: &str = "ENTRY e {\n  ROOT p = f32[4]{0} parameter(0)\n}\n";

    fn error(head: &str) -> String {
        parse_module(&format!("{head}\n\n{BODY}"))
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn header_attributes_are_xla_s() {
        assert!(error("HloModule m, num_partitions=two").contains("num_partitions"));
        assert!(error("HloModule m, is_scheduled=maybe").contains("is_scheduled"));
        assert!(error("HloModule m, colour=blue").contains("unknown module attribute colour"));
        assert!(parse_module(&format!(
            "HloModule m, is_scheduled=true, num_partitions=8, allow_spmd_sharding_propagation_to_output={{true,false}}\n\n{BODY}"
        ))
        .is_ok());
    }

    #[test]
    fn tables_are_all_four_in_order() {
        let files = "FileNames\n1 \"a.py\"\n";
        let funcs = "FunctionNames\n1 \"f\"\n";
        let locs = "FileLocations\n1 {file_name_id=1 function_name_id=1 line=1}\n";
        let frames = "StackFrames\n1 {file_location_id=1 parent_frame_id=1}\n";
        let all = format!("HloModule m\n\n{files}\n{funcs}\n{locs}\n{frames}");
        assert!(parse_module(&format!("{all}\n\n{BODY}")).is_ok());
        let e = error(&format!("HloModule m\n\n{files}"));
        assert!(e.contains("expected the table FunctionNames"), "{e}");
        let e = error(&format!(
            "HloModule m\n\n{funcs}\n{files}\n{locs}\n{frames}"
        ));
        assert!(e.contains("expected FileNames"), "{e}");
        let e = error(&format!(
            "HloModule m\n\nFileNames\n1 a.py\n\n{funcs}\n{locs}\n{frames}"
        ));
        assert!(e.contains("an entry of FileNames"), "{e}");
    }
}
