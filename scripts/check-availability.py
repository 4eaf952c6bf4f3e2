#!/usr/bin/env python3
"""Checks that the package's sources use no toolchain API newer than its platforms.

The toolchain's interface files for Swift, _Concurrency, Synchronization and Observation
(lib/swift/linux/NAME.swiftmodule/*.swiftinterface) carry each declaration's Apple availability
even on Linux. This collects the names declared there only with an availability above the
package's declared floor (Package.swift's `platforms:`, or `--floor iOS=16,macOS=13,...`),
adds the package's own top-level types and functions declared `@available` above it
(SimulatedRuntime, say), and fails when a Swift file of any target (under Sources/, Tests/
and every other folder a target's `path:` names) uses one outside a scope guarded by
`@available`, `if #available` or `guard #available` for at least that version:
`swift build --build-tests` on a Mac builds every one of those files for the floor, so a use
anywhere would stop it.

With `--floor` it lists every use that holds the package above that floor: the list to work
through before lowering `platforms:`.

It is a name-level check, and says what it cannot see:
- names only: a name that is also declared by an older API (an overload, a member of another
  type) is not flagged, so `Task.init(executorPreference:)` is found by its label, but a new
  overload of an old function is not; of the package's own declarations only the top-level
  types and functions declared `@available` are found, not a member (a method, a property);
- only those four modules: Foundation (Apple's has availability of its own; Linux has no
  interface file for it), Dispatch and the system C modules are not checked;
- not what the compiler itself requires of a deployment target (runtime support for a
  language feature, such as typed-throws function types in generic contexts): only building
  for each Apple platform shows those.

    scripts/check-availability.py [--floor iOS=16,macOS=13,tvOS=16,watchOS=9,visionOS=1]
"""

import os
import re
import subprocess
import sys

PLATFORMS = ["macOS", "iOS", "tvOS", "watchOS", "visionOS"]
# What SwiftPM assumes for a platform Package.swift does not name (swift-tools-version 6.0).
DEFAULT_FLOOR = {"macOS": (10, 13), "iOS": (12, 0), "tvOS": (12, 0), "watchOS": (4, 0),
                 "visionOS": (1, 0)}
MODULES = ["Swift", "_Concurrency", "Synchronization", "Observation"]
DECLARATION = re.compile(
    r"^\s*(?:@[\w.]+(?:\([^)]*\))?\s+)*(?:(?:public|open|final|static|class|mutating|nonmutating|"
    r"override|convenience|required|indirect|nonisolated|consuming|borrowing|dynamic)\s+)*"
    r"(struct|class|enum|protocol|actor|typealias|func|var|let|init|subscript|case|extension|macro)\b"
    r"\s*([A-Za-z_][\w.]*)?\s*(\()?")
AVAILABLE = re.compile(r"@available\(([^)]*)\)")
GUARD = re.compile(r"#available\(([^)]*)\)")


def version(text):
    parts = [int(p) for p in re.findall(r"\d+", text)[:2]]
    return tuple(parts + [0] * (2 - len(parts)))


def parse_available(arguments):
    """{platform: version} from an availability list; None for `*`-only or unavailable."""
    found = {}
    for item in arguments.split(","):
        item = item.strip()
        match = re.match(r"(macOS|iOS|tvOS|watchOS|visionOS)\s+([\d.]+)$", item)
        if match:
            found[match.group(1)] = version(match.group(2))
    return found


def above(requirement, floor):
    return any(platform in requirement and requirement[platform] > floor[platform]
               for platform in PLATFORMS)


def declared_floor():
    text = open("Package.swift", encoding="utf-8").read()
    floor = dict(DEFAULT_FLOOR)
    for platform, major, minor in re.findall(r"\.(macOS|iOS|tvOS|watchOS|visionOS)\(\.v(\d+)(?:_(\d+))?\)", text):
        floor[platform] = (int(major), int(minor or 0))
    return floor


def interface_names(floor):
    """Names declared only above the floor, each with the highest requirement seen."""
    swift = subprocess.run(["swift", "-print-target-info"], capture_output=True, text=True)
    resource = re.search(r'"runtimeResourcePath"\s*:\s*"([^"]+)"', swift.stdout)
    if not resource:
        sys.exit("check-availability: cannot find the toolchain's resources")
    newer, older = {}, set()
    for module in MODULES:
        directory = os.path.join(resource.group(1), "linux", f"{module}.swiftmodule")
        files = [f for f in os.listdir(directory)
                 if f.endswith(".swiftinterface") and ".private." not in f]
        if not files:
            sys.exit(f"check-availability: no interface file for {module} in {directory}")
        pending = {}
        container = []  # availability of the enclosing declarations, by brace depth
        names = []  # the enclosing type's name, by brace depth
        for line in open(os.path.join(directory, files[0]), encoding="utf-8"):
            for arguments in AVAILABLE.findall(line):
                requirement = parse_available(arguments)
                for platform, value in requirement.items():
                    pending[platform] = max(pending.get(platform, (0, 0)), value)
            match = DECLARATION.match(line)
            if match:
                kind, name, paren = match.group(1), match.group(2), match.group(3)
                inherited = {}
                for scope in container:
                    for platform, value in scope.items():
                        inherited[platform] = max(inherited.get(platform, (0, 0)), value)
                requirement = dict(inherited)
                for platform, value in pending.items():
                    requirement[platform] = max(requirement.get(platform, (0, 0)), value)
                keys = []
                owner = next((n for n in reversed(names) if n), None)
                if kind == "init" and owner:
                    # An initializer is known by its type and each label, since a defaulted
                    # parameter before it may be left out: Task(executorPreference:
                    parameters = line.split("init", 1)[1]
                    # A label may follow attributes: `@_inheritActorContext operation:`.
                    labels = re.findall(
                        r"[(,]\s*(?:@\w+(?:\([^)]*\))?\s+)*(\w+)(?:\s+\w+)?\s*:", parameters)
                    for label in labels:
                        if label != "_":
                            keys.append(f"{owner.split('.')[-1]}({label}:")
                elif kind != "extension" and name and not name.startswith("_"):
                    keys.append(name.split(".")[-1])
                for key in keys:
                    if above(requirement, floor):
                        current = newer.setdefault(key, {})
                        for platform, value in requirement.items():
                            current[platform] = max(current.get(platform, (0, 0)), value)
                    else:
                        older.add(key)
                opens = line.count("{") - line.count("}")
                is_type = kind in ("extension", "struct", "class", "enum", "protocol", "actor")
                if opens > 0:
                    container.append(requirement if is_type else {})
                    names.append(name if is_type else None)
                    for _ in range(opens - 1):
                        container.append({})
                        names.append(None)
                elif opens < 0:
                    del container[len(container) + opens:]
                    del names[len(names) + opens:]
                pending = {}
            else:
                opens = line.count("{") - line.count("}")
                for _ in range(max(opens, 0)):
                    container.append({})
                    names.append(None)
                if opens < 0:
                    del container[len(container) + opens:]
                    del names[len(names) + opens:]
                if line.strip() and not line.strip().startswith("@"):
                    pending = {}
    return {key: value for key, value in newer.items() if key not in older}


def source_roots():
    """Every folder holding a target's Swift files: Sources/ and Tests/ by SwiftPM's default,
    the first folder of each `path:` in Package.swift, and the example packages' own."""
    text = open("Package.swift", encoding="utf-8").read()
    roots = ["Sources", "Tests"]
    for path in re.findall(r'\bpath:\s*"([^"]+)"', text):
        root = path.split("/")[0]
        if root not in roots and os.path.isdir(root):
            roots.append(root)
    # The example packages build on this one and declare the same floor.
    for example in sorted(os.listdir("Examples")) if os.path.isdir("Examples") else []:
        for folder in ("Sources", "Tests"):
            if os.path.isdir(os.path.join("Examples", example, folder)):
                roots.append(os.path.join("Examples", example, folder))
    return roots


def swift_files(roots):
    for root in roots:
        for directory, _, files in sorted(os.walk(root)):
            for file in sorted(files):
                if file.endswith(".swift"):
                    yield os.path.join(directory, file)


def own_names(roots):
    """Every name the package's sources declare: a use of one of them is the package's own."""
    declared = set()
    pattern = re.compile(r"\b(?:func|var|let|case|struct|class|enum|protocol|typealias|actor)\s+(\w+)")
    for path in swift_files(roots):
        for line in open(path, encoding="utf-8"):
            declared.update(pattern.findall(strip(line)))
            # `let (seconds, attoseconds) = duration.components` names its own parts.
            for parts in re.findall(r"\b(?:let|var)\s*\(([^)]*)\)", strip(line)):
                declared.update(re.findall(r"\w+", parts))
    return declared


def strip(line):
    line = re.sub(r'"(?:[^"\\]|\\.)*"', '""', line)
    return line.split("//", 1)[0]


def merge(*requirements):
    merged = {}
    for requirement in requirements:
        for platform, value in requirement.items():
            merged[platform] = max(merged.get(platform, (0, 0)), value)
    return merged


GUARD_STATEMENT = re.compile(r"\bguard\s+#available\(([^)]*)\)")
TYPE_DECLARATION = re.compile(
    r"^\s*(?:@[\w.]+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|fileprivate|private|open|"
    r"final|indirect|nonisolated)\s+)*(?:class|struct|enum|protocol|actor|typealias)\s+(\w+)")
TOP_LEVEL_FUNCTION = re.compile(
    r"^(?:@[\w.]+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|fileprivate|private|"
    r"nonisolated)\s+)*func\s+(\w+)")
EXTENSION = re.compile(
    r"^\s*(?:@[\w.]+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|fileprivate|private)\s+)*"
    r"extension\s+([\w.]+)")


def scoped_lines(path, gated):
    """Each line of a Swift file, stripped of strings and comments, cut at its braces into
    segments, each with the availability it is guarded by: `@available` on a declaration covers
    its body, `if #available` its block (not the `else` block, even on the same line),
    `guard #available` the rest of the enclosing scope (not its own `else` block), and an
    extension of a type in `gated` (name to requirement) the extension's body."""
    guarded = []  # what each open brace is guarded by
    pending = {}  # attributes and conditions waiting for the brace they apply to
    parentheses = 0  # an attribute's arguments or a parameter list may span lines
    waiting = []  # (depth, requirement) of a `guard #available` whose `else` is still open
    for number, raw in enumerate(open(path, encoding="utf-8"), 1):
        line = strip(raw)
        statement = GUARD_STATEMENT.search(line)
        for arguments in AVAILABLE.findall(line):
            pending = merge(pending, parse_available(arguments))
        if not statement:
            for arguments in GUARD.findall(line):
                pending = merge(pending, parse_available(arguments))
        extension = EXTENSION.match(line)
        if extension:
            pending = merge(pending, gated.get(extension.group(1).split(".")[0], {}))
        rest = parse_available(statement.group(1)) if statement else {}
        # Braces in the order they come, so `} else {` closes the guarded block and opens one
        # that is not; what lies between two braces is guarded by the block it is in.
        enclosing = len(guarded)
        opened = False
        pieces = re.split(r"([{}])", line)
        yield number, pieces[0], merge(*guarded, pending, rest), len(guarded)
        for brace, piece in zip(pieces[1::2], pieces[2::2]):
            if brace == "{":
                guarded.append({} if opened else pending)
                opened = True
            elif guarded:
                guarded.pop()
            if piece.strip():
                yield number, piece, merge(*guarded), len(guarded)
        # `guard #available` covers what follows its `else` block, once that block closes.
        if rest and enclosing > 0:
            waiting.append((enclosing, rest))
        for depth, requirement in list(waiting):
            if len(guarded) < depth:
                waiting.remove((depth, requirement))
            elif len(guarded) == depth:
                guarded[depth - 1] = merge(guarded[depth - 1], requirement)
                waiting.remove((depth, requirement))
        # A line inside parentheses opened above (an attribute's or a parameter list's) is
        # part of what it continues, so what is pending waits for the brace after it.
        continuing = parentheses > 0
        parentheses = max(parentheses + line.count("(") - line.count(")"), 0)
        stripped = line.strip()
        if opened or (not continuing and parentheses == 0 and stripped
                      and not stripped.startswith("@")):
            pending = {}


def gated_types(roots, floor):
    """The package's own top-level types and functions declared with an availability above
    the floor (a nested type is named through the type around it, which this finds; a member
    function is not found)."""
    gated = {}
    for path in swift_files(roots):
        for _, line, scope, depth in scoped_lines(path, {}):
            match = TYPE_DECLARATION.match(line) or TOP_LEVEL_FUNCTION.match(line)
            if match and depth == 0 and above(scope, floor):
                gated[match.group(1)] = merge(gated.get(match.group(1), {}), scope)
    return gated


SIMPLE_NAME = re.compile(r"(?<!components\.)\b[A-Za-z_]\w*\b")
# A call's opening parenthesis with its callee (generic arguments allowed), a parenthesis of
# any other kind, and an argument label.
CALL_TOKEN = re.compile(
    r"(?P<callee>\b[A-Za-z_]\w*)\s*(?:<[^()]*>)?\s*\(|(?P<open>\()|(?P<close>\))"
    r"|(?P<label>\b[A-Za-z_]\w*)\s*:(?!:)")


def labelled_calls(segment, calls):
    """The `Callee(label:` keys of every argument label in `segment` that sits directly in a
    call's parentheses, whichever argument it is and on whichever line the call opened;
    `calls` is the stack of open parentheses (a callee name, or None), carried across lines."""
    keys = []
    for token in CALL_TOKEN.finditer(segment):
        if token.group("callee"):
            calls.append(token.group("callee"))
        elif token.group("open"):
            calls.append(None)
        elif token.group("close"):
            if calls:
                calls.pop()
        elif calls and calls[-1]:
            keys.append(f"{calls[-1]}({token.group('label')}:")
    return keys


def violations(names, floor, roots):
    own = own_names(roots)
    gated = gated_types(roots, floor)
    # The package's own names shadow a newer standard-library name; an initializer's key
    # (`Task(executorPreference:`) is found by its label whatever the package declares.
    simple = {key: value for key, value in names.items()
              if not key.endswith(":") and key not in own}
    simple.update(gated)
    labelled = {key: value for key, value in names.items() if key.endswith(":")}
    found = []
    for path in swift_files(roots):
        calls = []
        for number, line, scope, _ in scoped_lines(path, {**names, **gated}):
            effective = {p: max(floor[p], scope.get(p, (0, 0))) for p in PLATFORMS}
            keys = [key for key in SIMPLE_NAME.findall(line) if key in simple]
            keys += [key for key in labelled_calls(line, calls) if key in labelled]
            for key in dict.fromkeys(keys):
                requirement = simple.get(key) or labelled[key]
                if above(requirement, effective):
                    need = ", ".join(f"{p} {'.'.join(map(str, v))}"
                                     for p, v in sorted(requirement.items()))
                    found.append(f"{path}:{number}: `{key}` needs {need}")
    return found


def main():
    floor = declared_floor()
    if len(sys.argv) == 3 and sys.argv[1] == "--floor":
        for item in sys.argv[2].split(","):
            platform, value = item.split("=")
            floor[platform] = version(value)
    names = interface_names(floor)
    roots = source_roots()
    shown = ", ".join(f"{p} {'.'.join(map(str, floor[p]))}" for p in PLATFORMS)
    print(f"check-availability: floor {shown}; {len(names)} toolchain names are newer; "
          f"checking {', '.join(root + '/' for root in roots)}")
    found = violations(names, floor, roots)
    try:
        for line in found:
            print(line)
    except BrokenPipeError:
        sys.exit(1)
    if found:
        print(f"check-availability: {len(found)} uses newer than the floor, unguarded")
        sys.exit(1)
    print("check-availability: no unguarded use of a newer name")


if __name__ == "__main__":
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    main()
