//! Loading kernel code: NVRTC compilation for the current device and the
//! per-process module and kernel caches.

use super::*;
use std::sync::OnceLock;

/// 64-bit FNV-1a: a cheap content hash for the module cache key.
fn fnv1a(bytes: &[u8]) -> usize {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        hash = (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash as usize
}

/// What a module was loaded from: a context, the kind of source and its
/// bytes. Two keys are equal only if the bytes are: a hash alone (FNV-1a
/// collisions are cheap to make) would let two different sources share a
/// module, and a declaration run another's kernel of the same name with its
/// own, unchecked, parameter types.
#[derive(Clone, Copy, PartialEq, Eq)]
struct ModuleKey {
    ctx: usize,
    kind: u8,
    /// A cheap first test before the bytes are compared.
    hash: usize,
    bytes: &'static [u8],
}

impl ModuleKey {
    fn new(source: Source, ctx: &CudaContext) -> Self {
        let (kind, bytes) = match source {
            Source::CudaC(s) => (0, s.as_bytes()),
            Source::Ptx(s) => (1, s.as_bytes()),
            Source::Cubin(b) => (2, b),
        };
        ModuleKey {
            ctx: ctx.cu_ctx() as usize,
            kind,
            hash: fnv1a(bytes),
            bytes,
        }
    }
}

/// The entry of `cache` for `key`, if any.
fn lookup<'c, M>(cache: &'c [(ModuleKey, M)], key: &ModuleKey) -> Option<&'c M> {
    cache.iter().find(|(k, _)| k == key).map(|(_, m)| m)
}

/// Modules loaded so far. Held for the life of the process, so each source
/// is compiled and loaded once per context.
type ModuleCache = Vec<(ModuleKey, Arc<CudaModule>)>;
static MODULES: Mutex<ModuleCache> = Mutex::new(Vec::new());

pub(super) fn cached_module(
    source: Source,
    name: &str,
    ctx: &Arc<CudaContext>,
) -> Result<Arc<CudaModule>> {
    // Keyed by content: a `const` declaration may hand out copies of its text.
    let key = ModuleKey::new(source, ctx);
    // A poisoned lock only means another thread panicked while compiling;
    // the cache itself is a plain Vec and stays consistent.
    let mut cache = MODULES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(module) = lookup(&cache, &key) {
        return Ok(module.clone());
    }
    let ptx = match source {
        Source::CudaC(src) => compile(src, name, ctx)?,
        Source::Ptx(text) => cudarc::nvrtc::Ptx::from_src(text),
        Source::Cubin(image) => cudarc::nvrtc::Ptx::from_binary(image.to_vec()),
    };
    let module = ctx.load_module(ptx).op_at("cuModuleLoadData", name)?;
    cache.push((key, module.clone()));
    Ok(module)
}

/// The kernels a declaration has loaded, one per context, for the life of
/// the process (each keeps its context alive, so no other context takes
/// its key). The first context's is read without a lock: a build takes
/// its kernels from here, and most programs use one device. Used by
/// `declare_kernel!`'s expansion; not part of the API.
#[doc(hidden)]
#[derive(Debug)]
pub struct LoadedKernels<A: 'static> {
    first: OnceLock<(usize, Kernel<A>)>,
    /// Other contexts' (leaked, as the first is held by the static).
    /// Every load (a first use in a context) takes this lock, so each
    /// kernel loads once per context.
    others: Mutex<Vec<(usize, &'static Kernel<A>)>>,
}

impl<A: 'static> LoadedKernels<A> {
    pub const fn new() -> Self {
        LoadedKernels {
            first: OnceLock::new(),
            others: Mutex::new(Vec::new()),
        }
    }

    /// The kernel for `ctx`, loading it on first use.
    ///
    /// # Errors
    /// As [`KernelDecl::load`](crate::KernelDecl::load).
    #[inline]
    pub fn get_or_load(
        &'static self,
        ctx: &Arc<CudaContext>,
        decl: &KernelDecl<A>,
    ) -> Result<&'static Kernel<A>> {
        let key = ctx.cu_ctx() as usize;
        match self.first.get() {
            Some((first, kernel)) if *first == key => Ok(kernel),
            _ => self.load(key, ctx, decl),
        }
    }

    #[cold]
    fn load(
        &'static self,
        key: usize,
        ctx: &Arc<CudaContext>,
        decl: &KernelDecl<A>,
    ) -> Result<&'static Kernel<A>> {
        // A poisoned lock only means another thread panicked while loading;
        // the list stays consistent.
        let mut others = self.others.lock().unwrap_or_else(|e| e.into_inner());
        match self.first.get() {
            // Set only under this lock: no other thread sets it meanwhile.
            None => {
                let kernel = decl.load(ctx)?;
                return Ok(&self.first.get_or_init(|| (key, kernel)).1);
            }
            Some((first, kernel)) if *first == key => return Ok(kernel),
            Some(_) => {}
        }
        if let Some(&(_, kernel)) = others.iter().find(|(k, _)| *k == key) {
            return Ok(kernel);
        }
        let kernel: &'static Kernel<A> = Box::leak(Box::new(decl.load(ctx)?));
        others.push((key, kernel));
        Ok(kernel)
    }
}

impl<A: 'static> Default for LoadedKernels<A> {
    fn default() -> Self {
        Self::new()
    }
}

fn compile(src: &str, name: &str, ctx: &Arc<CudaContext>) -> Result<cudarc::nvrtc::Ptx> {
    crate::driver::require_nvrtc()?;
    let (major, minor) = ctx.compute_capability().op("cuDeviceGetAttribute")?;
    let options = cudarc::nvrtc::CompileOptions {
        arch: Some(arch_name(major, minor)),
        ..Default::default()
    };
    // The prelude first; `#line 1` keeps NVRTC's line numbers those of
    // the user's source.
    let src = format!("{DEVICE_PRELUDE}#line 1\n{src}");
    cudarc::nvrtc::compile_ptx_with_opts(src, options).map_err(|e| {
        let (reason, log) = match e {
            cudarc::nvrtc::CompileError::CompileError { nvrtc, log, .. } => {
                (format!("{nvrtc:?}"), log.to_string_lossy().into_owned())
            }
            other => (format!("{other:?}"), String::new()),
        };
        GraphError::Compile {
            kernel: name.to_string(),
            reason,
            log,
        }
    })
}

/// NVRTC's `--gpu-architecture` value for a compute capability. cudarc wants
/// a `&'static str`; the few distinct names are leaked once each.
pub(super) fn arch_name(major: i32, minor: i32) -> &'static str {
    static NAMES: Mutex<Vec<(i32, i32, &'static str)>> = Mutex::new(Vec::new());
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&(_, _, name)) = names.iter().find(|(a, b, _)| (*a, *b) == (major, minor)) {
        return name;
    }
    let name: &'static str = Box::leak(format!("compute_{major}{minor}").into_boxed_str());
    names.push((major, minor, name));
    name
}

#[cfg(test)]
mod tests {
    use super::{lookup, ModuleKey};

    fn key(kind: u8, hash: usize, bytes: &'static [u8]) -> ModuleKey {
        ModuleKey {
            ctx: 1,
            kind,
            hash,
            bytes,
        }
    }

    /// Sources with one hash (as a collision would give) but other bytes,
    /// or one text as another kind, do not share a module.
    #[test]
    fn the_cache_compares_sources_in_full() {
        let cache = vec![(key(0, 7, b"float k"), 1u32)];
        assert_eq!(lookup(&cache, &key(0, 7, b"float k")), Some(&1));
        assert_eq!(lookup(&cache, &key(0, 7, b"bytes k")), None);
        assert_eq!(lookup(&cache, &key(1, 7, b"float k")), None);
        let other_ctx = ModuleKey {
            ctx: 2,
            ..key(0, 7, b"float k")
        };
        assert_eq!(lookup(&cache, &other_ctx), None);
    }
}
