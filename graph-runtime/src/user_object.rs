//! Rust values owned by CUDA user objects: host-node closures and values a
//! graph must keep alive. The driver drops a reference when the last graph
//! or exec holding it is gone and its work is done; the destructor then runs
//! on a CUDA-internal thread, so what it drops must be `Send`, and nothing
//! may assume it has run when a synchronize returns.

use crate::error::{DriverResultExt, Result};
use crate::graph::{zeroed_params, Graph};
use crate::node::{Node, NodeKind};
use crate::result;
use cudarc::driver::sys;
use std::ffi::c_void;

/// Boxes `value` into a user object whose only reference moves into
/// `graph`'s root. Returns the boxed value's address (valid while any graph
/// or exec holds the object).
fn attach<T: Send + 'static>(graph: &mut Graph<'_>, value: T, label: &str) -> Result<*mut T> {
    unsafe extern "C" fn destroy<T>(ptr: *mut c_void) {
        // SAFETY: `ptr` came from Box::into_raw::<T> below and the driver
        // calls the destructor exactly once.
        drop(unsafe { Box::from_raw(ptr.cast::<T>()) });
    }
    let owner = graph.owner.clone();
    let _entered = owner.enter()?;
    let ptr = Box::into_raw(Box::new(value));
    graph.ctx.bind_to_thread().op_at("cuCtxSetCurrent", label)?;
    // SAFETY: `destroy::<T>` frees exactly this box, once, from any thread
    // (T: Send).
    let object = match unsafe { result::user_object_create(ptr.cast(), destroy::<T>) } {
        Ok(object) => object,
        Err(e) => {
            // SAFETY: the driver did not take the pointer; we still own it.
            drop(unsafe { Box::from_raw(ptr) });
            return Err(e).op_at("cuUserObjectCreate", label);
        }
    };
    // SAFETY: we own the object's one reference and move it to the root graph.
    if let Err(e) = unsafe { result::graph_take_user_object(graph.owner.raw, object) } {
        // SAFETY: the reference is still ours; releasing it runs `destroy`.
        let _ = unsafe { result::user_object_release(object) };
        return Err(e).op_at("cuGraphRetainUserObject", label);
    }
    graph.registry.user_objects.push(object as usize);
    Ok(ptr)
}

type HostFn = Box<dyn Fn() + Send + Sync>;

unsafe extern "C" fn call_host(data: *mut c_void) {
    // SAFETY: `data` points to the HostFn owned by a user object that the
    // graph or exec running this node holds.
    let f = unsafe { &*data.cast::<HostFn>() };
    // A panic must not unwind into the driver; it is reported on stderr.
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).is_err() {
        eprintln!("graph-runtime: a host node's closure panicked");
    }
}

impl Graph<'_> {
    /// Adds a host node that calls `f` on a CUDA thread when the graph runs.
    /// The closure lives exactly as long as any graph or exec that can call
    /// it. It must be `Sync`: two execs of one graph may call it at once.
    pub fn add_host(
        &mut self,
        label: &str,
        f: impl Fn() + Send + Sync + 'static,
        deps: &[Node],
    ) -> Result<Node> {
        let boxed: HostFn = Box::new(f);
        let data = attach(self, boxed, label)?;
        let mut params = zeroed_params(sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_HOST);
        params.__bindgen_anon_1.host = sys::CUDA_HOST_NODE_PARAMS_v2 {
            fn_: Some(call_host),
            userData: data.cast(),
        };
        self.add_raw(label, NodeKind::Host, deps, None, &[], &mut params)
    }

    /// Ties `value` to the life of this graph and every exec made from it:
    /// it is dropped (on a CUDA thread) after the last of them is gone and
    /// its work has finished.
    pub fn keep_alive<T: Send + 'static>(&mut self, value: T) -> Result<()> {
        attach(self, value, "keep_alive").map(|_| ())
    }
}
