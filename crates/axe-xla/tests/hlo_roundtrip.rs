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
    let add = entry
        .instructions
        .iter()
        .find(|i| i.name() == "%add.936")
        .unwrap();
    assert_eq!(
        add.shape_text(),
        "bf16[8,1,1280,16384]{3,2,0,1:T(8,128)(2,1)}"
    );
    assert_eq!(add.opcode(), "add");
    assert_eq!(
        add.operand_names().collect::<Vec<_>>(),
        vec!["exponential.183", "Arg_1"]
    );
    let gte = entry.instructions.last().unwrap();
    assert!(gte.is_root());
    assert_eq!(gte.attribute("backend_config"), Some(r#"{"a":1}"#));
    assert_eq!(
        gte.attribute("frontend_attributes"),
        Some(r#"{_xla_x="y, z"}"#)
    );
}

/// A synthetic module (hlo::synth) as XLA printed it after parsing it.
#[test]
fn xla_printed_synthetic_module_round_trips() {
    let text = include_str!("modules/synth_xla_printed.hlo");
    let m = parse_module(text).unwrap();
    assert_eq!(m.to_string(), text);
    assert!(m.instruction_count() > 50);
}

#[test]
fn seed_instructions_and_fixpoint() {
    let text = "HloModule m\n\n%all-reduce-scatter.3 (p: bf16[32,32,8192]) -> bf16[32,32,4096] {\n  \
                %p = bf16[32,32,8192]{2,1,0} parameter(0)\n  \
                ROOT %s = bf16[32,32,4096]{2,1,0} slice(%p), slice={[0:32], [0:32], [0:4096]}\n}\n\n\
                ENTRY %main {\n  \
                %exponential.183 = bf16[8,1,1280,16384]{3,2,0,1:T(8,128)(2,1)} parameter(0)\n  \
                %broadcast.3115 = bf16[8,1,1280,16384]{3,2,0,1:T(8,128)(2,1)} parameter(1)\n  \
                %fusion.32 = bf16[32,32,8192]{2,1,0:T(8,128)(2,1)S(1)} parameter(2)\n  \
                %add.936 = bf16[8,1,1280,16384]{3,2,0,1:T(8,128)(2,1)} add(exponential.183, broadcast.3115)\n  \
                %fusion.3 = bf16[32,32,4096]{2,1,0:T(8,128)(2,1)S(1)} fusion(bf16[32,32,8192]{2,1,0:T(8,128)(2,1)S(1)} %fusion.32), kind=kCustom, calls=%all-reduce-scatter.3\n}\n";
    let m = parse_module(text).unwrap();
    let insts = &m.computations[1].instructions[3..];
    assert_eq!(
        insts[0].operand_names().collect::<Vec<_>>(),
        vec!["exponential.183", "broadcast.3115"]
    );
    assert_eq!(
        insts[1].operand_names().collect::<Vec<_>>(),
        vec!["fusion.32"]
    );
    assert_eq!(insts[1].attribute("calls"), Some("%all-reduce-scatter.3"));
    let s = insts[1].shape().unwrap().unwrap();
    assert_eq!(s.as_array().unwrap().layout.memory_space, 1);
    let printed = m.to_string();
    assert_eq!(
        parse_module(&printed).unwrap().to_string(),
        printed,
        "printing is a fixpoint"
    );
}

#[test]
fn comments_strings_nesting_and_tables() {
    let text = r#"HloModule m, entry_computation_layout={(f32[2]{0})->f32[2]{0}}

FileNames
1 "a.py"

FunctionNames
1 "f"

FileLocations
1 {file_name_id=1 function_name_id=1 line=3 end_line=3 column=1 end_column=2}

StackFrames
1 {file_location_id=1 parent_frame_id=0}

ENTRY %e /* entry */ (p: f32[2]) -> f32[2] {
  %p = f32[2]{0} parameter(0) // the input
  %c = f32[2]{0} constant({1, 2}), backend_config="{\"x\": \"a,b}\"}"
  ROOT %r = f32[2]{0} custom-call(%p, %c), custom_call_target="foo", slice={[0:1], [0:5]}, frontend_attributes={k="v, w"}
}
"#;
    let m = parse_module(text).unwrap();
    assert!(
        m.tables.starts_with("FileNames") && m.tables.ends_with("parent_frame_id=0}"),
        "{:?}",
        m.tables
    );
    let r = &m.computations[0].instructions[2];
    assert_eq!(r.attribute("custom_call_target"), Some("\"foo\""));
    assert_eq!(r.attribute("slice"), Some("{[0:1], [0:5]}"));
    let c = &m.computations[0].instructions[1];
    assert_eq!(c.operands_text(), "{1, 2}");
    assert_eq!(
        c.attribute("backend_config"),
        Some(r#""{\"x\": \"a,b}\"}""#)
    );
    let printed = m.to_string();
    assert_eq!(parse_module(&printed).unwrap().to_string(), printed);
}

#[test]
fn errors_have_line_column_and_caret() {
    let text = "HloModule m

ENTRY %e {
  %p = f32[2]{0} parameter(0)
  %q = f32[2]{0} add(%p, %p
}
";
    let e = parse_module(text).unwrap_err().to_string();
    assert!(e.starts_with("5:"), "{e}");
    assert!(
        e.contains("  %q = f32[2]{0} add(%p, %p") && e.contains('^'),
        "{e}"
    );
    let e = parse_module(
        "HloModule m

ENTRY %e {
  %p = f32[2]{0} parameter(0) junk
}
",
    )
    .unwrap_err()
    .to_string();
    // As in XLA, `junk` opens the next instruction, whose '=' is missing.
    assert!(e.starts_with("5:1:") && e.contains("expected '='"), "{e}");
    assert!(parse_module("nonsense").is_err());
    assert!(parse_module(
        "HloModule m
ENTRY %e {
"
    )
    .is_err());
}

/// Printing normalizes the layout of any module XLA accepts, once: the printed text reads back to the
/// same text (every accepted module of the corpus, continued lines and comments included).
#[test]
fn printing_any_accepted_module_is_a_fixpoint_and_streams_the_same() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hlo_corpus");
    let mut n = 0;
    for group in ["jax", "styles"] {
        for e in std::fs::read_dir(dir.join(group)).unwrap() {
            let path = e.unwrap().path();
            if path.extension().is_none_or(|x| x != "hlo") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let module = parse_module(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let once = module.to_string();
            // Streaming the module out writes what printing it gives.
            let mut streamed = Vec::new();
            module.write_to(&mut streamed).unwrap();
            assert_eq!(
                String::from_utf8(streamed).unwrap(),
                once,
                "{}",
                path.display()
            );
            let twice = parse_module(&once)
                .unwrap_or_else(|e| panic!("{} printed: {e}", path.display()))
                .to_string();
            assert_eq!(once, twice, "{}", path.display());
            n += 1;
        }
    }
    assert!(n > 50, "{n} modules");
}

/// A shape read again is the same text at its own place; a shape that merely starts like the last one
/// read is scanned whole.
#[test]
fn repeated_shapes_are_read_at_their_place() {
    let text = "HloModule m\n\nENTRY %e (p: f32[2]) -> f32[2] {\n  %p = f32[2] parameter(0)\n  \
                %a = f32[2]{0} negate(%p)\n  %b = f32[2]{0:T(2)} negate(%a)\n  %c = f32[2]{0} negate(%b)\n  \
                %t = (f32[2], f32[2]) tuple(%a, %c)\n  %u = (f32[2], f32[2]) tuple(%a, %c)\n  \
                ROOT %d = f32[2] negate(%c)\n}\n\n";
    let m = parse_module(text).unwrap();
    let shapes: Vec<&str> = m.computations[0]
        .instructions
        .iter()
        .map(|i| i.shape_text())
        .collect();
    assert_eq!(
        shapes,
        [
            "f32[2]",
            "f32[2]{0}",
            "f32[2]{0:T(2)}",
            "f32[2]{0}",
            "(f32[2], f32[2])",
            "(f32[2], f32[2])",
            "f32[2]"
        ]
    );
    for i in &m.computations[0].instructions {
        let at = i.shape_text().as_ptr() as usize - text.as_ptr() as usize;
        assert_eq!(&text[at..at + i.shape_text().len()], i.shape_text());
        assert!(
            text[..at].ends_with(" = "),
            "{} is read at its own place",
            i.name()
        );
    }
}

/// Modules written as XLA's printer writes them with stack-frame tables (`HloModule::Print`: the header,
/// a blank line, the four tables each after a blank line, two blank lines, then each computation followed
/// by a blank line) print back byte for byte, empty tables and escaped names included.
#[test]
fn stack_frame_tables_print_back_byte_for_byte() {
    let add = "%add (x: f32[], y: f32[]) -> f32[] {\n  %x = f32[] parameter(0)\n  %y = f32[] parameter(1)\n  ROOT %s = f32[] add(%x, %y)\n}\n\n";
    let entry = "ENTRY %main (p: f32[4]) -> f32[] {\n  %p = f32[4]{0} parameter(0), metadata={op_name=\"p\" stack_frame_id=2}\n  %z = f32[] constant(0)\n  ROOT %r = f32[] reduce(%p, %z), dimensions={0}, to_apply=%add, metadata={op_name=\"jit(f)/reduce_sum\" stack_frame_id=1}\n}\n\n";
    let tables = [
        // Every table filled, two frames.
        "FileNames\n1 \"a.py\"\n2 \"dir/b \\\"c\\\".py\"\n\nFunctionNames\n1 \"f\"\n2 \"<lambda>\"\n\nFileLocations\n1 {file_name_id=1 function_name_id=1 line=3 end_line=3 column=1 end_column=9}\n2 {file_name_id=2 function_name_id=2 line=10 end_line=12 column=4 end_column=2}\n\nStackFrames\n1 {file_location_id=1 parent_frame_id=0}\n2 {file_location_id=2 parent_frame_id=1}\n",
        // File names only: XLA still prints the other three headings.
        "FileNames\n1 \"a.py\"\n\nFunctionNames\n\nFileLocations\n\nStackFrames\n",
    ];
    for t in tables {
        let text = format!(
            "HloModule m, entry_computation_layout={{(f32[4]{{0}})->f32[]}}\n\n{t}\n\n{add}{entry}"
        );
        let m = parse_module(&text).unwrap();
        assert_eq!(m.to_string(), text);
        let mut streamed = Vec::new();
        m.write_to(&mut streamed).unwrap();
        assert_eq!(String::from_utf8(streamed).unwrap(), text);
    }
}
