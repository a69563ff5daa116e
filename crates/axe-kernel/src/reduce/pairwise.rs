//! A thread's registers summed pairwise, for `reduce`: fewer roundings on any path than a running sum.

use crate::expr::Expr;
use crate::ir::{Access, Compute, LStmt};

/// `dst = Σ src[rs]` pairwise: partial sums of 1, 2, 4, … registers kept on a stack in `tmp` (at most
/// `log₂ n + 1` of them), two of one size added as soon as they exist, the rest added smallest first.
/// For `n` a power of two this is the balanced tree: `log₂ n` roundings on any path, not `n - 1`.
#[allow(clippy::too_many_arguments)]
pub(super) fn pairwise(
    code: &mut Vec<LStmt>,
    id: usize,
    f: Compute,
    bytes: u32,
    (db, rd): (usize, i64),
    (sb, rs): (usize, &[i64]),
    tmp: usize,
    eb: i64,
) {
    let at = |buf: usize, r: i64| Access {
        buf,
        byte: Expr::Const(r * eb),
    };
    let add = |code: &mut Vec<LStmt>, a: usize, b: usize| {
        code.push(LStmt::Compute {
            call: id,
            f,
            dst: at(tmp, a as i64),
            srcs: vec![at(tmp, a as i64), at(tmp, b as i64)],
        })
    };
    let mut stack: Vec<usize> = Vec::new();
    for &r in rs {
        let slot = stack.len();
        code.push(LStmt::Move {
            call: id,
            dst: at(tmp, slot as i64),
            src: at(sb, r),
            bytes,
        });
        stack.push(1);
        while let [.., x, y] = stack[..] {
            if x != y {
                break;
            }
            let n = stack.len();
            add(code, n - 2, n - 1);
            stack.pop();
            if let Some(top) = stack.last_mut() {
                *top += y;
            }
        }
    }
    for j in (0..stack.len().saturating_sub(1)).rev() {
        add(code, j, j + 1);
    }
    code.push(LStmt::Move {
        call: id,
        dst: at(db, rd),
        src: at(tmp, 0),
        bytes,
    });
}
