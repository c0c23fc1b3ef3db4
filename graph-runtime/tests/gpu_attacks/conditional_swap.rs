//! Class 3: conditional bodies swapped out while they are built.
//!
//! A body builder gets `&mut Graph`, the body, which holds its root's node
//! records while it is built. `mem::swap` or `mem::replace` on that
//! reference moves the records (and the body's identity) into a graph the
//! user keeps, and puts a foreign graph where the body was. The runtime must
//! then refuse everything: the `add_if`/`add_while` call returns
//! `GraphError::Poisoned`, and so does every later call on the parent graph
//! and on the escaped body. Swapping the body out and back in before the
//! builder returns changes nothing and is fine.

use crate::common::{gpu, sync};
use crate::expect_poisoned;
use graph_runtime::kernel::KernelDef;
use graph_runtime::{Graph, GraphError, LaunchConfig};
use std::panic::{catch_unwind, AssertUnwindSafe};

fn one() -> LaunchConfig {
    LaunchConfig::new(1, 1)
}

/// Attack: inside an `add_if` body builder, `mem::swap(body, &mut other)`
/// with a fresh `Graph::new` (after adding a node to the real body).
///
/// Must happen: `add_if` returns `Poisoned`; afterwards the parent refuses
/// `add_empty`, `add_kernel`, `cond_handle`, `add_host`, `keep_alive`,
/// `dot`, `try_clone` and `instantiate` with `Poisoned`; the escaped body
/// (now in `other`) refuses `add_empty`, `add_kernel` and `cond_handle` with
/// `Poisoned`, and cannot be instantiated or made a child graph. An exec made
/// before the attack keeps working (its own snapshot of the records), and
/// a healthy graph cannot take the poisoned one as a child.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn swapping_an_if_body_out_poisons_the_graph_and_the_escaped_body() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let mark = kernels::Mark::load(&ctx).unwrap();
    let mut visits = stream.alloc_zeros::<i32>(3).unwrap();
    {
        let mut g = Graph::new(&ctx).unwrap();
        let v = g.bind_mut(&mut visits);
        let first = g.add_kernel("first", &mark, one(), (v, 0), &[]).unwrap();
        let mut before = g.instantiate().unwrap();
        let h = g.cond_handle(Some(1)).unwrap();
        let mut other = Graph::new(&ctx).unwrap();
        let result = g.add_if("swapped", h, &[first.node()], |body| {
            body.add_kernel("inside", &mark, one(), (v, 2), &[])?;
            std::mem::swap(body, &mut other);
            Ok(())
        });
        expect_poisoned(result);

        // The parent refuses everything.
        expect_poisoned(g.add_empty("after", &[]));
        expect_poisoned(g.add_empty("after_first", &[first.node()]));
        expect_poisoned(g.add_kernel("after_kernel", &mark, one(), (v, 1), &[]));
        expect_poisoned(g.cond_handle(None));
        expect_poisoned(g.add_host("host", || {}, &[]));
        expect_poisoned(g.keep_alive(7u32));
        expect_poisoned(g.dot());
        expect_poisoned(g.try_clone());
        expect_poisoned(g.instantiate());

        // So does the escaped body, now in `other`.
        expect_poisoned(other.add_empty("escaped", &[]));
        expect_poisoned(other.add_kernel("escaped_kernel", &mark, one(), (v, 1), &[]));
        expect_poisoned(other.cond_handle(None));
        assert!(other.instantiate().is_err(), "an escaped body ran alone");
        let mut healthy = Graph::new(&ctx).unwrap();
        assert!(
            healthy.add_child("escaped_child", other, &[]).is_err(),
            "an escaped body became a child graph"
        );
        let err = healthy.add_child("poisoned_child", g, &[]).unwrap_err();
        eprintln!("a poisoned graph as a child graph: {err}");

        // An exec made before keeps working, per-node updates included.
        before.launch(&stream).unwrap();
        before.set_kernel_args(&first, (v, 1)).unwrap();
        before.launch(&stream).unwrap();
        sync(&stream);
    }
    assert_eq!(stream.clone_dtoh(&visits).unwrap(), [1, 1, 0]);
}

/// Attack: inside an `add_while` body builder, `mem::replace` the body with
/// a fresh graph and keep the real one; and, on another graph, swap the body
/// out and then panic (caught with `catch_unwind`).
///
/// Must happen: `add_while` returns `Poisoned`, the parent and the kept body
/// refuse later calls with `Poisoned`; after the panic, that graph and its
/// escaped body are poisoned too. Nothing was launched: the buffer stays 0.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn replacing_a_while_body_or_panicking_after_a_swap_poisons() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let (countdown, mark) = (
        kernels::CountdownStep::load(&ctx).unwrap(),
        kernels::Mark::load(&ctx).unwrap(),
    );
    let mut counter = stream.clone_htod(&[0i32]).unwrap();
    {
        let mut g = Graph::new(&ctx).unwrap();
        let c = g.bind_mut(&mut counter);
        let h = g.cond_handle(Some(1)).unwrap();
        let mut kept: Option<Graph<'_>> = None;
        let result = g.add_while("loop", h, &[], |body| {
            body.add_kernel("step", &countdown, one(), (h, c), &[])?;
            let fresh = Graph::new(body.context())?;
            kept = Some(std::mem::replace(body, fresh));
            Ok(())
        });
        expect_poisoned(result);
        expect_poisoned(g.add_empty("after", &[]));
        expect_poisoned(g.instantiate());
        let mut kept = kept.unwrap();
        expect_poisoned(kept.add_empty("escaped", &[]));
        expect_poisoned(kept.add_kernel("escaped_mark", &mark, one(), (c, 0), &[]));
        expect_poisoned(kept.cond_handle(None));
        // A second setter of the loop's handle is refused too (by the setter
        // ordering check, which runs before the poison check).
        assert!(kept
            .add_kernel("escaped_step", &countdown, one(), (h, c), &[])
            .is_err());

        let mut g2 = Graph::new(&ctx).unwrap();
        let h2 = g2.cond_handle(Some(1)).unwrap();
        let mut other = Graph::new(&ctx).unwrap();
        let caught = catch_unwind(AssertUnwindSafe(|| {
            let _ = g2.add_if("panics", h2, &[], |body| {
                std::mem::swap(body, &mut other);
                panic!("a builder panicked after swapping its body out")
            });
        }));
        assert!(caught.is_err());
        expect_poisoned(g2.add_empty("after", &[]));
        expect_poisoned(g2.instantiate());
        expect_poisoned(other.add_empty("escaped", &[]));
    }
    sync(&stream);
    assert_eq!(stream.clone_dtoh(&counter).unwrap(), [0]);
}

/// Attack: swap the bodies of two different graphs. Graph Y's IF body is
/// built inside graph X's IF body builder, and its builder swaps the two
/// bodies: first with nested closures, then with Y's body built on another
/// thread (`std::thread::scope`; `Graph` is `Send`). (Swapping two bodies of
/// one graph does not compile: the parent is borrowed by the outer builder
/// while the inner one runs, and body references cannot outlive their
/// builder call.)
///
/// Must happen: both `add_if` calls return `Poisoned` (the inner one as
/// well), and both graphs refuse every later call, instantiation included.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn swapping_the_bodies_of_two_graphs_poisons_both() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let mark = kernels::Mark::load(&ctx).unwrap();
    let mut visits = stream.alloc_zeros::<i32>(2).unwrap();
    {
        let mut x = Graph::new(&ctx).unwrap();
        let v = x.bind_mut(&mut visits);
        let mut y = x.new_sharing().unwrap();
        let (hx, hy) = (
            x.cond_handle(Some(1)).unwrap(),
            y.cond_handle(Some(1)).unwrap(),
        );
        let mut inner = None;
        let outer = x.add_if("x_if", hx, &[], |x_body| {
            x_body.add_kernel("x_inside", &mark, one(), (v, 0), &[])?;
            let result = y.add_if("y_if", hy, &[], |y_body| {
                y_body.add_kernel("y_inside", &mark, one(), (v, 1), &[])?;
                std::mem::swap(x_body, y_body);
                Ok(())
            });
            inner = Some(format!("{result:?}"));
            result.map(drop)
        });
        expect_poisoned(outer);
        assert_eq!(inner.as_deref(), Some("Err(Poisoned)"));
        for graph in [&mut x, &mut y] {
            expect_poisoned(graph.add_empty("after", &[]));
            expect_poisoned(graph.cond_handle(None));
            expect_poisoned(graph.instantiate());
        }

        // The same, with Y's body built on another thread.
        let mut x = Graph::new(&ctx).unwrap();
        let mut y = Graph::new(&ctx).unwrap();
        let (hx, hy) = (
            x.cond_handle(Some(1)).unwrap(),
            y.cond_handle(Some(1)).unwrap(),
        );
        let outer = x.add_if("x_if", hx, &[], |x_body| {
            let y = &mut y;
            std::thread::scope(|s| {
                s.spawn(move || {
                    y.add_if("y_if", hy, &[], |y_body| {
                        std::mem::swap(x_body, y_body);
                        Ok(())
                    })
                })
                .join()
                .expect("the builder thread")
            })
            .map(drop)
        });
        expect_poisoned(outer);
        expect_poisoned(x.add_empty("after", &[]));
        expect_poisoned(y.add_empty("after", &[]));
        expect_poisoned(x.instantiate());
        expect_poisoned(y.instantiate());
    }
    sync(&stream);
    assert_eq!(stream.clone_dtoh(&visits).unwrap(), [0, 0]);
}

/// Not an attack that must fail: swap the body out, build through the
/// escaped body while it is out (and through the fresh graph that stands in
/// for it), then swap it back before the builder returns.
///
/// Must happen: the graph is not poisoned; the body holds exactly the nodes
/// built through the real body; the stand-in is an ordinary healthy graph
/// afterwards; the launch runs `first` once and both body nodes once.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn swapping_a_body_out_and_back_is_harmless() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let mark = kernels::Mark::load(&ctx).unwrap();
    let mut visits = stream.alloc_zeros::<i32>(3).unwrap();
    {
        let mut g = Graph::new(&ctx).unwrap();
        let v = g.bind_mut(&mut visits);
        let first = g.add_kernel("first", &mark, one(), (v, 0), &[]).unwrap();
        let h = g.cond_handle(Some(1)).unwrap();
        let mut stand_in = Graph::new(&ctx).unwrap();
        g.add_if("swap_back", h, &[first.node()], |body| {
            std::mem::swap(body, &mut stand_in);
            // `stand_in` is the real body now, `body` the stand-in.
            let then = stand_in.add_kernel("then", &mark, one(), (v, 1), &[])?;
            body.add_empty("on_the_stand_in", &[])?;
            std::mem::swap(body, &mut stand_in);
            body.add_kernel("then_again", &mark, one(), (v, 1), &[then.node()])?;
            Ok(())
        })
        .unwrap();
        assert_eq!(
            g.labels(),
            ["first", "swap_back", "then", "then_again"],
            "the body holds what was built through the real body"
        );
        assert_eq!(stand_in.labels(), ["on_the_stand_in"]);
        stand_in.add_empty("still_healthy", &[]).unwrap();
        stand_in.instantiate().unwrap();
        g.instantiate().unwrap().launch(&stream).unwrap();
        sync(&stream);
    }
    assert_eq!(stream.clone_dtoh(&visits).unwrap(), [1, 2, 0]);
}

/// `Poisoned` is a variant of its own, with a message that says what happened.
#[test]
#[ignore = "needs a CUDA GPU: cargo test -- --include-ignored"]
fn the_poisoned_error_says_what_happened() {
    let ctx = gpu();
    let mut g = Graph::new(&ctx).unwrap();
    let h = g.cond_handle(Some(0)).unwrap();
    let mut other = Graph::new(&ctx).unwrap();
    let err = g
        .add_if("swapped", h, &[], |body| {
            std::mem::swap(body, &mut other);
            Ok(())
        })
        .unwrap_err();
    assert!(matches!(err, GraphError::Poisoned));
    assert!(err.to_string().contains("mem::swap"), "{err}");
}
