#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! The pad–reshape–transpose programs, run by numpy on `arange` data: every element must land at its tiled
//! linear index and every other slot must be padding. Needs python3 with numpy (`.ci/run` installs it);
//! without it the test says so and passes, unless AXE_REQUIRE_NUMPY=1.

use std::io::Write;
use std::process::{Command, Stdio};

use axe_xla::{numpy_program, parse_shape, ArrayShape, Shape, Tiling};

const SHAPES: &[&str] = &[
    "f32[3,5]{1,0:T(2,2)}",
    "f32[4,8]{1,0:T(2,4)(2,1)}",
    "f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}",
    "bf16[2,8,128]{2,1,0:T(8,128)(2,1)}",
    "bf16[2048]{0:T(1024)(128)(2,1)}",
    "f32[3,5]{1,0:T(8,128)(3,1)}",
    "f32[]{:T(128)}",
    "s8[5,300]{0,1:T(8,128)(4,1)}",
    "u8[3,5]{1,0:T(8,128)L(1024)}",
    "f32[6,5,4]{0,2,1:T(2,3)(3)}",
    "f32[3,7]{0,1}",
    "pred[33,130]{1,0:T(32,128)(32,1)E(1)}",
    "f32[5]{0:T(2,2)}",
    "f32[9,4,6]{2,1,0:T(4,2,4)(2,2)(2,1)}",
];

fn array(s: &str) -> ArrayShape {
    match parse_shape(s).unwrap() {
        Shape::Array(a) => a,
        _ => panic!("{s}"),
    }
}

fn have_numpy() -> bool {
    Command::new("python3")
        .args(["-c", "import numpy"])
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn numpy_programs_place_every_element_at_its_tiled_index() {
    if !have_numpy() {
        assert!(
            std::env::var("AXE_REQUIRE_NUMPY").is_err(),
            "python3 with numpy is required (pip install numpy)"
        );
        eprintln!("skipped: python3 with numpy not found (pip install numpy)");
        return;
    }
    let mut script = String::from("import numpy as np\nfailures = []\n");
    for (i, s) in SHAPES.iter().enumerate() {
        let a = array(s);
        let t = Tiling::new(&a).unwrap();
        let dims: Vec<i64> = a.dims.iter().map(|d| d.bound().unwrap()).collect();
        let strides: Vec<i64> = (0..dims.len())
            .map(|k| dims[k + 1..].iter().product())
            .collect();
        let total = t.expanded_elements().unwrap();
        let l = a.layout.tail_padding_alignment_in_elements;
        let padded_total = (total + l - 1) / l * l;
        let expected: Vec<i64> = (0..padded_total)
            .map(|x| {
                match if x < total {
                    t.element_at(x).unwrap()
                } else {
                    None
                } {
                    Some(e) => e.iter().zip(&strides).map(|(i, s)| i * s).sum(),
                    None => -1,
                }
            })
            .collect();
        let program = numpy_program(&a)
            .unwrap()
            .replace("def to_memory(", &format!("def to_memory_{i}("));
        script.push_str(&program.replace("import numpy as np\n", ""));
        script.push_str(&format!(
            "x = np.arange({n}, dtype=np.int64).reshape({shape})\ngot = to_memory_{i}(x, fill=-1).tolist()\n\
             if got != {expected:?}:\n    failures.append({s:?})\n",
            n = dims.iter().product::<i64>(),
            shape = format!("({},)", dims.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", ")).replace("(,)", "()"),
        ));
    }
    script.push_str("print('FAILED: ' + ', '.join(failures) if failures else 'ok')\n");
    let mut child = Command::new("python3")
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "python failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        script
    );
    assert_eq!(stdout.trim(), "ok");
}
