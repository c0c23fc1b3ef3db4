//! A cache of execs keyed by a graph's shape (the Programming Guide's
//! pattern): on a miss, build, instantiate (uploading, to warm it up) and
//! launch; on a hit, build the graph again, update the cached exec from it
//! and launch. The least recently used exec is dropped beyond `capacity`.

use crate::error::Result;
use crate::exec::{Exec, InstantiateOptions, UpdateOutcome};
use crate::graph::Graph;
use cudarc::driver::CudaStream;
use std::sync::Arc;

/// What a cached launch did.
#[derive(Debug)]
#[non_exhaustive]
pub enum CacheOutcome {
    /// No exec for this key: built, instantiated, uploaded and launched.
    Miss,
    /// Updated the cached exec in place and launched it.
    Hit,
    /// The cached exec refused the update; re-instantiated, then launched.
    Reinstantiated,
}

/// Execs keyed by `K`, at most `capacity` of them.
#[derive(Debug)]
pub struct GraphCache<'a, K> {
    capacity: usize,
    /// Most recently used last.
    entries: Vec<(K, Exec<'a>)>,
    hits: u64,
    misses: u64,
}

impl<'a, K: PartialEq> GraphCache<'a, K> {
    /// A cache of at most `capacity` execs (at least one).
    pub fn new(capacity: usize) -> Self {
        GraphCache {
            capacity: capacity.max(1),
            entries: Vec::new(),
            hits: 0,
            misses: 0,
        }
    }

    /// Launches the graph for `key` on `stream`, building it with `build`.
    ///
    /// # Errors
    /// What `build`, instantiation
    /// ([`Graph::instantiate_with`](crate::Graph::instantiate_with)), the update
    /// ([`Exec::update`](crate::Exec::update)) and the launch
    /// ([`Exec::launch`](crate::Exec::launch)) return.
    pub fn launch(
        &mut self,
        key: K,
        stream: &Arc<CudaStream>,
        options: &InstantiateOptions<'_>,
        build: impl FnOnce() -> Result<Graph<'a>>,
    ) -> Result<CacheOutcome> {
        let graph = build()?;
        if let Some(i) = self.entries.iter().position(|(k, _)| *k == key) {
            let mut entry = self.entries.remove(i);
            let outcome = match entry.1.update_or_reinstantiate(&graph, options)? {
                UpdateOutcome::Updated => CacheOutcome::Hit,
                UpdateOutcome::Reinstantiated { .. } => CacheOutcome::Reinstantiated,
            };
            entry.1.launch(stream)?;
            self.entries.push(entry);
            self.hits += 1;
            return Ok(outcome);
        }
        if self.entries.len() >= self.capacity {
            self.entries.remove(0);
        }
        let warm = options.upload(stream);
        let mut exec = graph.instantiate_with(&warm)?;
        exec.launch(stream)?;
        self.entries.push((key, exec));
        self.misses += 1;
        Ok(CacheOutcome::Miss)
    }

    /// Number of cached execs.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// (hits, misses) so far.
    pub fn stats(&self) -> (u64, u64) {
        (self.hits, self.misses)
    }
}
