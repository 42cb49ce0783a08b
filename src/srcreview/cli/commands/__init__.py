"""One module per subcommand: `add_parser(subparsers)` and `run(args) -> int`, thin over the library."""
