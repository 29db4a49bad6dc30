#!/usr/bin/env python3
"""Selects Swift Testing tests by tag for tools/test's stages (docs/testing.md).

Swift 6.3's `swift test` selects tests only by name (`--filter`/`--skip` take regular expressions over test IDs),
so this asks the built test bundle itself which tests carry which tags, and prints a regular expression of their IDs:

    tools/lib/test-stages.py regex TAG...  a regex for `swift test --filter`/`--skip` per TAG, one a line: every
                                           test carrying TAG, on itself or on a suite that holds it (exit 3 if
                                           none does); the bundle is listed once for all of them
    tools/lib/test-stages.py summary       how many tests carry each tag, and how many carry none

The bundle lists its tests with their own tags when run with `--list-tests`, the experimental event stream
(`--experimental-event-stream-output`, version 0) and `SWT_EXPERIMENTAL_EVENT_STREAM_FIELDS_ENABLED=1`; a test
inherits the tags of the suites above it, so a tag is set once, on the `@Suite` (Tests/TestSupport/Tags.swift).
TAG is the name in Swift (`endToEnd` or `.endToEnd`). The bundle must be built (`swift build --build-tests`).
"""

import json
import os
import subprocess
import sys
import tempfile


def bundle_path():
    bin_path = subprocess.run(["swift", "build", "--show-bin-path"], check=True, capture_output=True,
                              text=True).stdout.strip()
    bundles = sorted(name for name in os.listdir(bin_path) if name.endswith("PackageTests.xctest"))
    if len(bundles) != 1:
        sys.exit(f"test-stages: expected one *PackageTests.xctest in {bin_path}, found {bundles}; "
                 "run `swift build --build-tests` first")
    return os.path.join(bin_path, bundles[0])


def list_tests(bundle):
    """Every test and suite the bundle holds: {id: (kind, own tags)}."""
    with tempfile.TemporaryDirectory() as folder:
        stream = os.path.join(folder, "tests.jsonl")
        environment = dict(os.environ, SWT_EXPERIMENTAL_EVENT_STREAM_FIELDS_ENABLED="1")
        subprocess.run([bundle, "--testing-library", "swift-testing", "--list-tests",
                        "--experimental-event-stream-output", stream, "--experimental-event-stream-version", "0"],
                       check=True, stdout=subprocess.DEVNULL, env=environment)
        tests = {}
        with open(stream, encoding="utf-8") as lines:
            for line in lines:
                record = json.loads(line)
                if record.get("kind") != "test":
                    continue
                payload = record["payload"]
                tags = {tag.lstrip(".") for tag in payload.get("_tags", [])}
                tests[payload["id"]] = (payload["kind"], tags)
    if not tests:
        sys.exit("test-stages: the test bundle listed no Swift Testing tests")
    return tests


def ancestors(test_id):
    """`A.Suite/Inner/f()/File.swift:3:5` → `A.Suite`, `A.Suite/Inner`, `A.Suite/Inner/f()`."""
    parts = test_id.split("/")
    return ["/".join(parts[:count]) for count in range(1, len(parts))]


def effective_tags(tests):
    return {test_id: set().union(tags, *(tests[a][1] for a in ancestors(test_id) if a in tests))
            for test_id, (_, tags) in tests.items()}


def escape(text):
    """A literal for Swift's regex syntax (escapes only the metacharacters, which Swift accepts escaped)."""
    return "".join("\\" + ch if ch in "\\.^$|?*+()[]{}" else ch for ch in text)


def regex(tests, tag):
    # The outermost tests and suites that carry the tag themselves; selecting a suite selects what it holds.
    roots = sorted(test_id for test_id, (_, tags) in tests.items()
                   if tag in tags and not any(tag in tests[a][1] for a in ancestors(test_id) if a in tests))
    if not roots:
        return None
    return "^(?:" + "|".join(escape(test_id) for test_id in roots) + ")(?:/|$)"


def main(argv):
    if len(argv) >= 3 and argv[1] == "regex":
        tests = list_tests(bundle_path())
        patterns = []
        for tag in (name.lstrip(".") for name in argv[2:]):
            pattern = regex(tests, tag)
            if pattern is None:
                print(f"test-stages: no test carries the tag .{tag}", file=sys.stderr)
                return 3
            patterns.append(pattern)
        print("\n".join(patterns))
        return 0
    if len(argv) == 2 and argv[1] == "summary":
        tests = list_tests(bundle_path())
        functions = {test_id: tags for test_id, tags in effective_tags(tests).items() if tests[test_id][0] == "function"}
        counts = {}
        for tags in functions.values():
            for tag in tags or {"(none)"}:
                counts[tag] = counts.get(tag, 0) + 1
        for tag in sorted(counts):
            print(f"{counts[tag]:6d}  {tag}")
        print(f"{len(functions):6d}  tests in all")
        return 0
    print(__doc__.strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
