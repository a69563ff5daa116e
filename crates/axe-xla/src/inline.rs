//! [`InlineVec`]: a vector that keeps its first `N` elements inline, so the lists of a shape (dimensions,
//! `minor_to_major`, tiles) cost no heap allocation at the ranks XLA programs use.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::{Deref, DerefMut};

/// A vector of `T` holding up to `N` elements inline and spilling to the heap past that.
///
/// It behaves as a `Vec<T>` through [`Deref`] to `[T]` (indexing, `iter`, `len`, `first`, ...), `push`,
/// `truncate`, `clear`, collecting and conversion from a `Vec` or a slice; equality, hashing, ordering and
/// `Debug` are those of the slice, so `InlineVec::from(v) == v` and both print alike.
#[derive(Clone)]
pub struct InlineVec<T, const N: usize> {
    repr: Repr<T, N>,
}

#[derive(Clone)]
enum Repr<T, const N: usize> {
    Inline { len: usize, buf: [T; N] },
    Heap(Vec<T>),
}

impl<T: Default, const N: usize> InlineVec<T, N> {
    /// An empty vector (no allocation).
    pub fn new() -> Self {
        InlineVec {
            repr: Repr::Inline {
                len: 0,
                buf: std::array::from_fn(|_| T::default()),
            },
        }
    }

    /// The first `len` elements of `buf` (all `N` when `len > N`); the rest of `buf` stays as filler.
    #[inline]
    pub(crate) fn from_prefix(buf: [T; N], len: usize) -> Self {
        InlineVec {
            repr: Repr::Inline {
                len: len.min(N),
                buf,
            },
        }
    }

    /// Appends an element, moving to the heap when the inline room is full.
    #[inline]
    pub fn push(&mut self, value: T) {
        if let Repr::Inline { len, buf } = &mut self.repr {
            if let Some(slot) = buf.get_mut(*len) {
                *slot = value;
                *len += 1;
                return;
            }
        }
        self.push_spilling(value);
    }

    #[cold]
    fn push_spilling(&mut self, value: T) {
        match &mut self.repr {
            Repr::Inline { len, buf } => {
                let mut v = Vec::with_capacity(2 * N + 1);
                v.extend(buf.iter_mut().take(*len).map(std::mem::take));
                v.push(value);
                self.repr = Repr::Heap(v);
            }
            Repr::Heap(v) => v.push(value),
        }
    }

    /// Removes and returns the last element.
    pub fn pop(&mut self) -> Option<T> {
        match &mut self.repr {
            Repr::Inline { len, buf } => {
                if *len == 0 {
                    return None;
                }
                *len -= 1;
                Some(std::mem::take(&mut buf[*len]))
            }
            Repr::Heap(v) => v.pop(),
        }
    }

    /// Keeps the first `n` elements (no-op when there are fewer).
    pub fn truncate(&mut self, n: usize) {
        match &mut self.repr {
            Repr::Inline { len, buf } => {
                while *len > n {
                    *len -= 1;
                    buf[*len] = T::default();
                }
            }
            Repr::Heap(v) => v.truncate(n),
        }
    }

    /// Removes every element.
    pub fn clear(&mut self) {
        self.truncate(0);
    }

    /// The elements as a `Vec`.
    pub fn into_vec(self) -> Vec<T> {
        match self.repr {
            Repr::Inline { len, buf } => buf.into_iter().take(len).collect(),
            Repr::Heap(v) => v,
        }
    }

    /// Whether the elements live on the heap (more than `N` of them were pushed).
    pub fn spilled(&self) -> bool {
        matches!(self.repr, Repr::Heap(_))
    }
}

impl<T, const N: usize> Deref for InlineVec<T, N> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        match &self.repr {
            Repr::Inline { len, buf } => &buf[..*len],
            Repr::Heap(v) => v,
        }
    }
}

impl<T, const N: usize> DerefMut for InlineVec<T, N> {
    fn deref_mut(&mut self) -> &mut [T] {
        match &mut self.repr {
            Repr::Inline { len, buf } => &mut buf[..*len],
            Repr::Heap(v) => v,
        }
    }
}

impl<T: Default, const N: usize> Default for InlineVec<T, N> {
    fn default() -> Self {
        InlineVec::new()
    }
}

impl<T: fmt::Debug, const N: usize> fmt::Debug for InlineVec<T, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: PartialEq, const N: usize> PartialEq for InlineVec<T, N> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl<T: Eq, const N: usize> Eq for InlineVec<T, N> {}

impl<T: PartialEq, const N: usize> PartialEq<Vec<T>> for InlineVec<T, N> {
    fn eq(&self, other: &Vec<T>) -> bool {
        **self == **other
    }
}

impl<T: PartialEq, const N: usize> PartialEq<InlineVec<T, N>> for Vec<T> {
    fn eq(&self, other: &InlineVec<T, N>) -> bool {
        **self == **other
    }
}

impl<T: PartialEq, const N: usize> PartialEq<[T]> for InlineVec<T, N> {
    fn eq(&self, other: &[T]) -> bool {
        **self == *other
    }
}

impl<T: PartialEq, const N: usize> PartialEq<&[T]> for InlineVec<T, N> {
    fn eq(&self, other: &&[T]) -> bool {
        **self == **other
    }
}

impl<T: PartialEq, const N: usize, const M: usize> PartialEq<[T; M]> for InlineVec<T, N> {
    fn eq(&self, other: &[T; M]) -> bool {
        **self == other[..]
    }
}

impl<T: Hash, const N: usize> Hash for InlineVec<T, N> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (**self).hash(state)
    }
}

impl<T: PartialOrd, const N: usize> PartialOrd for InlineVec<T, N> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        (**self).partial_cmp(&**other)
    }
}

impl<T: Ord, const N: usize> Ord for InlineVec<T, N> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (**self).cmp(&**other)
    }
}

impl<T: Default, const N: usize> Extend<T> for InlineVec<T, N> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        for x in iter {
            self.push(x);
        }
    }
}

impl<T: Default, const N: usize> FromIterator<T> for InlineVec<T, N> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut v = InlineVec::new();
        v.extend(iter);
        v
    }
}

impl<T: Default, const N: usize> From<Vec<T>> for InlineVec<T, N> {
    fn from(v: Vec<T>) -> Self {
        if v.len() > N {
            InlineVec {
                repr: Repr::Heap(v),
            }
        } else {
            v.into_iter().collect()
        }
    }
}

impl<T: Default + Clone, const N: usize> From<&[T]> for InlineVec<T, N> {
    fn from(v: &[T]) -> Self {
        v.iter().cloned().collect()
    }
}

impl<T: Default, const N: usize, const M: usize> From<[T; M]> for InlineVec<T, N> {
    fn from(v: [T; M]) -> Self {
        v.into_iter().collect()
    }
}

impl<T: Default, const N: usize> From<InlineVec<T, N>> for Vec<T> {
    fn from(v: InlineVec<T, N>) -> Self {
        v.into_vec()
    }
}

impl<T: Default, const N: usize> IntoIterator for InlineVec<T, N> {
    type Item = T;
    type IntoIter = std::vec::IntoIter<T>;
    fn into_iter(self) -> Self::IntoIter {
        self.into_vec().into_iter()
    }
}

impl<'a, T, const N: usize> IntoIterator for &'a InlineVec<T, N> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<'a, T, const N: usize> IntoIterator for &'a mut InlineVec<T, N> {
    type Item = &'a mut T;
    type IntoIter = std::slice::IterMut<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter_mut()
    }
}
