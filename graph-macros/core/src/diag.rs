//! Error collection: every check reports into one `Diagnostics`, so a single
//! macro call shows all of its errors, each at the tokens that caused it.

use proc_macro2::Span;
use quote::ToTokens;
use std::cell::RefCell;

/// Gathers errors from every check. Dropping it without calling
/// [`Diagnostics::finish`] is a bug in the checker, caught in tests (the
/// pattern of serde_derive's `Ctxt`).
#[derive(Debug, Default)]
pub struct Diagnostics {
    errors: RefCell<Option<Vec<syn::Error>>>,
}

impl Diagnostics {
    pub fn new() -> Self {
        Diagnostics {
            errors: RefCell::new(Some(Vec::new())),
        }
    }

    /// An error spanning `tokens` (first to last token).
    pub fn error(&self, tokens: impl ToTokens, message: impl std::fmt::Display) {
        self.push(syn::Error::new_spanned(tokens, message.to_string()));
    }

    /// An error spanning `tokens`, followed by a `help:` line.
    pub fn error_with_help(
        &self,
        tokens: impl ToTokens,
        message: impl std::fmt::Display,
        help: impl std::fmt::Display,
    ) {
        self.error(tokens, with_help(message, help));
    }

    /// An error at one span.
    pub fn error_at(&self, span: Span, message: impl std::fmt::Display) {
        self.push(syn::Error::new(span, message.to_string()));
    }

    pub fn push(&self, error: syn::Error) {
        if let Some(errors) = self.errors.borrow_mut().as_mut() {
            errors.push(error);
        }
    }

    /// Ends collection: all errors combined into one, in the order reported.
    ///
    /// # Errors
    /// Every error pushed, combined into one.
    pub fn finish(self) -> Result<(), syn::Error> {
        let errors = self.errors.borrow_mut().take().unwrap_or_default();
        match combine(errors) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl Drop for Diagnostics {
    fn drop(&mut self) {
        if !std::thread::panicking() && self.errors.borrow().is_some() {
            // A checker bug, never a user error: `finish` was not called.
            debug_assert!(false, "Diagnostics dropped without finish()");
        }
    }
}

/// Formats a message with a hint the way rustc prints one.
pub fn with_help(message: impl std::fmt::Display, help: impl std::fmt::Display) -> String {
    format!("{message}\n= help: {help}")
}

/// Combines errors into one `syn::Error` that expands to one
/// `compile_error!` per error.
pub fn combine(errors: impl IntoIterator<Item = syn::Error>) -> Option<syn::Error> {
    let mut errors = errors.into_iter();
    let mut first = errors.next()?;
    for e in errors {
        first.combine(e);
    }
    Some(first)
}
