#!/usr/bin/env python3
"""The public API keeps its convention (tecomp.h, THE CONVENTION).

Checks, on every tecomp_*.h at the repository root, what can be checked by
reading the headers:
  - every TECOMP_API declaration has a comment directly above it or on its
    own lines (a declaration with a body is a definition and is skipped);
  - no public function is named tc_create_* / tc_destroy_* / tc_*_new /
    tc_*_free (an object is made by tc_<object>_create and ended by
    tc_<object>_destroy; tc_cuda_malloc/tc_cuda_free are memory, not objects);
  - every tc_<object>_destroy takes the context first;
  - no public struct has a FILE * field (logging goes through the context's
    logger), a field whose name starts with '_', or a field its comment
    calls internal (what only the implementation keeps lives in its own
    structs: tc_expr's per-node state in _tc_expr_node, the emitter's
    identifiers in the context); typedef'd and plain `struct tc_x {...};`
    definitions alike.
Usage: check_api.py [repository root]; exits 1 listing every violation.
"""
import os
import re
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..')
ALLOWED_FREE = {'tc_cuda_free', 'tc_str_free'}  # memory, and the one value a caller holds


def public_part(text):
    """The header's declarations: everything before its implementation."""
    m = re.search(r'^#if defined\(TECOMP_IMPLEMENTATION\) && !defined\(TECOMP_[A-Z]+_IMPL_DONE\)', text, re.M)
    return text if m is None else text[:m.start()]


def declarations(lines):
    """(first line index, last line index, text) of each TECOMP_API declaration."""
    i = 0
    while i < len(lines):
        if lines[i].startswith('TECOMP_API '):
            j = i
            text = lines[i]
            while ';' not in lines[j] and '{' not in lines[j] and j + 1 < len(lines):
                j += 1
                text += ' ' + lines[j].strip()
            yield i, j, text
            i = j + 1
        else:
            i += 1


def has_comment(lines, first, last, text):
    if '/*' in text or '//' in text:
        return True
    above = lines[first - 1].strip() if first > 0 else ''
    return above.endswith('*/') or above.startswith('//')


def check_header(path, problems):
    with open(path, encoding='utf-8') as f:
        lines = public_part(f.read()).split('\n')
    name = os.path.basename(path)
    for first, last, text in declarations(lines):
        head = text.split('(')[0]
        if '{' in text.split(';')[0] and head.count('(') == 0 and not text.rstrip().endswith(';'):
            continue  # a definition in the public part (none today)
        m = re.search(r'\b(tc_[a-z0-9_]+)\s*\(', text)
        if not m:
            continue
        fn = m.group(1)
        where = '%s:%d: %s' % (name, first + 1, fn)
        if not has_comment(lines, first, last, text):
            problems.append(where + ': no comment directly above or on its line')
        if fn.startswith('tc_create_') or fn.startswith('tc_destroy_'):
            problems.append(where + ': named verb-first; the convention is tc_<object>_<verb>')
        if (fn.endswith('_new') or fn.endswith('_free')) and fn not in ALLOWED_FREE:
            problems.append(where + ': made by _create and ended by _destroy')
        if fn.endswith('_destroy') and fn != 'tc_context_destroy':
            args = text[text.index('(') + 1:]
            if not args.lstrip().startswith('tc_context *'):
                problems.append(where + ': a _destroy takes the context first')
    text = '\n'.join(lines)
    structs = [(m.group(1), m.group(2)) for m in re.finditer(r'typedef struct (tc_[a-z0-9_]+) \{(.*?)\n\} \1;', text, re.S)]
    structs += [(m.group(1), m.group(2)) for m in re.finditer(r'^struct (tc_[a-z0-9_]+) \{(.*?)\n\};', text, re.S | re.M)]
    for sname, sbody in structs:
        for c in re.findall(r'/\*.*?\*/|//[^\n]*', sbody, re.S):
            if re.search(r'\binternal\b', c, re.I):
                problems.append('%s: struct %s has a field its comment calls internal: %s' % (name, sname, ' '.join(c.split())[:80]))
        body = re.sub(r'/\*.*?\*/', '', sbody, flags=re.S)
        for field in body.split(';'):
            if re.search(r'\bFILE\s*\*', field):
                problems.append('%s: struct %s has a FILE * field (use the context logger)' % (name, sname))
            fm = re.search(r'\b(_[A-Za-z0-9_]*)\s*(\[[^]]*\])?\s*$', field.strip())
            if fm:
                problems.append('%s: struct %s has an internal field %s' % (name, sname, fm.group(1)))


def main():
    problems = []
    headers = sorted(h for h in os.listdir(ROOT) if re.match(r'tecomp(_[a-z]+)?\.h$', h))
    if not headers:
        print('check_api: no tecomp headers under ' + ROOT)
        return 1
    for h in headers:
        check_header(os.path.join(ROOT, h), problems)
    for p in problems:
        print(p)
    print('check_api: %d headers, %d problems' % (len(headers), len(problems)))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
