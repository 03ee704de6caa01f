//! How the layers of a policy combine, field by field.
//!
//! Tighten-only is a security property: a layer trusted less than the ones
//! before it (an untrusted repository's file, every file below a strict
//! managed policy) may make the policy stricter, never looser. So every
//! field of a layer declares a [`Merge`] kind where the layer is merged
//! (`EffectivePolicy::apply` and [`crate::Profile::apply`]), and every entry
//! of every field goes through `Merger::admit`, the one place that decides
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
pub(crate) struct Field {
    /// The field as a policy file writes it: `[session] env_pass`,
    /// `[profile] writable`.
    pub key: &'static str,
    /// How a lower-trust layer's entries combine.
    pub(crate) merge: Merge,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{EffectivePolicy, parse_layer};

    /// How a lower-trust layer tries to loosen a field, on top of what a
    /// trusted file set first.
    enum Attempt {
        /// `base` from the user's file, then `lower` from a tighten-only one.
        Loosen {
            base: &'static str,
            lower: &'static str,
        },
        /// No entry of the field loosens anything: why.
        CannotLoosen(&'static str),
    }
    use Attempt::*;

    const fn lower(lower: &'static str) -> Attempt {
        Loosen { base: "", lower }
    }

    /// One attempt per field. A field the merge declares without an
    /// attempt here fails [`no_lower_trust_layer_loosens_any_field`].
    const ATTEMPTS: &[(&str, Attempt)] = &[
        (
            "[rules]",
            Loosen {
                base: "[rules]\n\"pkg-install\" = \"block\"\n",
                lower: "[rules]\n\"pkg-install\" = \"allow\"\n",
            },
        ),
        ("[paths] sensitive", CannotLoosen("it only adds a secret")),
        (
            "[paths] unmasked",
            lower("[paths]\nunmasked = [\"~/.m2/settings.xml\"]\n"),
        ),
        (
            "[session] approval_timeout_secs",
            Loosen {
                base: "[session]\napproval_timeout_secs = 30\n",
                lower: "[session]\napproval_timeout_secs = 600\n",
            },
        ),
        (
            "[session] unanswered",
            lower("[session]\nunanswered = \"allow\"\n"),
        ),
        (
            "[session] shims",
            CannotLoosen("it only sends one more program through the firewall"),
        ),
        (
            "[session] env_pass",
            lower("[session]\nenv_pass = [\"AWS_SECRET_ACCESS_KEY\"]\n"),
        ),
        (
            "[session] host_sockets",
            lower("[session]\nhost_sockets = [\"/run/docker.sock\"]\n"),
        ),
        (
            "[session] preflight",
            Loosen {
                base: "[session]\npreflight = true\n",
                lower: "[session]\npreflight = false\n",
            },
        ),
        (
            "[session] wait_for_approver",
            lower("[session]\nwait_for_approver = true\n"),
        ),
        (
            "[session] trusted_exec",
            lower("[session]\ntrusted_exec = [\"**\"]\n"),
        ),
        ("[session] profile", lower("[session]\nprofile = \"dev\"\n")),
        (
            "[profile.NAME]",
            lower("[profile.mine]\nextends = \"dev\"\n"),
        ),
        (
            "[profile] description",
            CannotLoosen("words for a person, not what a command may do"),
        ),
        (
            "[profile] sandbox",
            lower("[profile.strict]\nsandbox = false\n"),
        ),
        (
            "[profile] exec_guard",
            lower("[profile.strict]\nexec_guard = false\n"),
        ),
        (
            "[profile] writable",
            lower("[profile.strict]\nwritable = [\"~/\"]\n"),
        ),
        (
            "[profile] home",
            lower("[profile.strict]\nhome = \"read-only\"\n"),
        ),
        (
            "[profile] readable",
            lower("[profile.strict]\nreadable = [\"~/Documents\"]\n"),
        ),
        (
            "[profile] read_only",
            CannotLoosen("it only takes writing away"),
        ),
        ("[profile] masked", CannotLoosen("it only hides more")),
        (
            "[profile] network",
            lower("[profile.strict]\nnetwork = \"host\"\n"),
        ),
        (
            "[profile] env",
            lower("[profile.strict]\nenv = [\"AWS_SECRET_ACCESS_KEY\"]\n"),
        ),
        (
            "[profile] summary",
            CannotLoosen("how the session reports, not what it may do"),
        ),
        (
            "[profile] mode",
            lower("[profile.strict]\nmode = \"learn\"\n"),
        ),
        (
            "[profile] limits",
            lower("[profile.strict]\nlimits = { processes = 0 }\n"),
        ),
        ("[hooks] allow", lower("[hooks]\nallow = \"approve\"\n")),
        ("[mcp] deny", CannotLoosen("it only refuses more tools")),
        (
            "[program.NAME] subs",
            Loosen {
                base: "[program.gh]\nsubs = { \"pr view\" = \"read\" }\n",
                lower: "[program.gh]\nsubs = { \"pr merge\" = \"read\" }\n",
            },
        ),
        (
            "[program.NAME] default",
            Loosen {
                base: "[program.acme]\ndefault = \"change\"\n",
                lower: "[program.acme]\ndefault = \"read\"\n",
            },
        ),
        (
            "[workspace.PATH]",
            lower("[workspace.\"/src/app\"]\nwritable = [\"/srv\"]\n"),
        ),
        (
            "[audit] export",
            lower(
                "[audit]\nexport = [{ format = \"otlp\", endpoint = \"http://127.0.0.1:4318\" }]\n",
            ),
        ),
        ("[undo] enabled", lower("[undo]\nenabled = false\n")),
        ("[undo] max_file_mb", lower("[undo]\nmax_file_mb = 1\n")),
        ("[undo] max_store_mb", lower("[undo]\nmax_store_mb = 1\n")),
        ("[undo] coalesce_ms", lower("[undo]\ncoalesce_ms = 60000\n")),
        ("[undo] keep_days", lower("[undo]\nkeep_days = 1\n")),
        (
            "[undo] include",
            CannotLoosen("keeping more files only adds to what can be restored"),
        ),
        (
            "[agent.NAME]",
            lower("[agent.my-agent]\ntitle = \"Mine\"\nprograms = [\"my-agent\"]\n"),
        ),
        (
            "[network] allow",
            lower("[network]\nallow = [\"evil.example\"]\n"),
        ),
        (
            "[network] resolve",
            lower("[network]\nresolve = [\"github.com:203.0.113.7\"]\n"),
        ),
        (
            "[network] permit",
            lower("[network]\npermit = [\"10.0.0.0/8\"]\n"),
        ),
        (
            "[network.http.HOST]",
            lower("[network.http.\"api.example.invalid\"]\nmethods = [\"GET\"]\n"),
        ),
        (
            "[network.credentials.HOST]",
            lower(
                "[network.credentials.\"api.example.invalid\"]\nheader = \"Authorization\"\nvalue = \"Bearer ${EXAMPLE_TOKEN}\"\n",
            ),
        ),
        (
            "[network] credential_presets",
            lower("[network]\ncredential_presets = [\"github\"]\n"),
        ),
        (
            "[network] unlisted",
            Loosen {
                base: "[network]\nunlisted = \"refuse\"\n",
                lower: "[network]\nunlisted = \"ask\"\n",
            },
        ),
        (
            "[[rule]]",
            lower(
                "[[rule]]\nid = \"allow-npm\"\naction = \"allow\"\nwhy = \"npm is fine here\"\nprogram = [\"npm\"]\n",
            ),
        ),
    ];

    /// The policy after `layers`, all of it but the entries left out.
    fn in_force(layers: &[(&str, Trust)]) -> (String, Vec<IgnoredEntry>) {
        let mut eff = EffectivePolicy::builtin();
        for (i, (text, trust)) in layers.iter().enumerate() {
            let layer = parse_layer(&format!("layer{i}.toml"), text)
                .unwrap_or_else(|e| panic!("{e}\n{text}"));
            eff.apply(&layer, *trust).unwrap_or_else(|e| panic!("{e}"));
        }
        let ignored = std::mem::take(&mut eff.ignored);
        (format!("{eff:#?}"), ignored)
    }

    /// Where `after` differs from `before`, for a short failure: the lines
    /// that changed in place, else those added.
    fn changed(before: &str, after: &str) -> String {
        let (was, now): (Vec<&str>, Vec<&str>) =
            (before.lines().collect(), after.lines().collect());
        let lines: Vec<String> = if was.len() == now.len() {
            was.iter()
                .zip(&now)
                .enumerate()
                .filter(|(_, (w, n))| w != n)
                .map(|(i, (w, n))| format!("  line {}: {} -> {}", i + 1, w.trim(), n.trim()))
                .collect()
        } else {
            now.iter()
                .filter(|l| !was.contains(l))
                .map(|l| format!("  added: {}", l.trim()))
                .collect()
        };
        lines.join("\n")
    }

    /// Every field a layer has, tried from a tighten-only layer: what is in
    /// force stays exactly as it was, and an ignored entry names the field.
    /// The attempt must change the policy when a trusted file makes it, so
    /// that it really is a loosening; a field no entry of which can loosen
    /// must be declared so ([`Merge::Union`], [`Merge::Replace`]).
    #[test]
    fn no_lower_trust_layer_loosens_any_field() {
        let fields = EffectivePolicy::declared_fields();
        for (key, _) in ATTEMPTS {
            assert!(
                fields.iter().any(|f| f.key == *key),
                "{key} is tried here but not declared by the merge"
            );
        }
        let mut tried = 0;
        for field in &fields {
            let Some((_, attempt)) = ATTEMPTS.iter().find(|(k, _)| *k == field.key) else {
                panic!(
                    "{} has no loosening attempt: add one to ATTEMPTS",
                    field.key
                );
            };
            let (base, lower) = match attempt {
                Loosen { base, lower } => (*base, *lower),
                CannotLoosen(why) => {
                    assert!(
                        matches!(field.merge, Merge::Union | Merge::Replace),
                        "{} is declared {:?} yet said not to loosen ({why})",
                        field.key,
                        field.merge
                    );
                    continue;
                }
            };
            let (before, _) = in_force(&[(base, Trust::Full)]);
            let (trusted, _) = in_force(&[(base, Trust::Full), (lower, Trust::Full)]);
            assert!(
                trusted != before,
                "{}: the attempt changes nothing even from a trusted file",
                field.key
            );
            let (after, ignored) = in_force(&[(base, Trust::Full), (lower, Trust::TightenOnly)]);
            assert!(
                after == before,
                "{} ({:?}): a tighten-only layer loosened it:\n{}",
                field.key,
                field.merge,
                changed(&before, &after)
            );
            assert!(
                ignored.iter().any(|e| e.field == field.key),
                "{}: no ignored entry names it: {ignored:?}",
                field.key
            );
            tried += 1;
        }
        assert_eq!(fields.len(), ATTEMPTS.len());
        eprintln!("{tried} of {} fields tried", fields.len());
    }
}
