//! How the layers of a policy combine, field by field.
//!
//! Tighten-only is a security property: a layer trusted less than the ones
//! before it (an untrusted repository's file, every file below a strict
//! managed policy) may make the policy stricter, never looser. So every
//! field of a layer declares a [`Merge`] kind where the layer is merged
//! (`EffectivePolicy::apply` and [`crate::Profile::apply`]), and every entry
//! of every field goes through [`Merger::admit`], the one place that decides
//! whether it is taken and reports what is left out.
//!
//! Two things keep the declarations complete:
//!
//! - the merge functions destructure their layer without `..` and deny
//!   unused variables, so a field added to a layer does not compile until it
//!   is merged, and merging it means naming a kind;
//! - a test in `config.rs` enumerates every field the merge declares and,
//!   from a tighten-only layer, tries to loosen each one.

use crate::config::{IgnoredEntry, Location, Trust};

/// How a field of a lower-trust layer combines with what is in force. A
/// trusted layer ([`Trust::Full`]) sets every field whatever its kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Merge {
    /// Any layer replaces it: the value does not widen what commands may do
    /// (a profile's description, its summary format).
    Replace,
    /// Any layer adds entries and none removes one: every entry only
    /// restricts (sensitive and masked paths, `[mcp] deny`).
    Union,
    /// A lower-trust layer's entry is taken only when it is no looser than
    /// what is in force; the field says which entries are looser (a rule
    /// action lowered, a longer approval timeout, the network turned on).
    Tighten,
    /// Only a trusted layer sets it: every entry of a lower-trust layer is
    /// left out (paths passed back, writable paths, hosts, credentials).
    Trusted,
}

/// A field of a layer and how it merges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// The field as a policy file writes it: `[session] env_pass`,
    /// `[profile] writable`.
    pub key: &'static str,
    /// How a lower-trust layer's entries combine.
    pub merge: Merge,
}

/// Merges the fields of one layer: decides each entry by its field's kind
/// and keeps the entries left out, in the order met.
#[derive(Debug)]
pub(crate) struct Merger {
    trust: Trust,
    /// Entries left out.
    pub(crate) ignored: Vec<IgnoredEntry>,
    /// Every field declared so far, once each.
    pub(crate) fields: Vec<Field>,
}

impl Merger {
    /// A merger for a layer of this trust.
    pub(crate) fn new(trust: Trust) -> Self {
        Merger {
            trust,
            ignored: Vec::new(),
            fields: Vec::new(),
        }
    }

    /// Declares a field, whether or not the layer sets it (so that the
    /// fields can be enumerated).
    pub(crate) fn field(&mut self, key: &'static str, merge: Merge) -> Field {
        let field = Field { key, merge };
        if !self.fields.contains(&field) {
            self.fields.push(field);
        }
        field
    }

    /// Whether one entry of `field`, written at `at`, is taken. `looser`
    /// says whether it would loosen what is in force; it is asked only of a
    /// [`Merge::Tighten`] field in a lower-trust layer. An entry left out
    /// is recorded with what `say` returns: the entry as written and what
    /// stays in force instead.
    pub(crate) fn admit(
        &mut self,
        field: Field,
        at: &Location,
        looser: impl FnOnce() -> bool,
        say: impl FnOnce() -> (String, String),
    ) -> bool {
        let taken = match (self.trust, field.merge) {
            (Trust::Full, _) | (_, Merge::Replace | Merge::Union) => true,
            (Trust::TightenOnly, Merge::Trusted) => false,
            (Trust::TightenOnly, Merge::Tighten) => !looser(),
        };
        if !taken {
            self.refuse(field, at, say);
        }
        taken
    }

    /// Whether entries of `field` are held to what is in force: the layer
    /// is trusted less and the field is not one any layer may set. For a
    /// field whose entries are decided elsewhere (an agent preset's).
    pub(crate) fn tightens(&self, field: Field) -> bool {
        self.trust == Trust::TightenOnly && matches!(field.merge, Merge::Tighten | Merge::Trusted)
    }

    /// Records an entry of `field` left out: the entry as written and what
    /// stays in force instead.
    pub(crate) fn refuse(
        &mut self,
        field: Field,
        at: &Location,
        say: impl FnOnce() -> (String, String),
    ) {
        let (entry, kept) = say();
        self.ignored.push(IgnoredEntry {
            field: field.key,
            at: at.clone(),
            entry,
            kept,
            managed: None,
        });
    }

    /// [`Self::admit`] for one entry of a list: added when taken and not
    /// already there. Adding is looser unless the field is a
    /// [`Merge::Union`].
    pub(crate) fn add<T: PartialEq + Clone>(
        &mut self,
        field: Field,
        list: &mut Vec<T>,
        value: &T,
        at: &Location,
        say: impl FnOnce() -> (String, String),
    ) {
        if self.admit(field, at, || true, say) && !list.contains(value) {
            list.push(value.clone());
        }
    }
}
