//! `axe shard plan`: the reshard plan between two shardings, its bytes per device and its transfers.

use axe_shard::{plan, Mesh};
use serde_json::{json, Value};

use crate::report::Report;
use crate::shard_cmd::*;
use crate::shard_show::ranges;

pub(crate) struct PlanArgs<'a> {
    pub(crate) target: &'a Target,
    pub(crate) cost: Cost,
    pub(crate) layouts: &'a crate::shard_run::Layouts,
    pub(crate) list: usize,
}

pub(crate) fn plan_report(
    src: &str,
    dst: &str,
    args: &PlanArgs<'_>,
    mesh: Option<&Mesh>,
) -> Result<Report, String> {
    let model = args.cost.model()?;
    let list = args.list;
    let (mesh, a, b, ty) = pair(src, dst, args.target, mesh)?;
    // Per-device layouts do not change the plan (regions are global boxes); they are checked here so
    // that a plan shown is one `run` can execute.
    let (a, b) = args.layouts.placements(a, b, ty)?;
    let p =
        plan(&mesh, &a.sharding, &b.sharding, a.elem_bytes(), &model).map_err(|e| e.to_string())?;
    let transfers: Vec<Value> = p
        .transfers
        .iter()
        .map(|t| {
            let mut v =
                json!({"from": t.from, "to": t.to, "region": ranges(&t.region), "bytes": t.bytes});
            if let Some(op) = t.reduce {
                v["reduce"] = json!(op.name());
            }
            v
        })
        .collect();
    let locals: Vec<Value> = p
        .locals
        .iter()
        .map(|l| json!({"device": l.device, "region": ranges(&l.region)}))
        .collect();
    let json = json!({
        "collective": p.collective.name(),
        "bytes": p.bytes,
        "transfers": transfers,
        "locals": locals,
        "estimate_us": p.estimate_us,
    });
    let mut t = format!(
        "{}: {} in {} transfers and {} local copies, about {:.1} us\n",
        p.collective.name(),
        human(p.bytes),
        p.transfers.len(),
        p.locals.len(),
        p.estimate_us
    );
    for x in p.transfers.iter().take(list) {
        let reg: Vec<String> = x
            .region
            .iter()
            .map(|r| format!("{}:{}", r.start, r.end))
            .collect();
        t.push_str(&format!(
            "  {:>6} -> {:<6} [{}] {}{}\n",
            x.from,
            x.to,
            reg.join(", "),
            human(x.bytes),
            x.reduce.map_or(String::new(), |op| format!(
                " ({} into the receiver)",
                op.name()
            ))
        ));
    }
    if p.transfers.len() > list {
        t.push_str(&format!(
            "  ... and {} more (see --json)\n",
            p.transfers.len() - list
        ));
    }
    Ok(Report { json, text: t })
}

/// `b` bytes in B, KiB, MiB, GiB.
pub(crate) fn human(b: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", units[u])
    }
}
