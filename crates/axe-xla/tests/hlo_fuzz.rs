#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! Arbitrary and mutated modules into the reader, shardings into their parser: errors, never panics; and
//! whatever reads prints back to a fixpoint.

use axe_testkit::mutate;
use axe_xla::hlo::sharding::parse_sharding;
use axe_xla::hlo::{parse_module, stats::report};
use proptest::prelude::*;

const SEED: &str = include_str!("modules/xla_printed.hlo");

fn check(text: &str) {
    if let Ok(m) = parse_module(text) {
        let printed = m.to_string();
        let again = parse_module(&printed)
            .unwrap_or_else(|e| panic!("printed module does not read back: {e}\n{printed}"));
        assert_eq!(again.to_string(), printed);
        let _ = report(&m, 5);
        for c in &m.computations {
            for i in &c.instructions {
                let _ = i.operand_names();
                if let Some(s) = i.attribute("sharding") {
                    if let Ok(sh) = parse_sharding(s) {
                        assert_eq!(parse_sharding(&sh.to_string()).unwrap(), sh);
                        let _ = sh.shards(&[5, 3]);
                    }
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn mutated_modules(ops in proptest::collection::vec((any::<u8>(), any::<usize>(), prop::sample::select(vec!['(', ')', '[', ']', '{', '}', ',', '=', '"', '\\', '%', '\n', ' ', '/', '*', 'R', 'x', '0', ':'])), 1..8)) {
        check(&mutate(SEED, &ops));
    }

    #[test]
    fn arbitrary_text(s in "\\PC{0,200}") {
        check(&s);
        check(&format!("HloModule m\n\nENTRY %e {{\n  {s}\n}}\n"));
    }

    #[test]
    fn shardings(s in "[{}\\[\\]<=0-9,T() a-z_]{0,40}") {
        if let Ok(sh) = parse_sharding(&s) {
            assert_eq!(parse_sharding(&sh.to_string()).unwrap(), sh);
            let _ = sh.shards(&[7, 2]);
            let _ = sh.shards(&[9223372036854775807, 3]);
        }
    }
}
