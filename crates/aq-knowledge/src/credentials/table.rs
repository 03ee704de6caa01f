//! The catalog of credentials: where they live and what they are.
//!
//! # How to maintain this table
//!
//! - One row per place, sorted by `path` (byte order: workspace names
//!   first, then `$VAR` places, absolute paths, and `~/` paths last). The
//!   build fails when it is not sorted or a path appears twice.
//! - `path` is `~/...` (the home directory), `$VAR...` (a path an
//!   environment variable names, or a place under it), `/...` (absolute), or
//!   a file-name glob without `/` (anywhere in the workspace). A trailing `/`
//!   marks a directory, and only directories (`Mask::Dir`, `Mask::Near`) end
//!   in one. Globs are `*` and `?`, one path component each.
//! - `what` is read by people: "`cat` reads ~/.aws/credentials (AWS
//!   credentials)". A directory's starts with "the ".
//! - Choose the mask (see [`Mask`]) by what builds need: a file a build
//!   reads for mirrors or settings as well as credentials is `IfValue`, so
//!   it is masked only when it holds a value; a file that only holds
//!   credentials is `File`; a directory of nothing else is `Dir`.
//! - A file inside a directory masked whole is `Inside` (the directory's
//!   mask already hides it; the row tells the rules what it is). Nothing
//!   else may lie inside a masked directory: a mask cannot be mounted in an
//!   empty directory. The unit tests check both, and that the paths a
//!   private home keeps readable never open an always-masked row.
//! - Add a row with a test of the consumer that cares (a sandbox mask test
//!   in `tests/credentials.rs`, a rule example in `aq-policy`).

use super::Credential;
use super::Kind::*;
use super::Mask::*;
use super::sniff::{
    MAVEN_KEYS, NPM_KEYS, NUGET_KEYS, PASSWORD_KEYS, SECRET_KEYS, TOKEN_KEYS, URL_ONLY, YARN_KEYS,
};
use super::{Files, c};

/// Every credential the catalog knows, sorted by path.
#[rustfmt::skip]
pub const CREDENTIALS: &[Credential] = &[
    c("$SSH_AUTH_SOCK", "the SSH agent's socket (signs with the user's keys)", Ssh, File),
    c("$XDG_RUNTIME_DIR/containers/auth.json", "Podman registry credentials", Registry, File),
    c("$XDG_RUNTIME_DIR/gcr/", "the GNOME SSH agent's sockets", Ssh, Dir(Files::Secret)),
    c("$XDG_RUNTIME_DIR/gnupg/", "the gpg-agent sockets (sign and decrypt with the user's keys)", Gpg, Dir(Files::Secret)),
    c("$XDG_RUNTIME_DIR/keyring/", "the GNOME keyring sockets (secrets and the SSH agent)", Keyring, Dir(Files::Secret)),
    c("$XDG_RUNTIME_DIR/ssh-agent.socket", "the SSH agent's socket (signs with the user's keys)", Ssh, File),
    c("*-credentials.json", "a credentials file (cloud or API client secrets)", Cloud, File),
    c("*.asc", "an armored PGP file (a private key, or a signature)", KeyFile, IfKey),
    c("*.jks", "a Java key store", KeyFile, File),
    c("*.kdbx", "a KeePass password database", PasswordStore, File),
    c("*.key", "a private key", KeyFile, File),
    c("*.keystore", "a Java or Android key store", KeyFile, File),
    c("*.p12", "a PKCS#12 key store", KeyFile, File),
    c("*.pem", "a PEM file (a private key, or a certificate)", KeyFile, IfKey),
    c("*.pfx", "a PKCS#12 key store", KeyFile, File),
    c("*.ppk", "a PuTTY private key", KeyFile, File),
    c("*.tfstate", "Terraform state (resource secrets in plain text)", Infrastructure, File),
    c("*.tfstate.backup", "Terraform state (resource secrets in plain text)", Infrastructure, File),
    c("*.tfvars", "Terraform variables (passwords and tokens, when set)", Infrastructure, IfValue(SECRET_KEYS)),
    c("*.tfvars.json", "Terraform variables (passwords and tokens, when set)", Infrastructure, IfValue(SECRET_KEYS)),
    c("*_credentials.json", "a credentials file (cloud or API client secrets)", Cloud, File),
    c(".env", "a .env file with secrets", Environment, File),
    c(".env.*", "a .env file with secrets", Environment, File),
    c(".envrc", "a direnv file (exports secrets into the shell)", Environment, File),
    c(".git-credentials", "stored git credentials", GitHosting, File),
    c(".netrc", "netrc passwords", Login, File),
    c(".npmrc", "npm settings (registry tokens, when set)", Registry, IfValue(NPM_KEYS)),
    c(".pgpass", "PostgreSQL passwords", Login, File),
    c(".pypirc", "PyPI upload tokens", Registry, File),
    c(".yarnrc.yml", "Yarn settings (registry tokens, when set)", Registry, IfValue(YARN_KEYS)),
    c("/tmp/ssh-*/", "the OpenSSH agent sockets (sign with the user's keys)", Ssh, Dir(Files::Secret)),
    c("client_secret*.json", "a Google OAuth client secret", Cloud, File),
    c("credentials.json", "a credentials file (Google API client secrets, service keys)", Cloud, File),
    c("id_dsa", "an SSH private key", KeyFile, File),
    c("id_ecdsa", "an SSH private key", KeyFile, File),
    c("id_ecdsa_sk", "an SSH private key", KeyFile, File),
    c("id_ed25519", "an SSH private key", KeyFile, File),
    c("id_ed25519_sk", "an SSH private key", KeyFile, File),
    c("id_rsa", "an SSH private key", KeyFile, File),
    c("service-account*.json", "a cloud service-account key", Cloud, File),
    c("service_account*.json", "a cloud service-account key", Cloud, File),
    c("~/.aws/", "the AWS CLI directory", Cloud, Dir(Files::Named)),
    c("~/.aws/cli/cache/*", "cached AWS credentials", Cloud, Inside),
    c("~/.aws/credentials", "AWS credentials", Cloud, Inside),
    c("~/.aws/sso/cache/*", "AWS SSO tokens", Cloud, Inside),
    c("~/.azure/", "the Azure CLI directory", Cloud, Dir(Files::Named)),
    c("~/.azure/accessTokens.json", "Azure tokens", Cloud, Inside),
    c("~/.azure/msal_token_cache.*", "Azure tokens", Cloud, Inside),
    c("~/.boto", "gsutil credentials (Google Cloud Storage)", Cloud, File),
    c("~/.cache/huggingface/stored_tokens", "Hugging Face tokens", ModelHub, File),
    c("~/.cache/huggingface/token", "a Hugging Face token", ModelHub, File),
    c("~/.cargo/credentials", "crates.io tokens", Registry, File),
    c("~/.cargo/credentials.toml", "crates.io tokens", Registry, File),
    c("~/.cloudflared/", "the Cloudflare Tunnel credentials", Cloud, Dir(Files::Secret)),
    c("~/.composer/auth.json", "Composer registry credentials", Registry, File),
    c("~/.config/BraveSoftware/", "the Brave profiles (saved passwords, cookies)", Browser, Dir(Files::Secret)),
    c("~/.config/NuGet/NuGet.Config", "NuGet settings (feed passwords, when set)", Registry, IfValue(NUGET_KEYS)),
    c("~/.config/chromium/", "the Chromium profiles (saved passwords, cookies)", Browser, Dir(Files::Secret)),
    c("~/.config/chromium/*/Cookies", "Chromium cookies", Browser, Inside),
    c("~/.config/chromium/*/Login Data", "Chromium saved passwords", Browser, Inside),
    c("~/.config/composer/auth.json", "Composer registry credentials", Registry, File),
    c("~/.config/configstore/firebase-tools.json", "Firebase CLI tokens", Cloud, File),
    c("~/.config/containers/auth.json", "Podman registry credentials", Registry, File),
    c("~/.config/dart/pub-credentials.json", "pub.dev credentials", Registry, File),
    c("~/.config/direnv/", "the direnv settings (scripts that often export secrets)", Environment, Dir(Files::Secret)),
    c("~/.config/doctl/", "the DigitalOcean CLI tokens", Cloud, Dir(Files::Secret)),
    c("~/.config/gcloud/", "the Google Cloud CLI directory", Cloud, Dir(Files::Named)),
    c("~/.config/gcloud/*credentials*", "Google Cloud credentials", Cloud, Inside),
    c("~/.config/gcloud/access_tokens.db", "Google Cloud tokens", Cloud, Inside),
    c("~/.config/gh/", "the GitHub CLI directory", GitHosting, Dir(Files::Named)),
    c("~/.config/gh/hosts.yml", "GitHub CLI tokens", GitHosting, Inside),
    c("~/.config/git/credentials", "stored git credentials", GitHosting, File),
    c("~/.config/glab-cli/", "the GitLab CLI tokens", GitHosting, Dir(Files::Secret)),
    c("~/.config/google-chrome/", "the Chrome profiles (saved passwords, cookies)", Browser, Dir(Files::Secret)),
    c("~/.config/google-chrome/*/Cookies", "Chrome cookies", Browser, Inside),
    c("~/.config/google-chrome/*/Login Data", "Chrome saved passwords", Browser, Inside),
    c("~/.config/hcloud/", "the Hetzner Cloud CLI tokens", Cloud, Dir(Files::Secret)),
    c("~/.config/hub", "GitHub tokens (hub)", GitHosting, File),
    c("~/.config/linode-cli", "Linode CLI tokens", Cloud, File),
    c("~/.config/microsoft-edge/", "the Edge profiles (saved passwords, cookies)", Browser, Dir(Files::Secret)),
    c("~/.config/netlify/config.json", "Netlify CLI tokens", Cloud, File),
    c("~/.config/op/", "the 1Password CLI settings", PasswordStore, Dir(Files::Secret)),
    c("~/.config/pip/pip.conf", "pip settings (index passwords, when set)", Registry, IfValue(URL_ONLY)),
    c("~/.config/pypoetry/auth.toml", "Poetry registry credentials", Registry, File),
    c("~/.config/rclone/rclone.conf", "rclone remotes' credentials", Cloud, File),
    c("~/.config/sops/age/keys.txt", "age keys for SOPS", KeyFile, File),
    c("~/.docker/", "the Docker directory", Registry, Near),
    c("~/.docker/config.json", "Docker registry credentials", Registry, File),
    c("~/.env", "a .env file with secrets", Environment, File),
    c("~/.fly/config.yml", "Fly.io tokens", Cloud, File),
    c("~/.gem/credentials", "RubyGems tokens", Registry, File),
    c("~/.git-credentials", "stored git credentials", GitHosting, File),
    c("~/.gnupg/", "the GnuPG key directory", Gpg, Dir(Files::Secret)),
    c("~/.gradle/gradle.properties", "Gradle properties (repository and signing passwords, when set)", Registry, IfValue(SECRET_KEYS)),
    c("~/.huggingface/token", "a Hugging Face token", ModelHub, File),
    c("~/.kaggle/kaggle.json", "a Kaggle API key", ModelHub, File),
    c("~/.kube/", "the Kubernetes directory", Cloud, Dir(Files::Named)),
    c("~/.kube/config", "Kubernetes cluster credentials", Cloud, Inside),
    c("~/.local/share/com.vercel.cli/", "the Vercel CLI tokens", Cloud, Dir(Files::Secret)),
    c("~/.local/share/keyrings/", "the GNOME keyrings", Keyring, Dir(Files::Secret)),
    c("~/.local/share/kwalletd/", "the KDE wallets", Keyring, Dir(Files::Secret)),
    c("~/.m2/settings-security.xml", "the Maven master password", Registry, File),
    c("~/.m2/settings.xml", "Maven settings (server passwords, when set)", Registry, IfValue(MAVEN_KEYS)),
    c("~/.mozilla/firefox/", "the Firefox profiles (saved passwords, cookies)", Browser, Dir(Files::Secret)),
    c("~/.mozilla/firefox/*/cookies.sqlite", "Firefox cookies", Browser, Inside),
    c("~/.mozilla/firefox/*/key4.db", "the Firefox password key", Browser, Inside),
    c("~/.mozilla/firefox/*/logins.json", "Firefox saved passwords", Browser, Inside),
    c("~/.my.cnf", "MySQL client settings (a password, when set)", Login, IfValue(PASSWORD_KEYS)),
    c("~/.netlify/config.json", "Netlify CLI tokens", Cloud, File),
    c("~/.netrc", "netrc passwords (curl, git, Heroku)", Login, File),
    c("~/.npmrc", "npm settings (registry tokens, when set)", Registry, IfValue(NPM_KEYS)),
    c("~/.nuget/NuGet/NuGet.Config", "NuGet settings (feed passwords, when set)", Registry, IfValue(NUGET_KEYS)),
    c("~/.oci/", "the Oracle Cloud CLI keys", Cloud, Dir(Files::Secret)),
    c("~/.password-store/", "the pass password store", PasswordStore, Dir(Files::Secret)),
    c("~/.pgpass", "PostgreSQL passwords", Login, File),
    c("~/.pip/pip.conf", "pip settings (index passwords, when set)", Registry, IfValue(URL_ONLY)),
    c("~/.pub-cache/credentials.json", "pub.dev credentials", Registry, File),
    c("~/.pypirc", "PyPI upload tokens", Registry, File),
    c("~/.s3cfg", "s3cmd credentials", Cloud, File),
    c("~/.ssh/", "the SSH key directory", Ssh, Dir(Files::Named)),
    c("~/.ssh/*_dsa", "an SSH private key", Ssh, Inside),
    c("~/.ssh/*_ecdsa", "an SSH private key", Ssh, Inside),
    c("~/.ssh/*_ed25519", "an SSH private key", Ssh, Inside),
    c("~/.ssh/*_rsa", "an SSH private key", Ssh, Inside),
    c("~/.ssh/id_*", "an SSH private key", Ssh, Inside),
    c("~/.terraform.d/credentials.tfrc.json", "Terraform Cloud tokens", Infrastructure, File),
    c("~/.terraformrc", "Terraform CLI settings (tokens, when set)", Infrastructure, IfValue(TOKEN_KEYS)),
    c("~/.thunderbird/", "the Thunderbird profiles (saved mail passwords)", Browser, Dir(Files::Secret)),
    c("~/.vault-token", "a Vault token", Infrastructure, File),
    c("~/.yarnrc", "Yarn 1 settings (registry tokens, when set)", Registry, IfValue(NPM_KEYS)),
    c("~/.yarnrc.yml", "Yarn settings (registry tokens, when set)", Registry, IfValue(YARN_KEYS)),
];
