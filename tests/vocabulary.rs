//! One vocabulary: a flag name means the same thing in every subcommand. Walks every subcommand's clap
//! definition and checks that each long flag used in more than one place takes a value in all of them
//! or in none, with the same value name (`--json FILE` everywhere, `--cores CORES`, `--sizes SIZES`, …).

use clap::CommandFactory;
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq)]
struct Flag {
    takes_value: bool,
    value_name: Option<String>,
}

fn walk(cmd: &clap::Command, path: &str, out: &mut BTreeMap<String, Vec<(String, Flag)>>) {
    for arg in cmd.get_arguments() {
        let Some(long) = arg.get_long() else { continue };
        if long == "help" || long == "version" {
            continue;
        }
        let flag = Flag {
            takes_value: arg.get_action().takes_values(),
            value_name: arg
                .get_value_names()
                .and_then(|v| v.first())
                .map(|s| s.to_string()),
        };
        out.entry(long.to_string())
            .or_default()
            .push((path.to_string(), flag));
    }
    for sub in cmd.get_subcommands() {
        if sub.is_hide_set() {
            continue;
        }
        walk(sub, &format!("{path} {}", sub.get_name()), out);
    }
}

#[test]
fn a_flag_name_means_one_thing_everywhere() {
    let mut flags = BTreeMap::new();
    walk(&macbench::cli::Cli::command(), "macbench", &mut flags);
    let mut problems = Vec::new();
    for (long, uses) in &flags {
        let first = &uses[0].1;
        for (path, flag) in &uses[1..] {
            if flag != first {
                problems.push(format!(
                    "--{long}: {} has {first:?}, {path} has {flag:?}",
                    uses[0].0
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // The shared vocabulary is really shared.
    for (long, at_least) in [
        ("json", 5),
        ("alg", 5),
        ("sizes", 4),
        ("cores", 4),
        ("duration", 3),
    ] {
        let n = flags.get(long).map_or(0, Vec::len);
        assert!(
            n >= at_least,
            "--{long} in {n} places, expected at least {at_least}"
        );
    }
}

#[test]
fn net_send_offers_only_what_works() {
    let mut flags = BTreeMap::new();
    walk(&macbench::cli::Cli::command(), "macbench", &mut flags);
    let netns: Vec<&str> = flags["netns"].iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(netns, ["macbench net"], "--netns is local-only");
}

/// `-q` and `-v` work on every command (global flags), as `--help` shows.
#[test]
fn quiet_and_verbose_are_offered_everywhere() {
    let mut cmd = macbench::cli::Cli::command();
    cmd.build();
    for sub in cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
    {
        let longs: Vec<&str> = sub.get_arguments().filter_map(|a| a.get_long()).collect();
        for flag in ["quiet", "verbose"] {
            assert!(longs.contains(&flag), "{} lacks --{flag}", sub.get_name());
        }
    }
}
