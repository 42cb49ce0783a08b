"""`srcreview rules [list|show ID|test|doc]`: the rule set, its examples, its generated reference.

`list` (default) shows id, severity, check kind and claim; `show ID` a rule's doc; `test`
runs every rule's examples against fixtures/vllm_snippets/ (exit 1 on any failure); `doc`
prints the rule reference in Markdown (docs/rules.md is this output).
"""

from __future__ import annotations

import argparse
import sys


def add_parser(sub) -> None:
    p = sub.add_parser("rules", help="list, document and test the review rules", description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("action", nargs="?", default="list", choices=("list", "show", "test", "doc"))
    p.add_argument("rule", nargs="?", help="rule id (show, test)")
    p.add_argument("--doc", action="store_true", help="same as the doc action")
    p.add_argument("--rules", metavar="DIR", help="rule directory (default: the shipped rules)")
    p.add_argument("--fixtures", metavar="DIR", help="fixture trees for `test` (default: fixtures/vllm_snippets)")
    p.set_defaults(run=run)


def run(args) -> int:
    from srcreview.cli.commands._multirev import load_rules_arg
    from srcreview.core.errors import UsageError

    rules = load_rules_arg(args)
    action = "doc" if args.doc else args.action
    if args.rule and not any(r.id == args.rule for r in rules):
        raise UsageError(f"no rule {args.rule!r} (see `srcreview rules`)")
    selected = [r for r in rules if not args.rule or r.id == args.rule]
    if action == "doc":
        from srcreview.rules.docs import render

        sys.stdout.write(render(rules))
        return 0
    if action == "show":
        if not args.rule:
            raise UsageError("rules show: give a rule id")
        from srcreview.rules.docs import render_rule

        sys.stdout.write(render_rule(selected[0]))
        return 0
    if action == "test":
        return _test(selected, args)
    width = max(len(r.id) for r in rules)
    for r in rules:
        print(f"{r.id:<{width}}  {r.severity:<6}  {r.check.kind:<15}  {r.claim}")
    return 0


def _test(rules, args) -> int:
    from pathlib import Path

    from srcreview.core.errors import UsageError
    from srcreview.core.resources import data_dir
    from srcreview.engine.examples import run_example

    fixtures = Path(args.fixtures) if args.fixtures else data_dir("rules").parent / "fixtures" / "vllm_snippets"
    if not fixtures.is_dir():
        raise UsageError("rules test: fixtures/vllm_snippets not found (run from a checkout, or pass --fixtures)")
    failed = 0
    for rule in rules:
        for example in rule.examples:
            problems = run_example(rule, example, fixtures)
            status = "ok" if not problems else "FAIL"
            print(f"{status:<4}  {rule.id}: {example.name}")
            for problem in problems:
                print(f"      {problem}")
            failed += bool(problems)
    print(f"{sum(len(r.examples) for r in rules) - failed} passed, {failed} failed")
    return 1 if failed else 0
