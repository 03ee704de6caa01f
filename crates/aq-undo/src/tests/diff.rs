//! `aq diff`'s changes and their text.

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};

use super::Ws;
use crate::Options;

#[test]
fn render_shows_text_binary_mode_and_links() {
    let ws = Ws::new();
    ws.write("t.txt", "one\ntwo\nthree\n");
    ws.write("gone.txt", "bye\n");
    fs::write(ws.p("b.bin"), [0u8, 1, 2]).unwrap();
    ws.write("x.sh", "echo\n");
    symlink("t.txt", ws.p("l")).unwrap();
    let id = ws.id();
    ws.write("t.txt", "one\n2\nthree\n");
    fs::remove_file(ws.p("gone.txt")).unwrap();
    fs::write(ws.p("b.bin"), [0u8, 9]).unwrap();
    fs::set_permissions(ws.p("x.sh"), fs::Permissions::from_mode(0o755)).unwrap();
    fs::remove_file(ws.p("l")).unwrap();
    symlink("x.sh", ws.p("l")).unwrap();
    ws.write("added.txt", "hi\n");
    // The diff against the workspace lists no new checkpoint.
    let changes = ws.store.diff(&id, None, &Options::default()).unwrap();
    assert_eq!(ws.store.list().unwrap().checkpoints.len(), 1);
    assert_eq!(changes.len(), 6, "{changes:?}");
    let text = ws.store.render(&changes, false).unwrap();
    for want in [
        "--- a/t.txt\n+++ b/t.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n",
        "Binary file b.bin changed",
        "mode x.sh: 100644 -> 100755",
        "link l: t.txt -> x.sh",
        "--- /dev/null\n+++ b/added.txt\n@@ -0,0 +1 @@\n+hi\n",
        "deleted file mode 100644\n--- a/gone.txt\n+++ /dev/null\n",
    ] {
        assert!(text.contains(want), "{want:?} not in:\n{text}");
    }
    let stat = ws.store.render(&changes, true).unwrap();
    assert!(stat.contains("t.txt     | +1 -1\n"), "{stat}");
    assert!(stat.contains("b.bin     | binary\n"), "{stat}");
    assert!(
        stat.ends_with(" 6 files changed, 2 insertions(+), 2 deletions(-)\n"),
        "{stat}"
    );
    // Between two checkpoints.
    let later = ws.id();
    let between = ws
        .store
        .diff(&id, Some(&later), &Options::default())
        .unwrap();
    assert_eq!(between, changes);
}

#[test]
fn checkpoints_are_readable_by_git() {
    let ws = Ws::new();
    ws.write("a/b.txt", "hello\n");
    fs::create_dir(ws.p("empty")).unwrap();
    let id = ws.id();
    let out = std::process::Command::new("git")
        .arg(format!("--git-dir={}", ws.store.dir().display()))
        .args(["ls-tree", "-r", "-t", &id.0])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("blob ce013625030ba8dba906f756967f9e9ca394464a\tw/a/b.txt"),
        "{text}"
    );
    assert!(
        text.contains("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\tw/empty"),
        "{text}"
    );
    let fsck = std::process::Command::new("git")
        .arg(format!("--git-dir={}", ws.store.dir().display()))
        .args(["fsck", "--no-dangling", "--strict"])
        .output()
        .unwrap();
    assert!(
        fsck.status.success(),
        "{}",
        String::from_utf8_lossy(&fsck.stderr)
    );
}
