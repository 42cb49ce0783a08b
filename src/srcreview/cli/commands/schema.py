"""`srcreview schema review|json|registry`: the JSON Schema of an output format, for validators and CI."""

from __future__ import annotations

import argparse
import json
import sys


def add_parser(sub) -> None:
    p = sub.add_parser("schema", help="print the JSON Schema of an output format", description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("name", choices=("review", "json", "registry"),
                   help="review: the independent-review document (--format review); json: the output of "
                        "check --format json (schema_version, reviews, gate), open for additions; "
                        "registry: the source registry (--format registry, --registry FILE)")
    p.set_defaults(run=run)


def run(args) -> int:
    sys.stdout.write(json.dumps(schema(args.name), indent=2) + "\n")
    return 0


def schema(name: str) -> dict:
    if name == "review":
        from srcreview.report.review import SCHEMA

        return SCHEMA
    if name == "registry":
        from srcreview.report.registry import SCHEMA

        return SCHEMA
    from srcreview.report.json import schema as run_schema

    return run_schema()
