//! Running lowered kernels on an NVIDIA GPU through the CUDA driver API, found at run time.
//!
//! Nothing of CUDA is needed to build: `libcuda.so.1` (the driver, `$AXE_LIBCUDA` to override) is loaded
//! with `dlopen` when a [`Gpu`] is opened. A [`Gpu`] holds the device's primary context; [`DeviceBuffer`]s
//! free themselves; [`Gpu::run`] is the device twin of the CPU interpreter's [`crate::run`]: the same
//! global buffers in, the same buffers out. Every driver error becomes a [`KernelError::Cuda`] that says
//! what was being done (the kernel's name for launches) and the driver's own name for the error.
#![allow(unsafe_code)] // dlopen and the CUDA driver's C API; every call's arguments are checked here.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::Arc;

use crate::error::{KernelError, Result};
use crate::ir::{Program, TensorMap};

mod driver;
use driver::*;

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
    /// Tensor maps the kernel takes after its buffers ([`Gpu::tensor_maps`] encodes them).
    pub tensor_maps: usize,
}

/// An encoded TMA tensor map (`CUtensorMap`: 128 opaque bytes, 64-byte aligned), passed by value.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub struct EncodedMap([u64; 16]);

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

    /// Encodes program `p`'s tensor maps over its global buffers `params` (in parameter order).
    pub fn tensor_maps(&self, p: &Program, params: &[&DeviceBuffer]) -> Result<Vec<EncodedMap>> {
        let globals: Vec<usize> = p
            .buffers
            .iter()
            .enumerate()
            .filter(|(_, b)| b.space == crate::desc::Space::Global)
            .map(|(i, _)| i)
            .collect();
        p.tensor_maps
            .iter()
            .map(|m| {
                let at = globals.iter().position(|&g| g == m.buf);
                let buf = at.and_then(|i| params.get(i)).ok_or_else(|| {
                    cuda_err(format!(
                        "{}: a tensor map names a buffer that is not a parameter",
                        p.name
                    ))
                })?;
                self.encode(m, buf, &p.name)
            })
            .collect()
    }

    fn encode(&self, m: &TensorMap, buf: &DeviceBuffer, kernel: &str) -> Result<EncodedMap> {
        let f = self.api.encode_tiled.ok_or_else(|| {
            cuda_err(format!(
                "kernel {kernel} copies with the tensor memory accelerator, but this driver has no cuTensorMapEncodeTiled (CUDA 12 or newer is needed)"
            ))
        })?;
        let dtype = match m.elem_bytes {
            1 => 0,
            2 => 1,
            4 => 2,
            _ => 4,
        };
        let swizzle = match m.swizzle {
            None => 0,
            Some(crate::desc::Swizzle::B32) => 1,
            Some(crate::desc::Swizzle::B64) => 2,
            Some(crate::desc::Swizzle::B128) => 3,
        };
        let rank = m.dims.len();
        let need: u64 = m.dims.iter().product::<u64>() * u64::from(m.elem_bytes);
        if need > buf.bytes || rank == 0 || rank > 5 || m.box_dims.len() != rank {
            return Err(cuda_err(format!(
                "kernel {kernel}: a tensor map of {:?} elements does not fit its {}-byte buffer",
                m.dims, buf.bytes
            )));
        }
        // Strides in bytes of dims 1.. (dense, row-major).
        let mut strides = Vec::with_capacity(rank - 1);
        let mut s = u64::from(m.elem_bytes);
        for d in &m.dims[..rank - 1] {
            s *= d;
            strides.push(s);
        }
        let ones = vec![1u32; rank];
        let mut out = EncodedMap([0; 16]);
        // SAFETY: every pointer is to a live local of the length the rank says; the device address is
        // a live allocation of at least the map's bytes (checked above).
        let r = unsafe {
            f(
                (&mut out as *mut EncodedMap).cast(),
                dtype,
                rank as u32,
                buf.ptr as *mut c_void,
                m.dims.as_ptr(),
                strides.as_ptr(),
                m.box_dims.as_ptr(),
                ones.as_ptr(),
                0,
                swizzle,
                3,
                0,
            )
        };
        self.api.check(r, || {
            format!(
                "encoding a tensor map ({:?} elements of {} bytes, box {:?}) for kernel {kernel}",
                m.dims, m.elem_bytes, m.box_dims
            )
        })?;
        Ok(out)
    }

    /// Launches `k` with `geo` on global buffers `params` (in the kernel's parameter order), without
    /// waiting for it. A kernel that takes tensor maps is launched by [`Gpu::launch_mapped`].
    pub fn launch(&self, k: &Kernel, geo: Geometry, params: &[&DeviceBuffer]) -> Result<()> {
        self.launch_mapped(k, geo, params, &[])
    }

    /// [`Gpu::launch`] with the kernel's encoded tensor maps ([`Gpu::tensor_maps`]).
    pub fn launch_mapped(
        &self,
        k: &Kernel,
        geo: Geometry,
        params: &[&DeviceBuffer],
        maps: &[EncodedMap],
    ) -> Result<()> {
        if maps.len() != geo.tensor_maps {
            return Err(cuda_err(format!(
                "kernel {} takes {} tensor maps; {} were given",
                k.name,
                geo.tensor_maps,
                maps.len()
            )));
        }
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
        let mut maps = maps.to_vec();
        let mut args: Vec<*mut c_void> =
            ptrs.iter_mut().map(|p| (p as *mut CuPtr).cast()).collect();
        args.extend(
            maps.iter_mut()
                .map(|m| (m as *mut EncodedMap).cast::<c_void>()),
        );
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
        let maps = self.tensor_maps(p, &refs)?;
        self.launch_mapped(&k, geo, &refs, &maps)?;
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
        tensor_maps: p.tensor_maps.len(),
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
