#!/usr/bin/env python3
"""Checks that every reference a reader of the repository may follow leads somewhere.

    scripts/check-references.py [ROOT]

ROOT is the repository to check (default: the one this script is in), so the checker can be
run on a fixture. It reads the text files under Sources/, Tests/, scripts/, Benchmarks/,
Fuzz/, Examples/, Migrations/, Schemas/ and .ci/, Package.swift, and every .md file of the
repository (README.md, CHANGELOG.md, Examples/**/README.md, the DocC articles), skipping
.build, .git and .swiftpm folders and this script (whose examples are not references). It
fails (exit 1, one `file:line: reference: problem` line each) when:

- a DocC link `<doc:Name>` or `<doc:Name#Anchor>` names no article `Name.md` in a `*.docc`
  catalog under Sources/ (`<doc:Module>` for a catalog's own module is accepted), or its anchor
  is no heading of that article. DocC's anchor is the heading's text with spaces turned into
  hyphens, compared case-sensitively as DocC does (a match that differs only in case is
  reported as such). In a `///` doc comment of a module that has a catalog of its own, and in
  an article, the link must resolve in that catalog: DocC builds each catalog alone, and
  scripts/docs.sh treats an unresolved link as an error;
- a relative Markdown link `[text](path)` or `[text](path#anchor)` in a .md file points at a
  file that does not exist, or at an anchor no heading of that Markdown file makes (GitHub's
  rule: the heading's text lowercased, punctuation other than hyphens and underscores dropped,
  spaces turned into hyphens, `-1`, `-2` added to repeats; an explicit `<a name>` or `id` also
  counts); in a DocC catalog an image named by its file name alone is found anywhere in the
  catalog, as DocC finds it. Reference-style definitions `[label]: path` are checked the same way;
- a path in backticks under Sources/, Tests/, scripts/, Benchmarks/, Migrations/, Schemas/,
  Examples/, Fuzz/ or .ci/ (such as `scripts/bench.sh`) does not exist, from the repository's
  root or from the package the file belongs to (an example package's own `Sources/...`). A glob
  (`Migrations/*.sql`) must match something; so must a path whose capitalised placeholder
  (`Migrations/NNNN_name.sql`, `Fuzz/Corpus/TARGET`) is read as a wildcard, which is tried only
  when the literal path does not exist;
- a file still cites the package's private design document by its name in capitals, which
  does not ship with the package, so no reader can follow it.

What it cannot see:
- symbol links (``Type/member``) and whether a `///` comment belongs to a public symbol: it
  holds every doc comment of a module with a catalog to the stricter rule, internal or not;
- anchors for headings whose text has punctuation are computed as described, which may not be
  what DocC renders: link to such headings at article level;
- anything in a Markdown file's fenced code or inline code but a path in backticks, HTML
  `<a href>` links, and absolute URLs (never fetched);
- GitHub's slugs are approximated: emphasis and inline code are stripped, but a heading made
  by HTML, or one with emoji, may slug differently;
- paths outside backticks, paths outside the folders named above, and references written in
  prose ("see the storage article");
- section numbers of any other document (`§3`): they are not references this script knows.
"""

import glob
import os
import re
import sys
import unicodedata
from urllib.parse import unquote

SCANNED_FOLDERS = ["Sources", "Tests", "scripts", "Benchmarks", "Fuzz", "Examples", "Migrations",
                   "Schemas", ".ci"]
SCANNED_ROOT_FILES = ["Package.swift", "README.md", "CHANGELOG.md"]
SKIPPED_FOLDERS = {".build", ".git", ".swiftpm"}
PATH_PREFIXES = ["Sources", "Tests", "scripts", "Benchmarks", "Migrations", "Schemas",
                 "Examples", "Fuzz", ".ci"]

DOC_LINK = re.compile(r"<doc:([^>#\s]+)(?:#([^>\s]*))?>")
# [text](target "title"), the text holding at most one level of brackets.
MARKDOWN_LINK = re.compile(
    r"(?<!!)\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+\"[^\"]*\")?\s*\)")
IMAGE_LINK = re.compile(r"!\[[^\]]*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_DEFINITION = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
BACKTICK_PATH = re.compile(
    r"`(?:\./)?((?:" + "|".join(re.escape(p) for p in PATH_PREFIXES) + r")/[^`\s]*)`")
# Spelled in two parts so that this file does not cite the document itself.
DOCUMENT_NAME = re.compile(r"\b" + "DES" + r"IGN\b")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
HTML_ANCHOR = re.compile(r"<a\s+[^>]*(?:name|id)\s*=\s*\"([^\"]+)\"", re.IGNORECASE)
# A placeholder is a run of capitals standing alone (`NNNN_name.sql`, `MODULE.doccarchive`), not
# the start of a name (`JSONParser.swift`, `UTF8.swift`, `SDKIntegration.swift`).
PLACEHOLDER = re.compile(r"(?<![A-Za-z0-9])[A-Z]{3,}(?![A-Za-z0-9])")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


class Problems:
    def __init__(self):
        self.lines = []
        self.kinds = {}

    def add(self, path, line, reference, problem, kind):
        self.lines.append(f"{path}:{line}: {reference}: {problem}")
        self.kinds[kind] = self.kinds.get(kind, 0) + 1


def read_text(path):
    """The file's text, or None for a binary or unreadable file."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def scanned_files(root):
    """Repository-relative paths of the files the checks read, sorted."""
    found = set()
    for name in SCANNED_ROOT_FILES:
        if os.path.isfile(os.path.join(root, name)):
            found.add(name)
    for directory, folders, files in os.walk(root):
        folders[:] = sorted(f for f in folders if f not in SKIPPED_FOLDERS)
        relative = os.path.relpath(directory, root)
        top = relative.split(os.sep)[0]
        for name in files:
            path = os.path.normpath(os.path.join(relative, name))
            if top in SCANNED_FOLDERS or name.endswith(".md"):
                found.add(path)
    return sorted(found)


def unfenced_lines(text):
    """(line number, line) for the lines of Markdown outside fenced code blocks."""
    fence = None
    for number, line in enumerate(text.split("\n"), 1):
        match = FENCE.match(line)
        if fence is None:
            if match:
                fence = match.group(1)[0] * len(match.group(1))
                continue
            yield number, line
        elif match and match.group(1).startswith(fence):
            fence = None


def without_inline_code(line):
    return re.sub(r"`+[^`]*`+", lambda m: " " * len(m.group(0)), line)


# MARK: DocC


class Catalogs:
    """The DocC catalogs under Sources/: their articles and each article's headings."""

    def __init__(self, root):
        self.catalogs = {}  # catalog path -> {article name: article path}
        for directory, folders, _ in os.walk(os.path.join(root, "Sources")):
            folders[:] = [f for f in folders if f not in SKIPPED_FOLDERS]
            for folder in folders:
                if folder.endswith(".docc"):
                    catalog = os.path.join(directory, folder)
                    articles = {}
                    for article in glob.glob(os.path.join(catalog, "**", "*.md"), recursive=True):
                        articles[os.path.splitext(os.path.basename(article))[0]] = article
                    self.catalogs[catalog] = articles
        self.headings = {}

    def module(self, catalog):
        return os.path.splitext(os.path.basename(catalog))[0]

    def catalog_of_module(self, module):
        for catalog in self.catalogs:
            if self.module(catalog) == module:
                return catalog
        return None

    def article_headings(self, article):
        if article not in self.headings:
            anchors = []
            for _, line in unfenced_lines(read_text(article) or ""):
                match = HEADING.match(line)
                if match and len(match.group(1)) > 1:  # the title is not an anchor
                    anchors.append(match.group(2).strip().replace(" ", "-"))
            self.headings[article] = anchors
        return self.headings[article]

    def resolve(self, name, anchor, within):
        """None when `<doc:name#anchor>` resolves (in the catalog `within`, or in any catalog
        when `within` is None); else what is wrong."""
        name = name.strip("/").split("/")[-1]
        catalogs = [within] if within else list(self.catalogs)
        modules = {self.module(c) for c in catalogs}
        articles = [self.catalogs[c][name] for c in catalogs if name in self.catalogs[c]]
        if not articles:
            if name in modules and not anchor:
                return None
            elsewhere = [c for c in self.catalogs if name in self.catalogs[c]]
            if within and elsewhere:
                return (f"the article is in another catalog ({os.path.basename(elsewhere[0])}), "
                        f"which {os.path.basename(within)} cannot link to; write its repo path "
                        f"in backticks instead")
            return "no article " + name + ".md in " + (
                os.path.basename(within) if within else "any .docc catalog under Sources/")
        if anchor is None:
            return None
        for article in articles:
            if anchor in self.article_headings(article):
                return None
        for article in articles:
            close = [h for h in self.article_headings(article) if h.lower() == anchor.lower()]
            if close:
                return f"no heading #{anchor} in {name}.md (case differs: #{close[0]})"
        known = ", ".join("#" + h for h in self.article_headings(articles[0])) or "none"
        return f"no heading #{anchor} in {name}.md (its headings: {known})"


def module_of_source(root, path, catalogs):
    """The catalog a Swift file's doc comments are built with, or None."""
    parts = path.split(os.sep)
    if len(parts) < 3 or parts[0] != "Sources" or not path.endswith(".swift"):
        return None
    # The deepest catalog whose folder holds the file: a module nested in another's folder
    # (the conformance kit in the testing product's) has its catalog beside its sources.
    best = None
    for catalog in catalogs.catalogs:
        owner = os.path.dirname(catalog)
        if os.path.abspath(os.path.join(root, path)).startswith(os.path.abspath(owner) + os.sep):
            if best is None or len(owner) > len(os.path.dirname(best)):
                best = catalog
    return best


def catalog_of_article(root, path, catalogs):
    for catalog in catalogs.catalogs:
        if os.path.abspath(os.path.join(root, path)).startswith(os.path.abspath(catalog) + os.sep):
            return catalog
    return None


# MARK: Markdown


def github_slug(text):
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links keep their text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.replace("`", "").replace("*", "")
    text = text.lower()
    kept = []
    for character in text:
        category = unicodedata.category(character)
        if character in "-_ " or category[0] in "LN" or category == "Mn":
            kept.append(character)
    return "".join(kept).replace(" ", "-")


def markdown_anchors(path, cache):
    if path not in cache:
        anchors = set()
        counts = {}
        text = read_text(path) or ""
        for _, line in unfenced_lines(text):
            match = HEADING.match(line)
            if match:
                slug = github_slug(match.group(2))
                seen = counts.get(slug, 0)
                counts[slug] = seen + 1
                anchors.add(slug if seen == 0 else f"{slug}-{seen}")
            anchors.update(HTML_ANCHOR.findall(line))
        cache[path] = anchors
    return cache[path]


def catalog_folder(path):
    """The `*.docc` folder `path` is in, or None."""
    folder = os.path.dirname(path)
    while folder and folder != os.path.dirname(folder):
        if folder.endswith(".docc"):
            return folder
        folder = os.path.dirname(folder)
    return None


def check_markdown_link(root, path, number, target, problems, anchor_cache):
    target = target.strip()
    if target.startswith("<") and target.endswith(">"):
        target = target[1:-1]
    if not target or re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", target) or target.startswith("//"):
        return False  # a URL (https:, mailto:, doc:), not a file of this repository
    file_part, _, anchor = target.partition("#")
    file_part = unquote(file_part)
    if file_part:
        base = root if file_part.startswith("/") else os.path.dirname(os.path.join(root, path))
        resolved = os.path.normpath(os.path.join(base, file_part.lstrip("/")))
        catalog = catalog_folder(os.path.join(root, path))
        if not os.path.exists(resolved) and catalog and "/" not in file_part:
            # Inside a DocC catalog a resource (an image) is named by its file name alone,
            # wherever in the catalog it is.
            for folder, _, files in os.walk(catalog):
                if file_part in files:
                    resolved = os.path.join(folder, file_part)
                    break
        if not os.path.exists(resolved):
            problems.add(path, number, f"({target})",
                         "no such file " + os.path.relpath(resolved, root), "Markdown links")
            return True
    else:
        resolved = os.path.join(root, path)
    if anchor and resolved.endswith(".md") and os.path.isfile(resolved):
        if unquote(anchor) not in markdown_anchors(resolved, anchor_cache):
            problems.add(path, number, f"({target})",
                         f"no heading makes the anchor #{anchor} in "
                         f"{os.path.relpath(resolved, root)}", "Markdown links")
    return True


# MARK: Paths in backticks


def package_root(root, path):
    """The folder of the nearest Package.swift above `path` (the repository's own at worst)."""
    directory = os.path.dirname(os.path.join(root, path))
    root = os.path.abspath(root)
    while os.path.abspath(directory).startswith(root):
        if os.path.isfile(os.path.join(directory, "Package.swift")):
            return directory
        if os.path.abspath(directory) == root:
            break
        directory = os.path.dirname(directory)
    return root


def path_exists(base, written):
    candidate = os.path.join(base, written)
    if any(c in written for c in "*?["):
        return bool(glob.glob(candidate))
    if os.path.exists(candidate):
        return True
    # A placeholder stands for the whole name it is part of, but the extension:
    # `Migrations/NNNN_name.sql` is `Migrations/*.sql`.
    parts = written.split("/")
    for index, part in enumerate(parts):
        if PLACEHOLDER.search(part):
            extension = os.path.splitext(part)[1]
            parts[index] = "*" + extension
    wildcard = "/".join(parts)
    return wildcard != written and bool(glob.glob(os.path.join(base, wildcard)))


def check_backtick_path(root, path, number, written, problems):
    written = re.sub(r":\d+(?::\d+)?$", "", written)  # file:line
    written = written.rstrip(".,;:)")
    bases = [root, package_root(root, path)]
    if not any(path_exists(base, written) for base in bases):
        problems.add(path, number, f"`{written}`", "no such file or folder", "repo paths")


# MARK: The run


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    if not os.path.isdir(root):
        print(f"error: {root} is not a folder", file=sys.stderr)
        return 2
    catalogs = Catalogs(root)
    problems = Problems()
    anchor_cache = {}
    counts = {"doc": 0, "markdown": 0, "path": 0}
    itself = os.path.abspath(__file__)
    files = [f for f in scanned_files(root) if os.path.abspath(os.path.join(root, f)) != itself]
    for path in files:
        text = read_text(os.path.join(root, path))
        if text is None:
            continue
        is_markdown = path.endswith(".md")
        article_catalog = catalog_of_article(root, path, catalogs) if is_markdown else None
        source_catalog = module_of_source(root, path, catalogs)
        lines = unfenced_lines(text) if is_markdown else enumerate(text.split("\n"), 1)
        for number, line in lines:
            bare = without_inline_code(line) if is_markdown else line
            for match in DOC_LINK.finditer(bare):
                counts["doc"] += 1
                name, anchor = match.group(1), match.group(2)
                within = article_catalog
                if source_catalog and line.lstrip().startswith("///"):
                    within = source_catalog
                problem = catalogs.resolve(name, anchor, within)
                if problem:
                    problems.add(path, number, match.group(0), problem, "DocC links")
            for match in BACKTICK_PATH.finditer(line):
                counts["path"] += 1
                check_backtick_path(root, path, number, match.group(1), problems)
            if is_markdown:
                targets = [m.group(1) for m in MARKDOWN_LINK.finditer(bare)]
                targets += [m.group(1) for m in IMAGE_LINK.finditer(bare)]
                definition = REFERENCE_DEFINITION.match(bare)
                if definition:
                    targets.append(definition.group(1))
                for target in targets:
                    if check_markdown_link(root, path, number, target, problems, anchor_cache):
                        counts["markdown"] += 1
        for number, line in enumerate(text.split("\n"), 1):
            if DOCUMENT_NAME.search(line):
                problems.add(path, number, DOCUMENT_NAME.search(line).group(0),
                             "cites a design document that does not ship; link the article "
                             "that states the rule (<doc:Name>) instead",
                             "design-document citations")
    total = sum(counts.values())
    if problems.lines:
        for line in problems.lines:
            print(line)
        sys.stdout.flush()  # the problems before the summary, which goes to stderr
        kinds = ", ".join(f"{count} {kind}" for kind, count in sorted(problems.kinds.items()))
        print(f"references: {len(problems.lines)} problems ({kinds}); {total} references "
              f"checked in {len(files)} files", file=sys.stderr)
        return 1
    print(f"references: {total} checked in {len(files)} files ({counts['doc']} DocC links, "
          f"{counts['markdown']} Markdown links, {counts['path']} repo paths), none broken")
    return 0


if __name__ == "__main__":
    sys.exit(main())
