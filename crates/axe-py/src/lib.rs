//! The `axe` Python package's native module, `axe._axe`: thin classes over the Rust crates. The Python
//! package (`python/axe`) re-exports them and adds the numpy and framework adapters.

use pyo3::prelude::*;

mod cute;
mod errors;
mod hlo;
mod kernel;
mod kernel_block;
mod kernel_builder;
mod kernel_expr;
mod kernel_ops;
mod kernel_scope;
mod kernel_tensor;
mod kernel_xdev;
mod kernel_xdev_builder;
mod layout;
mod picture;
mod relayout;
mod shape;
mod sharding;
mod sharding_plan;
mod triton;
mod value;

#[pymodule]
fn _axe(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // What the Python package checks on import: an extension built from other sources is refused.
    m.add("_build_id", env!("AXE_PY_BUILD_ID"))?;
    errors::register(m)?;
    m.add_class::<layout::PyLayout>()?;
    m.add_class::<shape::PyShape>()?;
    m.add_function(wrap_pyfunction!(shape::xla_size, m)?)?;
    m.add_class::<sharding::PyMesh>()?;
    m.add_class::<sharding::PySharding>()?;
    m.add_function(wrap_pyfunction!(sharding::_mesh_split, m)?)?;
    // Under its own name: `axe.cute.Layout` in Python.
    m.add("CuteLayout", m.py().get_type::<cute::CuteLayout>())?;
    m.add_function(wrap_pyfunction!(cute::_cute_swizzle_compose, m)?)?;
    m.add_class::<triton::LinearLayout>()?;
    m.add_function(wrap_pyfunction!(triton::gluon_to_axe, m)?)?;
    m.add_function(wrap_pyfunction!(triton::padding_of, m)?)?;
    m.add_function(wrap_pyfunction!(triton::hardware_map_of, m)?)?;
    m.add_function(wrap_pyfunction!(relayout::_relayout, m)?)?;
    m.add_function(wrap_pyfunction!(relayout::_relayout_target, m)?)?;
    m.add_function(wrap_pyfunction!(hlo::_hlo_stats, m)?)?;
    m.add_function(wrap_pyfunction!(hlo::_hlo_format, m)?)?;
    m.add_class::<kernel::PyKernel>()?;
    m.add_function(wrap_pyfunction!(kernel::_kernel_relayout, m)?)?;
    m.add_function(wrap_pyfunction!(kernel::_kernel_softmax, m)?)?;
    m.add_function(wrap_pyfunction!(kernel::_kernel_gemm, m)?)?;
    m.add_function(wrap_pyfunction!(kernel::_kernel_wgmma_accumulator, m)?)?;
    m.add_class::<kernel_xdev::PyDeviceKernel>()?;
    m.add(
        "DeviceBuilder",
        m.py().get_type::<kernel_xdev_builder::PyDeviceBuilder>(),
    )?;
    m.add_function(wrap_pyfunction!(
        kernel_xdev::_kernel_gemm_reduce_scatter,
        m
    )?)?;
    // `axe.kernel.Builder` and what a description is written with.
    m.add(
        "KernelBuilder",
        m.py().get_type::<kernel_builder::PyBuilder>(),
    )?;
    m.add("KernelExpr", m.py().get_type::<kernel_expr::PyExpr>())?;
    m.add("KernelScope", m.py().get_type::<kernel_scope::PyScope>())?;
    m.add("KernelBuffer", m.py().get_type::<kernel_tensor::PyBuffer>())?;
    m.add("KernelTensor", m.py().get_type::<kernel_tensor::PyTensor>())?;
    m.add("KernelBlock", m.py().get_type::<kernel_block::PyBlock>())?;
    m.add("_kernel_tid", Py::new(m.py(), kernel_expr::tid())?)?;
    m.add("_kernel_cta", Py::new(m.py(), kernel_expr::cta())?)?;
    Ok(())
}
