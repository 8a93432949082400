//! Files and folders readable by the owner only (reports, rejects and checkpoints hold phone numbers), and cells safe to open in a spreadsheet (`spreadsheet`).

pub mod spreadsheet;

pub use spreadsheet::spreadsheet_safe;

use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;

/// Creates (or truncates) a file with mode 0600.
pub fn create_private(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let file = options.open(path)?;
    // An existing file keeps its old mode through `open`; set it again.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(file)
}

/// Deletes a file or a folder with everything in it; one that is not there is no error.
pub fn remove_any(path: &Path) -> io::Result<()> {
    let removed = if path.is_dir() {
        std::fs::remove_dir_all(path)
    } else {
        std::fs::remove_file(path)
    };
    match removed {
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

/// Creates a folder (and its parents) with mode 0700 for the last one.
pub fn create_private_dir(path: &Path) -> io::Result<()> {
    std::fs::create_dir_all(path)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// Makes a folder and everything in it owner-only (folders 0700, files 0600), for folders whose
/// files another library creates with modes of its own (sled's `db`, `conf`, `snap.*`, `blobs/`).
/// Symbolic links are left alone, not followed.
pub fn make_private_tree(path: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700))?;
        for entry in std::fs::read_dir(path)? {
            let entry = entry?;
            let kind = entry.file_type()?;
            if kind.is_dir() {
                make_private_tree(&entry.path())?;
            } else if kind.is_file() {
                std::fs::set_permissions(entry.path(), std::fs::Permissions::from_mode(0o600))?;
            }
        }
    }
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn files_and_folders_are_owner_only() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("run");
        create_private_dir(&folder).unwrap();
        assert_eq!(std::fs::metadata(&folder).unwrap().permissions().mode() & 0o777, 0o700);
        let path = folder.join("report.csv");
        std::fs::write(&path, "x").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        create_private(&path).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    }

    #[test]
    fn a_tree_made_by_others_becomes_owner_only() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("checkpoint");
        std::fs::create_dir_all(root.join("blobs/inner")).unwrap();
        std::fs::write(root.join("db"), "x").unwrap();
        std::fs::write(root.join("blobs/inner/1"), "x").unwrap();
        for (path, mode) in [
            ("", 0o755),
            ("blobs", 0o755),
            ("blobs/inner", 0o775),
            ("db", 0o644),
            ("blobs/inner/1", 0o666),
        ] {
            std::fs::set_permissions(root.join(path), std::fs::Permissions::from_mode(mode)).unwrap();
        }
        make_private_tree(&root).unwrap();
        for (path, mode) in [
            ("", 0o700),
            ("blobs", 0o700),
            ("blobs/inner", 0o700),
            ("db", 0o600),
            ("blobs/inner/1", 0o600),
        ] {
            let actual = std::fs::metadata(root.join(path)).unwrap().permissions().mode() & 0o777;
            assert_eq!(actual, mode, "{path}: {actual:o}");
        }
    }
}
