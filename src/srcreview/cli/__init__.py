"""The command line: parse arguments, call the library, render, return an exit code."""
