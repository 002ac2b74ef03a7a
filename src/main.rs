fn main() {
    std::process::exit(macbench::cli::main());
}
