//! What XLA's parser refuses in the attributes every instruction may carry, and attributes an opcode does
//! not take: each an error at its line and column with a caret, and the same modules written right read.
#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]

use axe_xla::hlo::parse_module;

/// A module whose entry holds a parameter `p`, then `body`.
fn module(body: &str) -> String {
    format!("HloModule m\n\nENTRY e {{\n  p = f32[4]{{0}} parameter(0)\n{body}\n}}\n")
}

/// The error for `body`, which must be at line 5 (the body's first line), where `at` (a piece of the body)
/// last starts.
fn refused(body: &str, at: &str, says: &str) {
    let col = body.rfind(at).unwrap() + 1;
    let e = parse_module(&module(body)).unwrap_err().to_string();
    assert!(e.starts_with(&format!("5:{col}:")), "{body}: {e}");
    assert!(e.contains(says), "{body}: {e}");
    assert!(e.contains('^'), "{body}: {e}");
}

fn read(body: &str) {
    if let Err(e) = parse_module(&module(body)) {
        panic!("{body}: {e}");
    }
}

#[test]
fn metadata_keys_and_value_kinds() {
    read(
        r#"  ROOT c = f32[4]{0} copy(p), metadata={op_type="Copy" op_name="jit(f)/copy" source_file="f.py" source_line=7 source_end_line=8 source_column=1 source_end_column=9 stack_frame_id=2 deduplicated_name="d" scheduling_name="s" preserve_layout=true profile_type={1}}"#,
    );
    read("  ROOT c = f32[4]{0} copy(p), metadata={}");
    refused(
        "  ROOT c = f32[4]{0} copy(p), metadata={op_name=3}",
        "3}",
        "op_name takes a string",
    );
    refused(
        r#"  ROOT c = f32[4]{0} copy(p), metadata={op_name="a" layer="x"}"#,
        "layer",
        "metadata has no key layer",
    );
    refused(
        "  ROOT c = f32[4]{0} copy(p), metadata={source_line=2147483648}",
        "source_line",
        "out of range for int32",
    );
    refused(
        r#"  ROOT c = f32[4]{0} copy(p), metadata={op_name="a" op_name="b"}"#,
        "op_name=\"b\"",
        "given twice",
    );
}

#[test]
fn frontend_attributes_statistics_and_control_predecessors() {
    read(
        r#"  ROOT c = f32[4]{0} convert(p), frontend_attributes={_xla_compute_type="host", k="v"}"#,
    );
    refused(
        "  ROOT c = f32[4]{0} convert(p), frontend_attributes=3",
        "3",
        "frontend_attributes is",
    );
    refused(
        "  ROOT c = f32[4]{0} convert(p), frontend_attributes={k=v}",
        "v}",
        "value is a string",
    );
    read("  ROOT c = f32[4]{0} copy(p), statistics={visualizing_index=1,stat-0=0.5}");
    refused(
        "  ROOT c = f32[4]{0} copy(p), statistics={visualizing_index=first}",
        "first",
        "is an integer",
    );
    read("  q = f32[4]{0} negate(p)\n  ROOT c = f32[4]{0} copy(p), control-predecessors={q}");
    // The predecessor must be defined before.
    let e = parse_module(&module(
        "  c = f32[4]{0} copy(p), control-predecessors={q}\n  ROOT q = f32[4]{0} negate(p)",
    ))
    .unwrap_err()
    .to_string();
    assert!(
        e.starts_with("5:48:") && e.contains("q is not an instruction defined before"),
        "{e}"
    );
    refused(
        "  ROOT c = f32[4]{0} copy(p), control-predecessors={nope}",
        "nope",
        "nope is not an instruction",
    );
}

#[test]
fn attributes_an_opcode_does_not_take() {
    refused(
        "  ROOT n = f32[4]{0} negate(p), colour=blue",
        "colour",
        "negate takes no attribute colour",
    );
    refused(
        "  ROOT a = f32[4]{0} add(p, p), dimensions={0}",
        "dimensions",
        "add takes no attribute dimensions",
    );
    refused(
        "  ROOT t = f32[4]{0} tanh(p), sharding={replicated}, to_apply=f",
        "to_apply",
        "besides the common ones it takes result_accuracy",
    );
    // The attributes every instruction may carry, and the ones an opcode takes, are read.
    read(
        r#"  ROOT n = f32[4]{0} negate(p), sharding={replicated}, metadata={op_name="n"}, backend_config="x", frontend_attributes={a="b"}, statistics={}"#,
    );
    read("  ROOT e = f32[4]{0} exponential(p), result_accuracy={mode=highest}");
    // Opcodes whose whole list is not checked keep theirs.
    read("  ROOT b = f32[4,2]{1,0} broadcast(p), dimensions={0}");
}

#[test]
fn unary_opcodes_by_their_xla_names_take_one_operand() {
    for op in ["cosine", "count-leading-zeros", "negate"] {
        refused(
            &format!("  ROOT c = f32[4]{{0}} {op}(p, p)"),
            op,
            &format!("{op} takes 1 operand, found 2"),
        );
    }
    read("  ROOT c = f32[4]{0} cosine(p)");
}

/// A layout whose `}` is left out is reported where the layout stops being one (the opcode), not where
/// the computation's `}` would have closed it; layouts that hold every kind of attribute, whitespace,
/// line breaks (as XLA allows) and comments still read.
#[test]
fn unclosed_layouts() {
    refused(
        "  ROOT c = f32[4]{0 negate(p)",
        "negate",
        "expected '}' closing the layout opened at 5:18, found \"negate\"",
    );
    refused(
        "  ROOT c = f32[4]{0:T(4) copy(p)",
        "copy",
        "closing the layout",
    );
    refused("  ROOT c = f32[4]{0 = copy(p)", "=", "found '='");
    read("  ROOT c = f32[4]{0:T(2)L(2)E(8)S(1)SC(0:1)M(4)} copy(p)");
    read("  ROOT c = f32[4]{ 0 : T(4) /* tiles */ } copy(p)");
    // A physical shape holds braces of its own: scanned whole, then refused by validation (P is for
    // sparse arrays).
    refused(
        "  ROOT c = f32[4]{0:T(4)P(f32[8]{0:T(4)})} copy(p)",
        "f32[4]",
        "only for sparse arrays",
    );
    read("  ROOT c = f32[4]{0\n  } copy(p)");
}

#[test]
fn a_module_has_at_least_one_computation() {
    // XLA's parser: "expects name" where the first computation should start.
    for (text, at) in [
        ("", "1:1:"),
        ("HloModule m\n", "2:1:"),
        ("HloModule m, is_scheduled=true\n\n// nothing\n", "4:1:"),
    ] {
        let e = parse_module(text).unwrap_err().to_string();
        assert!(e.starts_with(at), "{text:?}: {e}");
        assert!(e.contains("a module has at least one"), "{text:?}: {e}");
    }
    let m = parse_module("HloModule m\n\nc {\n  ROOT p = f32[] parameter(0)\n}\n").unwrap();
    assert_eq!(m.computations.len(), 1);
}

/// A computation's parameters are numbered 0 to N - 1, whatever their order (XLA's parser stops the
/// process on a gap: `Check failed: param_no >= 0 && param_no < parameter_count`).
#[test]
fn parameter_numbers_leave_no_gap() {
    refused(
        "  q = f32[4]{0} parameter(2)\n  ROOT c = f32[4]{0} add(p, q)",
        "2)",
        "parameter number 2 of computation e, which has 2 parameter(s)",
    );
    read("  q = f32[4]{0} parameter(1)\n  ROOT c = f32[4]{0} add(p, q)");
    // Out of order is fine; the gap is reported at the parameter past the count, also when the module is
    // read in parallel pieces (a computation of many instructions, its parameters far apart).
    let mut body = String::from("  q = f32[4]{0} parameter(3)\n  r = f32[4]{0} parameter(1)\n");
    for i in 0..40_000 {
        body.push_str(&format!("  n{i} = f32[4]{{0}} negate(p)\n"));
    }
    body.push_str("  s = f32[4]{0} parameter(2)\n  ROOT c = f32[4]{0} add(q, s)");
    read(&body);
    let gap = body.replace("parameter(2)", "parameter(4)");
    let e = parse_module(&module(&gap)).unwrap_err().to_string();
    assert!(
        e.contains("parameter number 4 of computation e, which has 4"),
        "{e}"
    );
}

/// A control character in the text (a NUL, an escape) is shown as its picture in the message and the line,
/// the caret still under it.
#[test]
fn control_characters_are_shown_as_pictures() {
    let e = parse_module(&module("  ROOT c = f32[4]{0} negate(\0p)"))
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("5:29: ␀p is not an instruction"), "{e}");
    assert!(e.contains("\n    ROOT c = f32[4]{0} negate(␀p)\n"), "{e}");
    assert!(e.ends_with(&format!("\n  {}^", " ".repeat(28))), "{e}");
    assert!(!e.contains('\0'), "{e}");
}

/// The error for the whole module `text`: `line:col`, then it must say `says`.
fn refused_module(text: &str, line_col: &str, says: &str) {
    let e = parse_module(text).unwrap_err().to_string();
    assert!(e.starts_with(&format!("{line_col}: ")), "{text:?}: {e}");
    assert!(e.contains(says), "{text:?}: {e}");
    assert!(e.contains('^'), "{text:?}: {e}");
}

/// Names are identifiers as XLA's lexer reads them (`%`? a letter or `_`, then letters, digits, `_ . -`),
/// never a keyword or an element type without the `%` (checked against jaxlib 0.10.2).
#[test]
fn names_are_identifiers() {
    for name in [
        "1p", "-p", ".p", "$p", "%1p", "true", "ROOT", "maximal", "f32", "%f32",
    ] {
        refused(
            &format!("  ROOT {name} = f32[4]{{0}} negate(p)"),
            &format!("{name} ="),
            "expected an instruction name",
        );
    }
    refused(
        "  ROOT p$ = f32[4]{0} negate(p)",
        "$",
        "'$' cannot be part of",
    );
    refused(
        "  ROOT p:q = f32[4]{0} negate(p)",
        ":q",
        "expected '=' after the instruction name",
    );
    for name in ["p.1", "p-1", "_p", "%ROOT", "%true", "constant"] {
        read(&format!("  ROOT {name} = f32[4]{{0}} negate(p)"));
    }
    let with = |module: &str, comp: &str| {
        format!("HloModule {module}\n\nENTRY {comp} {{\n  ROOT p = f32[4]{{0}} parameter(0)\n}}\n")
    };
    refused_module(&with("\"m\"", "e"), "1:11", "expected a module name");
    refused_module(
        &with("m\0", "e"),
        "1:12",
        "'\\0' cannot be part of a module name",
    );
    refused_module(&with("true", "e"), "1:11", "the keyword \"true\"");
    refused_module(&with("m", "1e"), "3:7", "expected a computation name");
    refused_module(&with("m", "f32"), "3:7", "the element type \"f32\"");
    // After `%`, a keyword or element type names a module or computation.
    assert!(parse_module(&with("%true", "%f32")).is_ok());
}

/// An attribute given twice is refused at the second, in an instruction, after a computation and in the
/// header (XLA: "attribute dimensions already exists"); so is a fusion without a known `kind=`.
#[test]
fn attributes_once_and_fusion_kinds() {
    refused(
        "  ROOT r = f32[4]{0} transpose(p), dimensions={0}, dimensions={0}",
        "dimensions",
        "attribute dimensions already exists",
    );
    refused(
        "  ROOT r = f32[4]{0} copy(p), metadata={}, sharding={replicated}, metadata={}",
        "metadata",
        "attribute metadata already exists",
    );
    // Past the few names compared in place (jaxlib reads the ten, refuses the eleventh).
    let many = "custom-call(p), custom_call_target=\"t\", backend_config=\"\", \
        api_version=API_VERSION_ORIGINAL, metadata={}, sharding={replicated}, frontend_attributes={}, \
        statistics={}, custom_call_has_side_effect=true, schedule=SCHEDULE_NONE, operand_precision={}";
    read(&format!("  ROOT r = f32[4]{{0}} {many}"));
    refused(
        &format!("  ROOT r = f32[4]{{0}} {many}, statistics={{}}"),
        "statistics",
        "attribute statistics already exists",
    );
    refused_module(
        "HloModule m, is_scheduled=true, is_scheduled=true\n\nENTRY e {\n  ROOT p = f32[4]{0} parameter(0)\n}\n",
        "1:33",
        "attribute is_scheduled already exists",
    );
    refused_module(
        "HloModule m\n\nENTRY e {\n  ROOT p = f32[4]{0} parameter(0)\n}, execution_thread=\"main\", execution_thread=\"main\"\n",
        "5:29",
        "attribute execution_thread already exists",
    );
    let fusion = |attrs: &str| {
        format!("HloModule m\n\nf {{\n  a = f32[4]{{0}} parameter(0)\n  ROOT n = f32[4]{{0}} negate(a)\n}}\n\nENTRY e {{\n  p = f32[4]{{0}} parameter(0)\n  ROOT r = f32[4]{{0}} fusion(p){attrs}\n}}\n")
    };
    for kind in ["kLoop", "kInput", "kOutput", "kCustom"] {
        assert!(parse_module(&fusion(&format!(", kind={kind}, calls=f"))).is_ok());
    }
    refused_module(
        &fusion(", kind=kBogus, calls=f"),
        "10:38",
        "unknown fusion kind `kBogus`",
    );
    // At the first token after the operands, where XLA's parser (jaxlib 0.10.2) reads the attributes:
    // the comma, else what follows the instruction; comments and line breaks skipped.
    refused_module(
        &fusion(", calls=f"),
        "10:31",
        "fusion needs the attribute kind=",
    );
    refused_module(
        &fusion("  /* c */ // d\n  , calls=f, metadata={}"),
        "11:3",
        "fusion needs the attribute kind=",
    );
    // Both missing: XLA names calls first, and points at the `}` after the instruction.
    refused_module(&fusion(""), "11:1", "fusion needs the attribute calls=");
    refused_module(
        &fusion(", kind=kLoop"),
        "10:31",
        "fusion needs the attribute calls=",
    );
}

/// An attribute an opcode needs, missing: XLA's parser (jaxlib 0.10.2) reports it where it reads the
/// attributes (the first token after the operands), naming the first missing in its own order.
#[test]
fn missing_attributes_are_reported_after_the_operands() {
    // (body after `p`, line:col, message); the body's first line is line 5.
    let cases = [
        (
            "  ROOT c = pred[4]{0} compare(p, p)",
            "6:1",
            "compare needs the attribute direction=",
        ),
        (
            "  ROOT t = f32[4]{0} transpose(p), metadata={op_name=\"x\"}",
            "5:34",
            "transpose needs the attribute dimensions=",
        ),
        (
            "  ROOT w = f32[4]{0} while(p)",
            "6:1",
            "while needs the attribute body=",
        ),
        (
            "  c = f32[4]{0} custom-call(p)   /* x */\n  ROOT n = f32[4]{0} negate(c)",
            "6:3",
            "custom-call needs the attribute custom_call_target=",
        ),
        (
            "  ROOT c = f32[4]{0} call( p ) , metadata={}",
            "5:32",
            "call needs the attribute to_apply=",
        ),
    ];
    for (body, at, says) in cases {
        refused_module(&module(body), at, says);
    }
}

/// XLA reads computations in order: a call names a computation defined before its caller, so neither a
/// later computation nor the caller itself (XLA: "computation does not exist").
#[test]
fn callees_come_before_their_callers() {
    let add = "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n";
    let entry = "ENTRY e {\n  p = f32[4]{0} parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=add\n}\n";
    assert!(parse_module(&format!("HloModule m\n{add}{entry}")).is_ok());
    refused_module(
        &format!("HloModule m\n{entry}{add}"),
        "5:57",
        "computation add is defined after this use",
    );
    let looping = "body {\n  t = f32[4]{0} parameter(0)\n  ROOT w = f32[4]{0} while(t), condition=c, body=body\n}\n";
    let cond = "c {\n  t = f32[4]{0} parameter(0)\n  ROOT k = pred[] constant(true)\n}\n";
    refused_module(
        &format!("HloModule m\n{cond}{looping}ENTRY e {{\n  p = f32[4]{{0}} parameter(0)\n  ROOT w = f32[4]{{0}} while(p), condition=c, body=body\n}}\n"),
        "8:50",
        "computation body calls itself",
    );
    refused_module(
        &format!("HloModule m\n{cond}ENTRY e {{\n  p = f32[4]{{0}} parameter(0)\n  ROOT w = f32[4]{{0}} call(p), to_apply=nowhere\n}}\n"),
        "8:40",
        "computation nowhere does not exist",
    );
}

/// The values of `channel_id=`, `padding=`, `window=` and `dim_labels=` are read as XLA reads them, each
/// error at the value (or the window pair) where jaxlib 0.10.2 puts it.
#[test]
fn channel_ids_paddings_windows_and_dim_labels() {
    let add = "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n";
    let with = |body: &str| {
        format!("HloModule m\n{add}ENTRY e {{\n  p = f32[4]{{0}} parameter(0)\n  z = f32[] constant(0)\n{body}\n}}\n")
    };
    let ar = |v: &str| {
        with(&format!(
            "  ROOT r = f32[4]{{0}} all-reduce(p), channel_id={v}, to_apply=add"
        ))
    };
    assert!(parse_module(&ar("-1")).is_ok());
    refused_module(
        &ar("abc"),
        "10:48",
        "channel_id takes an integer, found `abc`",
    );
    let rw = |v: &str| {
        with(&format!(
            "  ROOT r = f32[2]{{0}} reduce-window(p, z), window={v}, to_apply=add"
        ))
    };
    assert!(parse_module(&rw(
        "{size=2 stride=2 pad=0_0 lhs_dilate=1 rhs_dilate=1 rhs_reversal=0}"
    ))
    .is_ok());
    refused_module(&rw("{size=2 strid=2}"), "10:58", "window has no key strid");
    refused_module(&rw("{size=2 pad=0}"), "10:62", "window pad= takes low_high");
    refused_module(&rw("{stride=2}"), "10:51", "size= is missing");
    let pad = |v: &str| with(&format!("  ROOT r = f32[6]{{0}} pad(p, z), padding={v}"));
    assert!(parse_module(&pad("1_1")).is_ok());
    assert!(parse_module(&pad("-1_2_0")).is_ok());
    refused_module(
        &pad("1_1_1_1"),
        "10:41",
        "`1_1_1_1` is not a padding config",
    );
    let conv = |v: &str| {
        format!("HloModule m\nENTRY e {{\n  p = f32[1,4,4,1]{{3,2,1,0}} parameter(0)\n  k = f32[3,3,1,1]{{3,2,1,0}} parameter(1)\n  ROOT r = f32[1,2,2,1]{{3,2,1,0}} convolution(p, k), window={{size=3x3}}, dim_labels={v}\n}}\n")
    };
    assert!(parse_module(&conv("b01f_01io->b01f")).is_ok());
    refused_module(
        &conv("b01q_01io->b01f"),
        "5:83",
        "is not a dim labels pattern",
    );
    refused_module(
        &conv("b01f_01io->b0f"),
        "5:83",
        "2, 2 and 1 spatial dimensions",
    );
    // An opcode that takes none of them still refuses them as attributes it does not take.
    let e = parse_module(&with("  ROOT r = f32[4]{0} negate(p), window={size=2}"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("negate takes no attribute window"), "{e}");
}
