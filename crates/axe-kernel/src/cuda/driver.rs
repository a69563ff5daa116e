//! The CUDA driver's entry points, loaded from `libcuda.so.1` at run time, and its error codes turned into
//! messages.
#![allow(unsafe_code)] // dlopen and the CUDA driver's C API.

use std::ffi::{c_char, c_int, c_uint, c_void, CStr};

use crate::error::{KernelError, Result};

pub(super) type CuResult = c_int;
pub(super) type CuDevice = c_int;
pub(super) type CuContext = *mut c_void;
pub(super) type CuModule = *mut c_void;
pub(super) type CuFunction = *mut c_void;
pub(super) type CuEvent = *mut c_void;
pub(super) type CuStream = *mut c_void;
pub(super) type CuPtr = u64;

pub(super) const CUDA_ERROR_OUT_OF_MEMORY: CuResult = 2;
pub(super) const CUDA_ERROR_NO_DEVICE: CuResult = 100;
pub(super) const ATTR_MULTIPROCESSOR_COUNT: c_int = 16;
pub(super) const ATTR_CC_MAJOR: c_int = 75;
pub(super) const ATTR_CC_MINOR: c_int = 76;
pub(super) const FUNC_ATTR_MAX_DYNAMIC_SHARED: c_int = 8;
/// Dynamic shared memory a kernel may use without opting in.
pub(super) const DEFAULT_DYNAMIC_SHARED: u64 = 48 * 1024;

/// The driver entry points axe uses, resolved once.
pub(super) struct Api {
    pub(super) init: unsafe extern "C" fn(c_uint) -> CuResult,
    pub(super) driver_version: unsafe extern "C" fn(*mut c_int) -> CuResult,
    pub(super) device_count: unsafe extern "C" fn(*mut c_int) -> CuResult,
    pub(super) device_get: unsafe extern "C" fn(*mut CuDevice, c_int) -> CuResult,
    pub(super) device_name: unsafe extern "C" fn(*mut c_char, c_int, CuDevice) -> CuResult,
    pub(super) device_attr: unsafe extern "C" fn(*mut c_int, c_int, CuDevice) -> CuResult,
    pub(super) ctx_retain: unsafe extern "C" fn(*mut CuContext, CuDevice) -> CuResult,
    pub(super) ctx_release: unsafe extern "C" fn(CuDevice) -> CuResult,
    pub(super) ctx_set: unsafe extern "C" fn(CuContext) -> CuResult,
    pub(super) ctx_sync: unsafe extern "C" fn() -> CuResult,
    pub(super) mem_info: unsafe extern "C" fn(*mut usize, *mut usize) -> CuResult,
    pub(super) alloc: unsafe extern "C" fn(*mut CuPtr, usize) -> CuResult,
    pub(super) free: unsafe extern "C" fn(CuPtr) -> CuResult,
    pub(super) htod: unsafe extern "C" fn(CuPtr, *const c_void, usize) -> CuResult,
    pub(super) dtoh: unsafe extern "C" fn(*mut c_void, CuPtr, usize) -> CuResult,
    pub(super) dtod: unsafe extern "C" fn(CuPtr, CuPtr, usize) -> CuResult,
    pub(super) memset8: unsafe extern "C" fn(CuPtr, u8, usize) -> CuResult,
    pub(super) module_load: unsafe extern "C" fn(*mut CuModule, *const c_void) -> CuResult,
    pub(super) module_unload: unsafe extern "C" fn(CuModule) -> CuResult,
    pub(super) module_function:
        unsafe extern "C" fn(*mut CuFunction, CuModule, *const c_char) -> CuResult,
    pub(super) func_set_attr: unsafe extern "C" fn(CuFunction, c_int, c_int) -> CuResult,
    #[allow(clippy::type_complexity)]
    pub(super) launch: unsafe extern "C" fn(
        CuFunction,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        CuStream,
        *mut *mut c_void,
        *mut *mut c_void,
    ) -> CuResult,
    pub(super) event_create: unsafe extern "C" fn(*mut CuEvent, c_uint) -> CuResult,
    pub(super) event_record: unsafe extern "C" fn(CuEvent, CuStream) -> CuResult,
    pub(super) event_sync: unsafe extern "C" fn(CuEvent) -> CuResult,
    pub(super) event_elapsed: unsafe extern "C" fn(*mut f32, CuEvent, CuEvent) -> CuResult,
    pub(super) event_destroy: unsafe extern "C" fn(CuEvent) -> CuResult,
    pub(super) error_name: unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult,
    /// `cuTensorMapEncodeTiled` (CUDA 12 drivers and newer; `None` on older ones).
    #[allow(clippy::type_complexity)]
    pub(super) encode_tiled: Option<
        unsafe extern "C" fn(
            *mut c_void,
            c_int,
            c_uint,
            *mut c_void,
            *const u64,
            *const u64,
            *const c_uint,
            *const c_uint,
            c_int,
            c_int,
            c_int,
            c_int,
        ) -> CuResult,
    >,
    pub(super) error_string: unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult,
    // Keeps the library (and so every pointer above) alive.
    pub(super) _lib: libloading::Library,
}

pub(super) fn cuda_err(m: impl Into<String>) -> KernelError {
    KernelError::Cuda(m.into())
}

impl Api {
    pub(super) fn load() -> Result<Api> {
        let path = std::env::var_os("AXE_LIBCUDA").unwrap_or_else(|| "libcuda.so.1".into());
        // SAFETY: loading the NVIDIA driver library runs its initialisers; it is the system's driver.
        let lib = unsafe { libloading::Library::new(&path) }.map_err(|e| {
            cuda_err(format!(
                "no NVIDIA driver: cannot load {} ({e}); a GPU backend needs a machine with an NVIDIA GPU and its driver",
                path.to_string_lossy()
            ))
        })?;
        macro_rules! sym {
            ($name:literal) => {{
                // SAFETY: the symbol's type is the driver API's documented signature for that name.
                let s = unsafe { lib.get($name) }.map_err(|e| {
                    cuda_err(format!(
                        "the NVIDIA driver lacks {}: {e}",
                        String::from_utf8_lossy(&$name[..$name.len() - 1])
                    ))
                })?;
                *s
            }};
        }
        Ok(Api {
            init: sym!(b"cuInit\0"),
            driver_version: sym!(b"cuDriverGetVersion\0"),
            device_count: sym!(b"cuDeviceGetCount\0"),
            device_get: sym!(b"cuDeviceGet\0"),
            device_name: sym!(b"cuDeviceGetName\0"),
            device_attr: sym!(b"cuDeviceGetAttribute\0"),
            ctx_retain: sym!(b"cuDevicePrimaryCtxRetain\0"),
            ctx_release: sym!(b"cuDevicePrimaryCtxRelease_v2\0"),
            ctx_set: sym!(b"cuCtxSetCurrent\0"),
            ctx_sync: sym!(b"cuCtxSynchronize\0"),
            mem_info: sym!(b"cuMemGetInfo_v2\0"),
            alloc: sym!(b"cuMemAlloc_v2\0"),
            free: sym!(b"cuMemFree_v2\0"),
            htod: sym!(b"cuMemcpyHtoD_v2\0"),
            dtoh: sym!(b"cuMemcpyDtoH_v2\0"),
            dtod: sym!(b"cuMemcpyDtoD_v2\0"),
            memset8: sym!(b"cuMemsetD8_v2\0"),
            module_load: sym!(b"cuModuleLoadData\0"),
            module_unload: sym!(b"cuModuleUnload\0"),
            module_function: sym!(b"cuModuleGetFunction\0"),
            func_set_attr: sym!(b"cuFuncSetAttribute\0"),
            launch: sym!(b"cuLaunchKernel\0"),
            event_create: sym!(b"cuEventCreate\0"),
            event_record: sym!(b"cuEventRecord\0"),
            event_sync: sym!(b"cuEventSynchronize\0"),
            event_elapsed: sym!(b"cuEventElapsedTime\0"),
            event_destroy: sym!(b"cuEventDestroy_v2\0"),
            error_name: sym!(b"cuGetErrorName\0"),
            error_string: sym!(b"cuGetErrorString\0"),
            // SAFETY: the symbol's type is the driver API's documented signature for that name.
            encode_tiled: unsafe { lib.get(b"cuTensorMapEncodeTiled\0") }
                .ok()
                .map(|s| *s),
            _lib: lib,
        })
    }

    /// `Ok` for `CUDA_SUCCESS`, else an error naming `what` and the driver's name and text for `r`.
    pub(super) fn check(&self, r: CuResult, what: impl FnOnce() -> String) -> Result<()> {
        if r == 0 {
            return Ok(());
        }
        let text = |f: unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult| {
            let mut p: *const c_char = std::ptr::null();
            // SAFETY: the driver writes a pointer to a static string, or fails and leaves it null.
            let ok = unsafe { f(r, &mut p) } == 0 && !p.is_null();
            // SAFETY: a non-null result is a NUL-terminated static string owned by the driver.
            ok.then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
        };
        let name = text(self.error_name).unwrap_or_else(|| format!("CUDA error {r}"));
        let detail = text(self.error_string).unwrap_or_default();
        let hint = match r {
            CUDA_ERROR_NO_DEVICE => " (no CUDA-capable GPU is visible to this process)",
            CUDA_ERROR_OUT_OF_MEMORY => " (the GPU's memory is full)",
            _ => "",
        };
        Err(cuda_err(format!("{}: {name}: {detail}{hint}", what())))
    }
}
