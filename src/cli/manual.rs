//! Shell completions and the manual pages, made from the command line's own definition (clap_complete, clap_mangen).

use super::exit::Exit;
use super::Cli;
use anyhow::{Context, Result};
use clap::CommandFactory;

/// A completion script for `shell` on stdout.
pub fn completions(shell: clap_complete::Shell) -> Result<Exit> {
    clap_complete::generate(shell, &mut Cli::command(), "msgbatch", &mut std::io::stdout());
    Ok(Exit::Done)
}

/// The manual: the top page on stdout, or every page into `out` (`man -l msgbatch.1` reads one).
pub fn pages(out: Option<&std::path::Path>) -> Result<Exit> {
    let command = Cli::command();
    let Some(out) = out else {
        clap_mangen::Man::new(command).render(&mut std::io::stdout())?;
        return Ok(Exit::Done);
    };
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let mut pages = vec![("msgbatch.1".to_string(), command.clone())];
    for sub in command.get_subcommands() {
        let name = format!("msgbatch-{}", sub.get_name());
        pages.push((format!("{name}.1"), sub.clone().name(name)));
    }
    for (file, page) in pages {
        let path = out.join(&file);
        let mut written = Vec::new();
        clap_mangen::Man::new(page).render(&mut written)?;
        std::fs::write(&path, written).with_context(|| format!("cannot write {}", path.display()))?;
        println!("wrote {}", path.display());
    }
    Ok(Exit::Done)
}
