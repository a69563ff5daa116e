//! `axe shard plan`: the reshard plan between two shardings, its bytes per device and its transfers.

use axe_shard::{plan_stages, Mesh};
use serde_json::{json, Value};

use crate::report::Report;
use crate::shard_cmd::*;

pub(crate) struct PlanArgs<'a> {
    pub(crate) target: &'a Target,
    pub(crate) cost: Cost,
    pub(crate) layouts: &'a crate::shard_run::Layouts,
    pub(crate) list: usize,
    pub(crate) json: bool,
}

/// `[[start,end],...]` of a box.
pub(crate) fn box_json(out: &mut String, r: &[std::ops::Range<u64>]) {
    use std::fmt::Write;
    out.push('[');
    for (k, r) in r.iter().enumerate() {
        if k > 0 {
            out.push(',');
        }
        let _ = write!(out, "[{},{}]", r.start, r.end);
    }
    out.push(']');
}

/// The transfers as JSON text: `{"from","to","region","bytes"}` and `"reduce"` where pending.
fn transfers_json(ts: &[axe_shard::Transfer]) -> String {
    use std::fmt::Write;
    let mut out = String::from("[");
    for (i, t) in ts.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{{\"from\":{},\"to\":{},\"region\":", t.from, t.to);
        box_json(&mut out, &t.region);
        let _ = write!(out, ",\"bytes\":{}", t.bytes);
        if let Some(op) = t.reduce {
            let _ = write!(out, ",\"reduce\":\"{}\"", op.name());
        }
        out.push('}');
    }
    out.push(']');
    out
}

/// The local copies as JSON text: `{"device","region","bytes"}` and `"reduce"` where pending.
fn locals_json(ls: &[axe_shard::Local], elem_bytes: u64) -> String {
    use std::fmt::Write;
    let mut out = String::from("[");
    for (i, l) in ls.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{{\"device\":{},\"region\":", l.device);
        box_json(&mut out, &l.region);
        let _ = write!(out, ",\"bytes\":{}", l.bytes(elem_bytes));
        if let Some(op) = l.reduce {
            let _ = write!(out, ",\"reduce\":\"{}\"", op.name());
        }
        out.push('}');
    }
    out.push(']');
    out
}

pub(crate) fn plan_report(
    src: &str,
    dst: &str,
    args: &PlanArgs<'_>,
    mesh: Option<&Mesh>,
) -> Result<Report, String> {
    let model = args.cost.model()?;
    let (mesh, a, b, ty) = pair(src, dst, args.target, mesh)?;
    // Per-device layouts do not change the transfers (regions are global boxes, sent packed); they are
    // checked here, so that a plan shown is one `run` can execute, and each side's buffers reported.
    let (a, b) = args.layouts.placements(a, b, ty)?;
    let memory = if args.layouts.any() {
        Some(memory_report(&mesh, &a, &b, args)?)
    } else {
        None
    };
    let elem_bytes = a.elem_bytes();
    // A source partial with several ops is reduced in stages, one op at a time, in mesh order.
    let stages = plan_stages(&mesh, &a.sharding, &b.sharding, elem_bytes, &model)
        .map_err(|e| e.to_string())?;
    if let [only] = stages.as_slice() {
        let (mut json, mut text) = stage_report(&only.plan, elem_bytes, args, true);
        if let Some((mj, mt)) = memory {
            text.push_str(&mt);
            if let Value::Object(obj) = &mut json {
                crate::report::raw_member(obj, "memory", mj.to_string());
            }
        }
        return Ok(Report { json, text });
    }
    let n = stages.len();
    let mut text = String::new();
    let mut jsons = Vec::with_capacity(n);
    let (mut bytes, mut us) = (0u64, 0f64);
    for (i, st) in stages.iter().enumerate() {
        let reduced = st.reduced_text(&mesh);
        let (json, t) = stage_report(&st.plan, elem_bytes, args, false);
        text.push_str(&format!("stage {} of {n} ({reduced}): {t}", i + 1));
        if args.json {
            let mut obj = serde_json::Map::new();
            obj.insert("reduces".into(), json!(reduced));
            if let Value::Object(m) = json {
                obj.extend(m);
            }
            jsons.push(Value::Object(obj));
        }
        bytes = bytes.saturating_add(st.plan.bytes);
        us += st.plan.estimate_us;
    }
    let mut json = if args.json {
        json!({"bytes": bytes, "estimate_us": us, "stages": jsons})
    } else {
        Value::Null
    };
    if let Some((mj, mt)) = memory {
        text.push_str(&mt);
        if let Value::Object(obj) = &mut json {
            obj.insert("memory".into(), mj);
        }
    }
    Ok(Report { json, text })
}

/// Each side's per-device buffers under its layout (`--layout`, `--src-layout`, `--dst-layout`): as
/// JSON, `{"source": [...], "destination": [...]}`, each distinct buffer once as `{"layout",
/// "bytes_per_device", "devices"}`; as text, one line per buffer, `source memory  f32[30,100]{1,0:T(8,128)}:
/// 16.0 KiB on each of 4 devices`.
fn memory_report(
    mesh: &Mesh,
    a: &axe_reshard::Placement,
    b: &axe_reshard::Placement,
    args: &PlanArgs<'_>,
) -> Result<(Value, String), String> {
    let mut obj = serde_json::Map::new();
    let mut text = String::new();
    for (side, p, flag) in [
        ("source", a, args.layouts.flag("src")),
        ("destination", b, args.layouts.flag("dst")),
    ] {
        let regions = p.sharding.regions(mesh).map_err(|e| e.to_string())?;
        let ids: Vec<u64> = regions.iter().map(|r| r.device).collect();
        let mem = crate::shard_memory::memory_of(mesh, p, &regions, flag)?;
        let mut list = Vec::new();
        for (layout, bytes, devices) in crate::shard_memory::kinds(&mem, &ids) {
            let each = crate::shard_memory::per_device_text(bytes, &devices);
            text.push_str(&format!(
                "{:<19} {layout}: {each}\n",
                format!("{side} memory")
            ));
            list.push(json!({"layout": layout, "bytes_per_device": bytes, "devices": devices}));
        }
        obj.insert(side.into(), Value::Array(list));
    }
    Ok((Value::Object(obj), text))
}

/// One plan's JSON (under `--json`; its transfers and locals as raw members where `raw`, which only a
/// report's top-level object may hold) and text: the collective, bytes and estimate, then up to `--list`
/// transfers (`from -> to`) and up to `--list` local copies (`d -> d ... (local copy)`).
fn stage_report(
    p: &axe_shard::Plan,
    elem_bytes: u64,
    args: &PlanArgs<'_>,
    raw: bool,
) -> (Value, String) {
    let list = args.list;
    // The JSON is built for --json alone, as text: a `Value` per transfer cost about 2 KiB each.
    let json = if args.json {
        let mut obj = serde_json::Map::new();
        obj.insert("collective".into(), json!(p.collective.name()));
        obj.insert("bytes".into(), json!(p.bytes));
        let members = [
            ("transfers", transfers_json(&p.transfers)),
            ("locals", locals_json(&p.locals, elem_bytes)),
            // (Raw too, to keep the keys in their order.)
            ("estimate_us", json!(p.estimate_us).to_string()),
        ];
        for (key, text) in members {
            if raw {
                crate::report::raw_member(&mut obj, key, text);
            } else {
                let v = serde_json::from_str(&text).unwrap_or(Value::Null);
                obj.insert(key.into(), v);
            }
        }
        Value::Object(obj)
    } else {
        Value::Null
    };
    let count =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut t = format!(
        "{}: {} in {} and {}, about {:.1} µs\n",
        p.collective.name(),
        human(p.bytes),
        count(p.transfers.len(), "transfer", "transfers"),
        count(p.locals.len(), "local copy", "local copies"),
        p.estimate_us
    );
    let reg = |r: &[std::ops::Range<u64>]| {
        let r: Vec<String> = r.iter().map(|r| format!("{}:{}", r.start, r.end)).collect();
        r.join(", ")
    };
    for x in p.transfers.iter().take(list) {
        t.push_str(&format!(
            "  {:>6} -> {:<6} [{}] {}{}\n",
            x.from,
            x.to,
            reg(&x.region),
            human(x.bytes),
            x.reduce.map_or(String::new(), |op| format!(
                " ({} into the receiver)",
                op.name()
            ))
        ));
    }
    if p.transfers.len() > list {
        t.push_str(&format!(
            "  ... and {} more transfers (see --json)\n",
            p.transfers.len() - list
        ));
    }
    // A local copy: a device's own source shard into its destination shard; nothing is sent.
    for l in p.locals.iter().take(list) {
        t.push_str(&format!(
            "  {:>6} -> {:<6} [{}] {} (local copy{})\n",
            l.device,
            l.device,
            reg(&l.region),
            human(l.bytes(elem_bytes)),
            l.reduce
                .map_or(String::new(), |op| format!(", {} into it", op.name()))
        ));
    }
    if p.locals.len() > list {
        t.push_str(&format!(
            "  ... and {} more local copies (see --json)\n",
            p.locals.len() - list
        ));
    }
    (json, t)
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
