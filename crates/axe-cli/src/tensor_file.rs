//! Tensor files: a `.npy` file (its header checked against the shape, big-endian data swapped,
//! Fortran order read as column-major) or raw bytes, checked against the size the shape needs before
//! anything of that size is allocated.

use std::io::{Read, Seek};

use axe_xla::ArrayShape;

/// Whether `a` is laid out row-major with nothing else that moves its bytes (see [`byte_layout`]).
pub fn is_row_major_dense(a: &ArrayShape) -> bool {
    byte_layout(a) == axe_xla::Layout::default_for_rank(a.rank())
}

/// `a`'s layout less the attributes that leave every byte where it was: the memory space `S(n)`, split
/// configs `SC(...)`, and an element size equal to the type's own slot (`E(8)` on pred, `E(32)` on
/// f32). Law: two shapes whose byte layouts are equal have the same bytes for the same tensor.
fn byte_layout(a: &ArrayShape) -> axe_xla::Layout {
    let mut l = a.layout.clone();
    l.memory_space = 0;
    l.split_configs.clear();
    if l.element_size_in_bits == i64::from(a.element_type.byte_width()) * 8 {
        l.element_size_in_bits = 0;
    }
    l
}

/// The layout of a Fortran-order `.npy` array: column-major (`{0,1,...}`), nothing else.
pub fn column_major(rank: usize) -> axe_xla::Layout {
    axe_xla::Layout::with_minor_to_major((0..rank as i64).collect::<Vec<i64>>())
}

/// The order a `.npy` file keeps `a` in: C (row-major), Fortran (column-major), or none (other layouts).
pub fn npy_order(a: &ArrayShape) -> Option<npyz::Order> {
    if is_row_major_dense(a) {
        Some(npyz::Order::C)
    } else if byte_layout(a) == column_major(a.rank()) {
        Some(npyz::Order::Fortran)
    } else {
        None
    }
}

/// An input file, opened and checked against the shape: its data starts at the reader's position.
pub struct Input {
    reader: Box<dyn Read>,
    /// Reverse each run of this many bytes after reading (big-endian `.npy` data); 0: none.
    swap: usize,
    /// Values of a signed sub-byte type in an int8 array, narrowed to their bits after reading.
    values: Option<Values>,
}

/// What narrowing an int8 array's values to a signed sub-byte type's bits takes, and what names an
/// element refused: the type, its bits, the array's dimensions and order.
struct Values {
    t: axe_xla::PrimitiveType,
    bits: u32,
    dims: Vec<u64>,
    fortran: bool,
}

impl Values {
    /// The index of the `at`-th element in the file's order (row-major, or column-major for Fortran).
    fn index(&self, mut at: u64) -> Vec<u64> {
        let mut index = vec![0; self.dims.len()];
        let order: Vec<usize> = if self.fortran {
            (0..self.dims.len()).collect()
        } else {
            (0..self.dims.len()).rev().collect()
        };
        for k in order {
            let d = self.dims[k].max(1);
            index[k] = at % d;
            at /= d;
        }
        index
    }
}

/// Whether `path` names a `.npy` file (the extension in any case: `x.NPY` too).
fn is_npy(path: &str) -> bool {
    std::path::Path::new(path)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("npy"))
}

/// Opens the input and checks its header and size against `src` (`need` bytes of data) before
/// anything of the tensor's size is allocated. A regular file's size is known now; a pipe's is checked
/// as it is read ([`read_tensor`]). A `.npy` file's header says its order: a Fortran-order array is
/// read as the column-major layout (`src` is changed to it; `--shape` may say row-major, the default, or
/// column-major).
pub fn open_input(path: &str, src: &mut ArrayShape, need: u64) -> Result<Input, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{path}: {e}"))?;
    let meta = file.metadata().map_err(|e| format!("{path}: {e}"))?;
    if meta.is_dir() {
        return Err(format!("{path} is a folder, not a tensor file"));
    }
    let size = meta.is_file().then_some(meta.len());
    if !is_npy(path) {
        if let Some(size) = size.filter(|&s| s != need) {
            return Err(format!("{path} has {size} bytes, {src} needs {need}"));
        }
        return Ok(Input {
            reader: Box::new(std::io::BufReader::with_capacity(1 << 20, file)),
            swap: 0,
            values: None,
        });
    }
    let npy = npyz::NpyFile::new(std::io::BufReader::new(file)).map_err(|e| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => {
            format!("{path}: the file ends inside its .npy header")
        }
        _ => format!("{path}: {e}"),
    })?;
    let order = npy.order();
    let fortran = order == npyz::Order::Fortran;
    let readable = is_row_major_dense(src) || (fortran && npy_order(src) == Some(order));
    if !readable {
        let kind = if fortran {
            "column-major (Fortran order)"
        } else {
            "row-major"
        };
        return Err(format!(
            "{path} holds a {kind} array, but it is to be read as {src}; a .npy file is read as a \
             row-major layout (C order) or a column-major one (Fortran order, `np.asfortranarray`); \
             give the bytes of other layouts raw (.bin)"
        ));
    }
    let asked = src.to_string();
    if fortran {
        // (The attributes that leave bytes alone, a memory space `S(1)`, stay.)
        src.layout.minor_to_major = column_major(src.rank()).minor_to_major;
    }
    let dims: Vec<u64> = axe_xla::static_dims(src)
        .map_err(|e| e.to_string())?
        .iter()
        .map(|&d| d as u64)
        .collect();
    if npy.shape() != dims.as_slice() {
        return Err(format!(
            "{path} has shape [{}], {asked} needs [{}]",
            join(npy.shape()),
            join(&dims)
        ));
    }
    let dtype = npy.header().dtype();
    let swap =
        crate::npy::byte_swap_unit(&dtype, src.element_type).map_err(|e| format!("{path} {e}"))?;
    let values = crate::npy::carries_values(&dtype, src.element_type).map(|bits| Values {
        t: src.element_type,
        bits,
        dims: dims.clone(),
        fortran,
    });
    let mut reader = npy.into_inner();
    if let Some(size) = size {
        let start = reader
            .stream_position()
            .map_err(|e| format!("{path}: {e}"))?;
        let data = size.saturating_sub(start);
        if data != need {
            return Err(format!(
                "{path} holds {data} bytes of data after its header, {src} needs {need}"
            ));
        }
    }
    Ok(Input {
        reader: Box::new(reader),
        swap,
        values,
    })
}

/// Reads the input's `need` bytes of data into a tensor buffer (huge pages, see
/// [`crate::file::tensor_buffer`]), refusing an input with fewer bytes or more.
pub fn read_tensor(input: Input, need: u64, path: &str) -> Result<memmap2::MmapMut, String> {
    let n = usize::try_from(need).map_err(|_| format!("{need} bytes do not fit in memory"))?;
    let mut data = crate::file::tensor_buffer(n)?;
    read_into(input, &mut data[..n], path)?;
    Ok(data)
}

/// Reads the input's data into `data`, which its length must fill exactly: an input with fewer bytes
/// or more is refused.
pub fn read_into(input: Input, data: &mut [u8], path: &str) -> Result<(), String> {
    let Input {
        mut reader,
        swap,
        values,
    } = input;
    let (n, need) = (data.len(), data.len());
    let mut got = 0;
    while got < n {
        match reader.read(&mut data[got..n]) {
            Ok(0) => {
                return Err(format!(
                    "{path} holds {got} bytes of data, the shape needs {need}"
                ))
            }
            Ok(k) => got += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(format!("{path}: {e}")),
        }
    }
    let mut more = [0u8; 1];
    loop {
        match reader.read(&mut more) {
            Ok(0) => break,
            Ok(_) => {
                return Err(format!(
                    "{path} holds more than the {need} bytes of data the shape needs"
                ))
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(format!("{path}: {e}")),
        }
    }
    crate::npy::swap_bytes(data, swap);
    if let Some(v) = values {
        crate::npy::narrow_values(data, v.bits).map_err(|(at, value)| {
            let (lo, hi) = (-(1i32 << (v.bits - 1)), (1i32 << (v.bits - 1)) - 1);
            format!(
                "{path}: element [{}] is {value}; {} elements in an int8 array are values, {lo}..{hi} \
                 (never wrapped; give their bits in a uint8 array to mean bits)",
                join(&v.index(at as u64)),
                v.t
            )
        })?;
    }
    Ok(())
}

/// The header of a `.npy` output, and what its data takes before it is written.
pub struct NpyHeader {
    /// The header's bytes.
    pub bytes: Vec<u8>,
    /// The bits of a signed sub-byte type, written as int8 values: its data is sign-extended.
    widen: Option<u32>,
}

impl NpyHeader {
    /// The tensor's bytes (its layout's, one element a byte for sub-byte types) as the `.npy` file's
    /// data: signed sub-byte elements sign-extended into their bytes, so that the int8 array the
    /// header names holds their values (see [`crate::npy::widen_values`]); other data as it is.
    pub fn finish(&self, data: &mut [u8]) {
        if let Some(bits) = self.widen {
            crate::npy::widen_values(data, bits);
        }
    }
}

/// The header of a `.npy` output (`None` for raw bytes), or an error if its layout or element type
/// has no `.npy` form: checked before any work is done. Its data must go through
/// [`NpyHeader::finish`].
pub fn npy_header(path: &str, dst_shape: Option<&ArrayShape>) -> Result<Option<NpyHeader>, String> {
    if !is_npy(path) {
        return Ok(None);
    }
    let (a, order) = dst_shape
        .and_then(|a| Some((a, npy_order(a)?)))
        .ok_or_else(|| {
            format!(
                "{path}: a .npy file holds a row-major or column-major array; write other layouts as raw bytes (.bin)"
            )
        })?;
    let descr = crate::npy::descr(a.element_type)
        .ok_or_else(|| format!("{path}: {} has no numpy dtype; use .bin", a.element_type))?;
    let dims: Vec<u64> = a
        .dims
        .iter()
        .map(|d| d.bound().unwrap_or(0) as u64)
        .collect();
    let mut header = Vec::new();
    use npyz::WriterBuilder;
    let dtype = npyz::DType::Plain(descr.parse().map_err(|e| format!("{descr}: {e}"))?);
    npyz::WriteOptions::new_header_only()
        .dtype(dtype)
        .order(order)
        .shape(&dims)
        .writer(&mut header)
        .write_header_only()
        .map_err(|e| e.to_string())?;
    Ok(Some(NpyHeader {
        bytes: header,
        widen: crate::npy::signed_sub_byte(a.element_type),
    }))
}

fn join<T: ToString>(v: &[T]) -> String {
    v.iter().map(T::to_string).collect::<Vec<_>>().join(",")
}
