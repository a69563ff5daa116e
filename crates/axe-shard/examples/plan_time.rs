//! Prints the planning time of each `bench_plans` case.

use std::time::Instant;

fn main() -> Result<(), axe_shard::ShardError> {
    for (name, mesh, src, dst) in axe_shard::bench_plans()? {
        let t = Instant::now();
        let p = axe_shard::plan(&mesh, &src, &dst, 4, &axe_shard::CostModel::default())?;
        let s = t.elapsed().as_secs_f64();
        println!(
            "{name}: {:.3} ms, {} transfers, {} bytes, {}",
            s * 1e3,
            p.transfers.len(),
            p.bytes,
            p.collective.name()
        );
    }
    Ok(())
}
