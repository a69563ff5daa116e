//! Running lowered kernels on an NVIDIA GPU through the CUDA driver API, found at run time.
//!
//! Nothing of CUDA is needed to build: `libcuda.so.1` (the driver, `$AXE_LIBCUDA` to override) is loaded
//! with `dlopen` when a [`Gpu`] is opened. A [`Gpu`] holds the device's primary context; [`DeviceBuffer`]s
//! free themselves; [`Gpu::run`] is the device twin of the CPU interpreter's [`crate::run`]: the same
//! global buffers in, the same buffers out. Every driver error becomes a [`KernelError::Cuda`] that says
//! what was being done (the kernel's name for launches) and the driver's own name for the error.
#![allow(unsafe_code)] // dlopen and the CUDA driver's C API; every call's arguments are checked here.

use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::sync::Arc;

use crate::error::{KernelError, Result};
use crate::ir::Program;

type CuResult = c_int;
type CuDevice = c_int;
type CuContext = *mut c_void;
type CuModule = *mut c_void;
type CuFunction = *mut c_void;
type CuEvent = *mut c_void;
type CuStream = *mut c_void;
type CuPtr = u64;

const CUDA_ERROR_OUT_OF_MEMORY: CuResult = 2;
const CUDA_ERROR_NO_DEVICE: CuResult = 100;
const ATTR_MULTIPROCESSOR_COUNT: c_int = 16;
const ATTR_CC_MAJOR: c_int = 75;
const ATTR_CC_MINOR: c_int = 76;
const FUNC_ATTR_MAX_DYNAMIC_SHARED: c_int = 8;
/// Dynamic shared memory a kernel may use without opting in.
const DEFAULT_DYNAMIC_SHARED: u64 = 48 * 1024;

/// The driver entry points axe uses, resolved once.
struct Api {
    init: unsafe extern "C" fn(c_uint) -> CuResult,
    driver_version: unsafe extern "C" fn(*mut c_int) -> CuResult,
    device_count: unsafe extern "C" fn(*mut c_int) -> CuResult,
    device_get: unsafe extern "C" fn(*mut CuDevice, c_int) -> CuResult,
    device_name: unsafe extern "C" fn(*mut c_char, c_int, CuDevice) -> CuResult,
    device_attr: unsafe extern "C" fn(*mut c_int, c_int, CuDevice) -> CuResult,
    ctx_retain: unsafe extern "C" fn(*mut CuContext, CuDevice) -> CuResult,
    ctx_release: unsafe extern "C" fn(CuDevice) -> CuResult,
    ctx_set: unsafe extern "C" fn(CuContext) -> CuResult,
    ctx_sync: unsafe extern "C" fn() -> CuResult,
    mem_info: unsafe extern "C" fn(*mut usize, *mut usize) -> CuResult,
    alloc: unsafe extern "C" fn(*mut CuPtr, usize) -> CuResult,
    free: unsafe extern "C" fn(CuPtr) -> CuResult,
    htod: unsafe extern "C" fn(CuPtr, *const c_void, usize) -> CuResult,
    dtoh: unsafe extern "C" fn(*mut c_void, CuPtr, usize) -> CuResult,
    dtod: unsafe extern "C" fn(CuPtr, CuPtr, usize) -> CuResult,
    memset8: unsafe extern "C" fn(CuPtr, u8, usize) -> CuResult,
    module_load: unsafe extern "C" fn(*mut CuModule, *const c_void) -> CuResult,
    module_unload: unsafe extern "C" fn(CuModule) -> CuResult,
    module_function: unsafe extern "C" fn(*mut CuFunction, CuModule, *const c_char) -> CuResult,
    func_set_attr: unsafe extern "C" fn(CuFunction, c_int, c_int) -> CuResult,
    #[allow(clippy::type_complexity)]
    launch: unsafe extern "C" fn(
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
    event_create: unsafe extern "C" fn(*mut CuEvent, c_uint) -> CuResult,
    event_record: unsafe extern "C" fn(CuEvent, CuStream) -> CuResult,
    event_sync: unsafe extern "C" fn(CuEvent) -> CuResult,
    event_elapsed: unsafe extern "C" fn(*mut f32, CuEvent, CuEvent) -> CuResult,
    event_destroy: unsafe extern "C" fn(CuEvent) -> CuResult,
    error_name: unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult,
    error_string: unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult,
    // Keeps the library (and so every pointer above) alive.
    _lib: libloading::Library,
}

fn cuda_err(m: impl Into<String>) -> KernelError {
    KernelError::Cuda(m.into())
}

impl Api {
    fn load() -> Result<Api> {
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
            _lib: lib,
        })
    }

    /// `Ok` for `CUDA_SUCCESS`, else an error naming `what` and the driver's name and text for `r`.
    fn check(&self, r: CuResult, what: impl FnOnce() -> String) -> Result<()> {
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

/// One GPU: its primary context, made current on the calling thread when opened.
pub struct Gpu {
    api: Arc<Api>,
    device: CuDevice,
    ctx: CuContext,
    /// The device's name, e.g. `NVIDIA H100 80GB HBM3`.
    pub name: String,
    /// Compute capability `(major, minor)`.
    pub capability: (i32, i32),
    /// Streaming multiprocessors.
    pub multiprocessors: i32,
    /// The driver's CUDA version, e.g. 13000.
    pub driver_version: i32,
}

/// Memory on the GPU, freed on drop.
pub struct DeviceBuffer {
    api: Arc<Api>,
    ptr: CuPtr,
    bytes: u64,
}

impl DeviceBuffer {
    /// Its size in bytes.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        if self.ptr != 0 {
            // SAFETY: `ptr` came from cuMemAlloc and is freed once. A failure here cannot be reported.
            let _ = unsafe { (self.api.free)(self.ptr) };
        }
    }
}

/// A loaded module (cubin) and one kernel in it.
pub struct Kernel {
    api: Arc<Api>,
    module: CuModule,
    function: CuFunction,
    /// The kernel's name.
    pub name: String,
}

impl Drop for Kernel {
    fn drop(&mut self) {
        // SAFETY: the module was loaded by cuModuleLoadData and is unloaded once.
        let _ = unsafe { (self.api.module_unload)(self.module) };
    }
}

/// Launch geometry: CTAs, threads per CTA, dynamic shared bytes per CTA.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    /// CTAs (one-dimensional grid).
    pub grid: u32,
    /// Threads per CTA.
    pub threads: u32,
    /// Dynamic shared memory per CTA, in bytes.
    pub shared_bytes: u64,
}

impl Gpu {
    /// Opens GPU `ordinal` (0 for the first) and makes its primary context current on this thread.
    pub fn open(ordinal: i32) -> Result<Gpu> {
        let api = Arc::new(Api::load()?);
        // SAFETY: cuInit takes flags 0.
        api.check(unsafe { (api.init)(0) }, || {
            "initialising the CUDA driver".into()
        })?;
        let mut version = 0;
        // SAFETY: out-pointer to a live local.
        api.check(unsafe { (api.driver_version)(&mut version) }, || {
            "reading the driver's version".into()
        })?;
        let mut count = 0;
        // SAFETY: out-pointer to a live local.
        api.check(unsafe { (api.device_count)(&mut count) }, || {
            "counting GPUs".into()
        })?;
        if ordinal < 0 || ordinal >= count {
            return Err(cuda_err(format!(
                "GPU {ordinal} does not exist: this machine has {count} CUDA device(s)"
            )));
        }
        let mut device = 0;
        // SAFETY: out-pointer to a live local; ordinal checked above.
        api.check(unsafe { (api.device_get)(&mut device, ordinal) }, || {
            format!("opening GPU {ordinal}")
        })?;
        let mut name = [0 as c_char; 256];
        // SAFETY: the buffer holds 256 bytes and the driver writes at most that many, NUL-terminated.
        api.check(
            unsafe { (api.device_name)(name.as_mut_ptr(), 256, device) },
            || "reading the GPU's name".into(),
        )?;
        // SAFETY: NUL-terminated by the driver within the buffer.
        let name = unsafe { CStr::from_ptr(name.as_ptr()) }
            .to_string_lossy()
            .into_owned();
        let attr = |a: c_int| -> Result<i32> {
            let mut v = 0;
            // SAFETY: out-pointer to a live local; `a` is a documented attribute.
            api.check(unsafe { (api.device_attr)(&mut v, a, device) }, || {
                format!("reading attribute {a} of {name}")
            })?;
            Ok(v)
        };
        let capability = (attr(ATTR_CC_MAJOR)?, attr(ATTR_CC_MINOR)?);
        let multiprocessors = attr(ATTR_MULTIPROCESSOR_COUNT)?;
        let mut ctx: CuContext = std::ptr::null_mut();
        // SAFETY: out-pointer to a live local.
        api.check(unsafe { (api.ctx_retain)(&mut ctx, device) }, || {
            format!("creating a context on {name}")
        })?;
        let gpu = Gpu {
            api,
            device,
            ctx,
            name,
            capability,
            multiprocessors,
            driver_version: version,
        };
        gpu.make_current()?;
        Ok(gpu)
    }

    /// Makes this GPU's context current on the calling thread.
    pub fn make_current(&self) -> Result<()> {
        // SAFETY: `ctx` is the retained primary context.
        self.api.check(unsafe { (self.api.ctx_set)(self.ctx) }, || {
            format!("making {}'s context current", self.name)
        })
    }

    /// The `--gpu-architecture` this GPU runs: `sm_90a` on Hopper, else `sm_MN`.
    pub fn arch(&self) -> String {
        match self.capability {
            (9, 0) => "sm_90a".into(),
            (ma, mi) => format!("sm_{ma}{mi}"),
        }
    }

    /// Free and total device memory, in bytes.
    pub fn memory(&self) -> Result<(u64, u64)> {
        let (mut free, mut total) = (0usize, 0usize);
        // SAFETY: out-pointers to live locals.
        self.api.check(
            unsafe { (self.api.mem_info)(&mut free, &mut total) },
            || "reading free GPU memory".into(),
        )?;
        Ok((free as u64, total as u64))
    }

    /// `bytes` of device memory (at least one byte is allocated, so every buffer has an address).
    pub fn alloc(&self, bytes: u64) -> Result<DeviceBuffer> {
        let n = usize::try_from(bytes.max(1))
            .map_err(|_| cuda_err(format!("{bytes} bytes do not fit this machine's size_t")))?;
        let mut ptr: CuPtr = 0;
        // SAFETY: out-pointer to a live local.
        self.api
            .check(unsafe { (self.api.alloc)(&mut ptr, n) }, || {
                format!("allocating {bytes} bytes on {}", self.name)
            })?;
        Ok(DeviceBuffer {
            api: self.api.clone(),
            ptr,
            bytes,
        })
    }

    /// A buffer holding `data`.
    pub fn upload(&self, data: &[u8]) -> Result<DeviceBuffer> {
        let b = self.alloc(data.len() as u64)?;
        self.write(&b, data)?;
        Ok(b)
    }

    /// Copies `data` to the start of `buf`.
    pub fn write(&self, buf: &DeviceBuffer, data: &[u8]) -> Result<()> {
        if data.len() as u64 > buf.bytes {
            return Err(cuda_err(format!(
                "{} bytes do not fit a {}-byte device buffer",
                data.len(),
                buf.bytes
            )));
        }
        if data.is_empty() {
            return Ok(());
        }
        // SAFETY: `data` is readable for its length and the buffer is at least that long.
        self.api.check(
            unsafe { (self.api.htod)(buf.ptr, data.as_ptr().cast(), data.len()) },
            || format!("copying {} bytes to {}", data.len(), self.name),
        )
    }

    /// The first `bytes` bytes of `buf`.
    pub fn read(&self, buf: &DeviceBuffer, bytes: u64) -> Result<Vec<u8>> {
        if bytes > buf.bytes {
            return Err(cuda_err(format!(
                "reading {bytes} bytes from a {}-byte device buffer",
                buf.bytes
            )));
        }
        let n = usize::try_from(bytes).map_err(|_| cuda_err("a buffer too large to read"))?;
        let mut out = vec![0u8; n];
        if n > 0 {
            // SAFETY: `out` is writable for `n` bytes and the buffer holds at least `n`.
            self.api.check(
                unsafe { (self.api.dtoh)(out.as_mut_ptr().cast(), buf.ptr, n) },
                || format!("copying {n} bytes back from {}", self.name),
            )?;
        }
        Ok(out)
    }

    /// Copies `bytes` bytes from `src` to `dst` on the device (the driver's own copy).
    pub fn copy(&self, dst: &DeviceBuffer, src: &DeviceBuffer, bytes: u64) -> Result<()> {
        if bytes > dst.bytes || bytes > src.bytes {
            return Err(cuda_err(format!(
                "a {bytes}-byte device copy between buffers of {} and {} bytes",
                src.bytes, dst.bytes
            )));
        }
        let n = usize::try_from(bytes).map_err(|_| cuda_err("a copy too large"))?;
        // SAFETY: both buffers hold at least `n` bytes.
        self.api
            .check(unsafe { (self.api.dtod)(dst.ptr, src.ptr, n) }, || {
                format!("copying {n} bytes on {}", self.name)
            })
    }

    /// Sets every byte of `buf` to `value`.
    pub fn memset(&self, buf: &DeviceBuffer, value: u8) -> Result<()> {
        let n = usize::try_from(buf.bytes).map_err(|_| cuda_err("a buffer too large"))?;
        // SAFETY: the buffer holds `n` bytes.
        self.api
            .check(unsafe { (self.api.memset8)(buf.ptr, value, n) }, || {
                format!("filling {n} bytes on {}", self.name)
            })
    }

    /// Loads `cubin` and finds kernel `name` in it.
    pub fn load(&self, cubin: &[u8], name: &str) -> Result<Kernel> {
        let cname = CString::new(name).map_err(|_| cuda_err("a kernel name with a NUL byte"))?;
        let mut module: CuModule = std::ptr::null_mut();
        // SAFETY: `cubin` is an ELF image in memory that outlives the call (the driver copies it).
        self.api.check(
            unsafe { (self.api.module_load)(&mut module, cubin.as_ptr().cast()) },
            || format!("loading kernel {name}'s cubin on {}", self.name),
        )?;
        let mut function: CuFunction = std::ptr::null_mut();
        // SAFETY: `module` is loaded; `cname` is NUL-terminated.
        let r = unsafe { (self.api.module_function)(&mut function, module, cname.as_ptr()) };
        let k = Kernel {
            api: self.api.clone(),
            module,
            function,
            name: name.to_string(),
        };
        self.api
            .check(r, || format!("finding kernel {name} in its cubin"))?;
        Ok(k)
    }

    /// Launches `k` with `geo` on global buffers `params` (in the kernel's parameter order), without
    /// waiting for it.
    pub fn launch(&self, k: &Kernel, geo: Geometry, params: &[&DeviceBuffer]) -> Result<()> {
        let shared = u32::try_from(geo.shared_bytes)
            .map_err(|_| cuda_err(format!("{} bytes of shared memory", geo.shared_bytes)))?;
        if geo.shared_bytes > DEFAULT_DYNAMIC_SHARED {
            // SAFETY: `function` is a live kernel; the attribute takes a byte count.
            self.api.check(
                unsafe {
                    (self.api.func_set_attr)(
                        k.function,
                        FUNC_ATTR_MAX_DYNAMIC_SHARED,
                        shared as c_int,
                    )
                },
                || {
                    format!(
                        "allowing kernel {} {shared} bytes of shared memory on {}",
                        k.name, self.name
                    )
                },
            )?;
        }
        let mut ptrs: Vec<CuPtr> = params.iter().map(|b| b.ptr).collect();
        let mut args: Vec<*mut c_void> =
            ptrs.iter_mut().map(|p| (p as *mut CuPtr).cast()).collect();
        // SAFETY: one pointer-sized argument per kernel parameter, each pointing at a live local; the
        // caller passes the kernel's own global buffers in order.
        let r = unsafe {
            (self.api.launch)(
                k.function,
                geo.grid,
                1,
                1,
                geo.threads,
                1,
                1,
                shared,
                std::ptr::null_mut(),
                args.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        };
        self.api.check(r, || {
            format!(
                "launching kernel {} ({} CTAs of {} threads, {shared} shared bytes)",
                k.name, geo.grid, geo.threads
            )
        })
    }

    /// Waits for all work; a kernel that faulted is named by `what`.
    pub fn sync(&self, what: &str) -> Result<()> {
        // SAFETY: no arguments.
        self.api.check(unsafe { (self.api.ctx_sync)() }, || {
            format!("{what} failed")
        })
    }

    /// Milliseconds `f` takes on the device, by events around it (on the default stream).
    pub fn time(&self, f: &mut dyn FnMut() -> Result<()>) -> Result<f32> {
        let a = Event::new(self)?;
        let b = Event::new(self)?;
        a.record()?;
        f()?;
        b.record()?;
        b.wait()?;
        let mut ms = 0f32;
        // SAFETY: both events are recorded and `b` has completed.
        self.api.check(
            unsafe { (self.api.event_elapsed)(&mut ms, a.0, b.0) },
            || "reading the elapsed time".into(),
        )?;
        Ok(ms)
    }

    /// Runs lowered program `p` (compiled to `cubin`) once, on global buffers holding `globals` (in the
    /// program's parameter order), and returns their contents afterwards: the device twin of the CPU
    /// interpreter's `run`.
    pub fn run(&self, p: &Program, cubin: &[u8], globals: Vec<Vec<u8>>) -> Result<Vec<Vec<u8>>> {
        let geo = geometry(p)?;
        let expected = global_sizes(p)?;
        if expected.len() != globals.len() {
            return Err(KernelError::Invalid(format!(
                "{} takes {} global buffers, {} were given",
                p.name,
                expected.len(),
                globals.len()
            )));
        }
        for ((name, bytes), g) in expected.iter().zip(&globals) {
            if g.len() as u64 != *bytes {
                return Err(KernelError::Invalid(format!(
                    "{}'s buffer {name} holds {bytes} bytes; {} were given",
                    p.name,
                    g.len()
                )));
            }
        }
        let k = self.load(cubin, &p.name)?;
        let bufs = globals
            .iter()
            .map(|g| self.upload(g))
            .collect::<Result<Vec<_>>>()?;
        let refs: Vec<&DeviceBuffer> = bufs.iter().collect();
        self.launch(&k, geo, &refs)?;
        self.sync(&format!("kernel {}", p.name))?;
        bufs.iter().map(|b| self.read(b, b.bytes)).collect()
    }
}

impl Drop for Gpu {
    fn drop(&mut self) {
        // SAFETY: the context was retained once in `open`.
        let _ = unsafe { (self.api.ctx_release)(self.device) };
    }
}

/// A CUDA event.
struct Event(CuEvent, Arc<Api>);

impl Event {
    fn new(gpu: &Gpu) -> Result<Event> {
        let mut e: CuEvent = std::ptr::null_mut();
        // SAFETY: out-pointer to a live local; flags 0 (timing enabled).
        gpu.api
            .check(unsafe { (gpu.api.event_create)(&mut e, 0) }, || {
                "creating an event".into()
            })?;
        Ok(Event(e, gpu.api.clone()))
    }
    fn record(&self) -> Result<()> {
        // SAFETY: a live event on the default stream.
        self.1.check(
            unsafe { (self.1.event_record)(self.0, std::ptr::null_mut()) },
            || "recording an event".into(),
        )
    }
    fn wait(&self) -> Result<()> {
        // SAFETY: a live, recorded event.
        self.1.check(unsafe { (self.1.event_sync)(self.0) }, || {
            "waiting for the GPU".into()
        })
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: destroyed once.
        let _ = unsafe { (self.1.event_destroy)(self.0) };
    }
}

/// The launch geometry of a lowered program (clusters of one CTA; larger clusters are refused).
pub fn geometry(p: &Program) -> Result<Geometry> {
    if p.launch.cluster > 1 {
        return Err(cuda_err(format!(
            "kernel {} asks for clusters of {} CTAs; the cuda backend launches clusters of one only",
            p.name, p.launch.cluster
        )));
    }
    Ok(Geometry {
        grid: p.launch.grid,
        threads: p.launch.threads,
        shared_bytes: p.shared_bytes,
    })
}

/// `(name, bytes)` of each global buffer, in parameter order.
pub fn global_sizes(p: &Program) -> Result<Vec<(String, u64)>> {
    p.buffers
        .iter()
        .filter(|b| b.space == crate::desc::Space::Global)
        .map(|b| Ok((b.name.clone(), b.bytes()?)))
        .collect()
}
