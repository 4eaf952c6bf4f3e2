#!/usr/bin/env python3
"""Checks that the package's sources use no standard-library API newer than its platforms.

The toolchain's interface files for Swift, _Concurrency and Synchronization
(lib/swift/linux/NAME.swiftmodule/*.swiftinterface) carry each declaration's Apple availability
even on Linux. This collects the names declared there only with an availability above the
package's declared floor (Package.swift's `platforms:`, or `--floor iOS=16,macOS=13,...`),
and fails when a source file under Sources/ uses one outside a scope guarded by `@available`
or `#available` for at least that version.

It is a name-level check, and says what it cannot see:
- names only: a name that is also declared by an older API (an overload, a member of another
  type) is not flagged, so `Task.init(executorPreference:)` is found by its label, but a new
  overload of an old function is not;
- only Swift, _Concurrency and Synchronization: Foundation, Observation, Dispatch and the
  system C modules are not checked (Apple's Foundation has availability of its own);
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
MODULES = ["Swift", "_Concurrency", "Synchronization"]
DECLARATION = re.compile(
    r"^\s*(?:@[\w.]+(?:\([^)]*\))?\s+)*(?:(?:public|open|final|static|class|mutating|nonmutating|"
    r"override|convenience|required|indirect|nonisolated|consuming|borrowing|dynamic)\s+)*"
    r"(struct|class|enum|protocol|actor|typealias|func|var|let|init|subscript|case|extension)\b"
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
                    for label in re.findall(r"[(,]\s*(\w+)(?:\s+\w+)?\s*:", parameters):
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


def own_names():
    """Every name the package's sources declare: a use of one of them is the package's own."""
    declared = set()
    pattern = re.compile(r"\b(?:func|var|let|case|struct|class|enum|protocol|typealias|actor)\s+(\w+)")
    for root, _, files in os.walk("Sources"):
        for file in files:
            if file.endswith(".swift"):
                for line in open(os.path.join(root, file), encoding="utf-8"):
                    declared.update(pattern.findall(strip(line)))
                    # `let (seconds, attoseconds) = duration.components` names its own parts.
                    for parts in re.findall(r"\b(?:let|var)\s*\(([^)]*)\)", strip(line)):
                        declared.update(re.findall(r"\w+", parts))
    return declared


def strip(line):
    line = re.sub(r'"(?:[^"\\]|\\.)*"', '""', line)
    return line.split("//", 1)[0]


def violations(names, floor):
    found = []
    own = own_names()
    patterns = {}
    for key in names:
        if key.endswith(":"):
            owner, label = key[:-1].split("(")
            patterns[key] = re.compile(r"\b" + re.escape(owner) + r"\s*\(\s*" + re.escape(label) + r"\s*:")
        elif key not in own:
            # A tuple's label (`duration.components.attoseconds`) is not the newer member.
            patterns[key] = re.compile(r"(?<!components\.)\b" + re.escape(key) + r"\b")
    for root, _, files in os.walk("Sources"):
        for file in sorted(files):
            if not file.endswith(".swift"):
                continue
            path = os.path.join(root, file)
            guarded = []  # availability of each open brace
            pending = {}
            for number, raw in enumerate(open(path, encoding="utf-8"), 1):
                line = strip(raw)
                for arguments in AVAILABLE.findall(raw) + GUARD.findall(raw):
                    for platform, value in parse_available(arguments).items():
                        pending[platform] = max(pending.get(platform, (0, 0)), value)
                scope = {}
                for level in guarded:
                    for platform, value in level.items():
                        scope[platform] = max(scope.get(platform, (0, 0)), value)
                for platform, value in pending.items():
                    scope[platform] = max(scope.get(platform, (0, 0)), value)
                effective = {p: max(floor[p], scope.get(p, (0, 0))) for p in PLATFORMS}
                for key, pattern in patterns.items():
                    if pattern.search(line) and above(names[key], effective):
                        need = ", ".join(f"{p} {'.'.join(map(str, v))}"
                                         for p, v in sorted(names[key].items()))
                        found.append(f"{path}:{number}: `{key}` needs {need}")
                opens = line.count("{") - line.count("}")
                for _ in range(max(opens, 0)):
                    guarded.append(pending if opens > 0 else {})
                    pending = {}
                if opens < 0:
                    del guarded[len(guarded) + opens:]
                if opens != 0 or (line.strip() and not line.strip().startswith("@")):
                    pending = {} if opens <= 0 else pending
    return found


def main():
    floor = declared_floor()
    if len(sys.argv) == 3 and sys.argv[1] == "--floor":
        for item in sys.argv[2].split(","):
            platform, value = item.split("=")
            floor[platform] = version(value)
    names = interface_names(floor)
    shown = ", ".join(f"{p} {'.'.join(map(str, floor[p]))}" for p in PLATFORMS)
    print(f"check-availability: floor {shown}; {len(names)} standard-library names are newer")
    found = violations(names, floor)
    try:
        for line in found:
            print(line)
    except BrokenPipeError:
        sys.exit(1)
    if found:
        print(f"check-availability: {len(found)} uses newer than the floor, unguarded")
        sys.exit(1)
    print("check-availability: no unguarded use of a newer standard-library name")


if __name__ == "__main__":
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    main()
