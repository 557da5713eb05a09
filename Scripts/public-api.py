#!/usr/bin/env python3
"""Prints the PreviewLoop module's public API, one declaration a line, sorted: kind, qualified name,
and `async` / `throws(PreviewLoopError)` where they apply. Reads `swift-api-digester -dump-sdk` JSON
(Scripts/check-public-api.sh makes it from the debug build)."""
import json, re, sys

CONTAINERS = ('Struct', 'Class', 'Enum', 'Protocol', 'Extension')
lines = set()

def walk(node, parent):
    kind = node.get('declKind')
    name = node.get('printedName') or node.get('name')
    if node.get('isInternal'):
        return  # `package`: shared with the CLI and the tests, not public
    if kind and kind != 'Accessor' and not node.get('isImplicit') and node.get('moduleName') == 'PreviewLoop':
        usr = node.get('usr', '')
        marks = ''
        if kind in ('Func', 'Constructor'):
            if re.search(r'Ya(?=[A-Z]|$)', usr):
                marks += ' async'
            if node.get('throwing'):
                marks += ' throws(PreviewLoopError)' if 'YK' in usr else ' throws'
        lines.add(f"{kind} {parent + '.' if parent else ''}{name}{marks}")
    inner = (parent + '.' if parent else '') + name if kind in CONTAINERS else parent
    for child in node.get('children', []):
        if child.get('declKind'):
            walk(child, inner)

for child in json.load(open(sys.argv[1]))['ABIRoot']['children']:
    walk(child, '')
print('\n'.join(sorted(lines)))
