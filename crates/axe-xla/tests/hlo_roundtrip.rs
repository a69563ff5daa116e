#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! Modules in the style XLA prints: read and printed back byte for byte; printing is a fixpoint.

use axe_xla::hlo::parse_module;

const XLA_PRINTED: &str = include_str!("modules/xla_printed.hlo");

#[test]
fn xla_printed_module_round_trips_byte_for_byte() {
    let m = parse_module(XLA_PRINTED).unwrap();
    assert_eq!(m.to_string(), XLA_PRINTED);
    assert_eq!(m.computations.len(), 2);
    let entry = m.entry().unwrap();
    let add = entry.instructions.iter().find(|i| i.name == "%add.936").unwrap();
    assert_eq!(add.shape_text, "bf16[8,1,1280,16384]{3,2,0,1:T(8,128)(2,1)}");
    assert_eq!(add.opcode, "add");
    assert_eq!(add.operand_names(), vec!["exponential.183", "Arg_1"]);
    let gte = entry.instructions.last().unwrap();
    assert!(gte.is_root);
    assert_eq!(gte.attribute("backend_config"), Some(r#"{"a":1}"#));
    assert_eq!(gte.attribute("frontend_attributes"), Some(r#"{_xla_x="y, z"}"#));
}
