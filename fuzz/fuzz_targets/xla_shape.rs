//! XLA shape text: any text reads to a shape or an error, never a panic; a shape read prints (as XLA
//! prints it, which leaves out some attributes, such as dense dim levels) to text that reads back and
//! prints the same.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    if let Ok(shape) = axe_xla::parse_shape(text) {
        let printed = shape.to_string();
        let again = axe_xla::parse_shape(&printed).unwrap_or_else(|e| {
            panic!("{text:?} printed as {printed:?}, which does not read: {e}")
        });
        assert_eq!(
            again.to_string(),
            printed,
            "{text:?} printed as {printed:?}"
        );
        for (_, array) in shape.arrays() {
            let _ = axe_xla::sizes(array);
        }
    }
    let _ = axe_xla::parse_shape_general(text);
});
