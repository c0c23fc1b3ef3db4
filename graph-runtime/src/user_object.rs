//! Rust values owned by CUDA user objects: host-node closures and values a
//! graph must keep alive. The driver drops a reference when the last graph
//! or exec holding it is gone and its work is done; the destructor then runs
//! on a CUDA-internal thread, so what it drops must be `Send`, and nothing
//! may assume it has run when a synchronize returns.
//!
//! No CUDA call may be made on the driver's callback thread (NVIDIA: "The
//! host function must not make any CUDA API calls"), yet a kept value may
//! own a `CudaSlice` whose drop calls CUDA, and a host closure may call
//! anything. So neither runs there: the destructor hands the value to a
//! runtime-owned thread that drops it, and a host node's callback hands its
//! closure to another runtime-owned thread and waits for it to return. On
//! those threads CUDA calls are ordinary calls: defined, though a host
//! closure's call can deadlock (with the graph it waits on, or with another
//! thread destroying an exec), so host closures should do host work only.

use crate::error::{DriverResultExt, Result};
use crate::fault::HostFaults;
use crate::graph::{zeroed_params, Graph};
use crate::node::{Node, NodeKind};
use crate::result;
use cudarc::driver::sys;
use std::any::Any;
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{mpsc, Arc, Mutex, MutexGuard, OnceLock};

/// Boxes `value` into a user object whose only reference moves into
/// `graph`'s root. Returns the boxed value's address (valid while any graph
/// or exec holds the object).
fn attach<T: Send + 'static>(graph: &mut Graph<'_>, value: T, label: &str) -> Result<*mut T> {
    unsafe extern "C" fn destroy<T: Send + 'static>(ptr: *mut c_void) {
        // SAFETY: `ptr` came from Box::into_raw::<T> below and the driver
        // calls the destructor exactly once.
        let value: Box<T> = unsafe { Box::from_raw(ptr.cast::<T>()) };
        drop_elsewhere(value);
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

/// Drops `value` on the runtime's reaper thread, never on the caller's
/// (a driver callback thread). If that thread cannot be had, the value is
/// leaked rather than dropped here.
fn drop_elsewhere(value: Box<dyn Send>) {
    type Reaper = Mutex<mpsc::Sender<Box<dyn Send>>>;
    static REAPER: OnceLock<Option<Reaper>> = OnceLock::new();
    let reaper = REAPER.get_or_init(|| {
        let (send, receive) = mpsc::channel::<Box<dyn Send>>();
        std::thread::Builder::new()
            .name("graph-runtime-reaper".into())
            .spawn(move || {
                for value in receive {
                    // A panicking destructor must not end the thread.
                    let _ = catch_unwind(AssertUnwindSafe(move || drop(value)));
                }
            })
            .ok()
            .map(|_| Mutex::new(send))
    });
    let sender = reaper
        .as_ref()
        .map(|sender| sender.lock().unwrap_or_else(|e| e.into_inner()).clone());
    if let Some(Err(mpsc::SendError(value))) = sender.map(|s| s.send(value)) {
        std::mem::forget(value);
    }
}

type HostFn = Box<dyn Fn() + Send + Sync>;

/// A host node's closure, with what its callback needs to report a panic.
struct HostClosure {
    f: HostFn,
    label: String,
    faults: Arc<HostFaults>,
}

fn lock_ignoring_poison<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn panic_message(payload: &(dyn Any + Send)) -> String {
    match (
        payload.downcast_ref::<&str>(),
        payload.downcast_ref::<String>(),
    ) {
        (Some(s), _) => s.to_string(),
        (_, Some(s)) => s.clone(),
        _ => "a non-string panic payload".to_string(),
    }
}

/// A host node's call, handed to the host-node thread: the closure and
/// where to say it is done.
struct HostCall {
    closure: *const HostClosure,
    done: mpsc::SyncSender<()>,
}

// SAFETY: `closure` points to a `HostClosure` (Send + Sync) that the user
// object keeps alive until the node's work is done, and the callback waits
// for `done`.
unsafe impl Send for HostCall {}

/// Runs host-node closures, one at a time, off the driver's thread. A panic
/// is caught (it must not unwind into the driver) and kept for the exec.
fn host_thread() -> Option<&'static Mutex<mpsc::Sender<HostCall>>> {
    static HOST: OnceLock<Option<Mutex<mpsc::Sender<HostCall>>>> = OnceLock::new();
    HOST.get_or_init(|| {
        let (send, receive) = mpsc::channel::<HostCall>();
        std::thread::Builder::new()
            .name("graph-runtime-host-nodes".into())
            .spawn(move || {
                for call in receive {
                    // SAFETY: see HostCall: the closure is alive until the
                    // callback, which waits for our answer, returns.
                    let closure = unsafe { &*call.closure };
                    if let Err(payload) = catch_unwind(AssertUnwindSafe(&closure.f)) {
                        closure
                            .faults
                            .push(&closure.label, panic_message(payload.as_ref()));
                    }
                    let _ = call.done.send(());
                }
            })
            .ok()
            .map(|_| Mutex::new(send))
    })
    .as_ref()
}

unsafe extern "C" fn call_host(data: *mut c_void) {
    let (done, answer) = mpsc::sync_channel(1);
    let closure = data.cast::<HostClosure>().cast_const();
    let call = HostCall { closure, done };
    let sent = host_thread()
        .map(|h| lock_ignoring_poison(h).clone())
        .is_some_and(|sender| sender.send(call).is_ok());
    if !sent || answer.recv().is_err() {
        // SAFETY: as in HostCall; the closure is alive during the callback.
        let closure = unsafe { &*closure };
        closure.faults.push(
            &closure.label,
            "no thread to run the host node's closure on".to_string(),
        );
    }
}

/// Points the host node `raw` of `graph` at a new closure `f` (a clone's
/// host node taking the clone's own host memory): the closure is tied to
/// the graph's life as `add_host`'s are.
pub(crate) fn rebind_host_node(
    graph: &mut Graph<'_>,
    raw: sys::CUgraphNode,
    label: &str,
    f: Box<dyn Fn() + Send + Sync>,
) -> Result<()> {
    let faults = graph.registry.host_faults().clone();
    let closure = HostClosure {
        f,
        label: label.to_string(),
        faults,
    };
    let data = attach(graph, closure, label)?;
    let params = sys::CUDA_HOST_NODE_PARAMS {
        fn_: Some(call_host),
        userData: data.cast(),
    };
    graph.ctx.bind_to_thread().op_at("cuCtxSetCurrent", label)?;
    // SAFETY: `raw` is a live host node of the graph; the closure lives as
    // long as the graph and its execs (attached above).
    unsafe { crate::result::host_node_set_params(raw, &params) }
        .op_at("cuGraphHostNodeSetParams", label)
}

impl Graph<'_> {
    /// Adds a host node that calls `f` when the graph runs. The closure
    /// lives exactly as long as any graph or exec that can call it. It must
    /// be `Sync`: two execs of one graph may call it at once.
    ///
    /// It runs on a runtime-owned thread while the driver's callback waits
    /// for it, so a CUDA call in it is not undefined behaviour; but it can
    /// deadlock (a call that waits for this graph's own work never returns,
    /// and one was seen to deadlock with another thread's exec destruction),
    /// so a host closure should do host work only.
    ///
    /// A panic never unwinds into the driver: it is caught (the panic hook
    /// prints it as usual), the graph's work goes on, and the next
    /// [`Exec::launch`](crate::Exec::launch) or
    /// [`Exec::synchronize`](crate::Exec::synchronize) of an exec of this
    /// graph returns [`GraphError::HostPanicked`](crate::GraphError::HostPanicked) naming the node.
    ///
    /// # Errors
    /// As every node-adding method (see [`Graph`](crate::Graph#errors));
    /// [`GraphError::Driver`](crate::GraphError::Driver) when the driver cannot make the
    /// user object that owns the closure.
    pub fn add_host(
        &mut self,
        label: &str,
        f: impl Fn() + Send + Sync + 'static,
        deps: &[Node],
    ) -> Result<Node> {
        let faults = self.registry.host_faults().clone();
        let closure = HostClosure {
            f: Box::new(f),
            label: label.to_string(),
            faults,
        };
        let data = attach(self, closure, label)?;
        let mut params = zeroed_params(sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_HOST);
        // Other fields (newer bindings: a sync mode) stay zero, the default.
        params.__bindgen_anon_1.host.fn_ = Some(call_host);
        params.__bindgen_anon_1.host.userData = data.cast();
        self.add_raw(
            label.into(),
            NodeKind::Host,
            deps,
            None,
            &[],
            result::NodeParams::Generic(&mut params),
        )
    }

    /// Ties `value` to the life of this graph and every exec made from it:
    /// it is dropped (on a CUDA thread) after the last of them is gone and
    /// its work has finished.
    ///
    /// # Errors
    /// [`GraphError::Driver`](crate::GraphError::Driver) when the driver cannot make or
    /// attach the user object (then `value` is dropped);
    /// [`GraphError::Poisoned`](crate::GraphError::Poisoned).
    pub fn keep_alive<T: Send + 'static>(&mut self, value: T) -> Result<()> {
        attach(self, value, "keep_alive").map(|_| ())
    }
}
